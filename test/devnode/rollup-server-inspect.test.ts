/**
 * Inspects through the devnode's two HTTP servers, with no chain: a client on the query interface's
 * /inspect (GET path and POST body) and the test playing the dapp on the rollup HTTP server, with the
 * record in an in-memory SQLite database: the payload the dapp gets, the Accepted/Rejected envelope with
 * its reports, outputs refused during an inspect, inspects queued between advances, 503 with no dapp;
 * and the pure helpers decodeInspectPath (the GET path's percent-decoding) and envelopeJson.
 */
import { describe, expect, it } from "vitest";
import { hexToUtf8, jsonToHex, utf8ToHex } from "../../common/hex.ts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { decodeInspectPath, envelopeJson } from "../../devnode/inspect.ts";
import { advanceOf, h, inspectGet, inspectOf, nextRequest, output, POLL, post, SENDER, useHarness } from "./rollup-server-support.ts";

useHarness();

describe("rollup HTTP server: inspect", () => {
  it("passes the percent-decoded GET path and the raw POST body to the dapp as hex, and returns its reports", async () => {
    const query = '{"type":"health","params":{"a b":"/x?"}}';
    const client = fetch(`${h.nodeUrl}/inspect/${encodeURIComponent(query)}`);
    const request = await nextRequest();
    expect(hexToUtf8(inspectOf(request).payload)).toBe(query);
    await output("/report", { payload: "0x0102" });
    await output("/report", { payload: "0x03" });
    const finished = nextRequest("reject");
    const response = await client;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "Accepted",
      exception_payload: null,
      reports: [{ payload: "0x0102" }, { payload: "0x03" }],
      processed_input_count: 0,
    } satisfies InspectEnvelope);

    const posted = fetch(`${h.nodeUrl}/inspect`, { method: "POST", body: query });
    expect(hexToUtf8(inspectOf(await finished).payload)).toBe(query);
    const after = nextRequest();
    expect(((await (await posted).json()) as InspectEnvelope).status).toBe("Accepted");
    h.addInput({ type: "x", params: {} });
    advanceOf(await after);
  });

  it("answers Rejected with the hex message and no reports when the dapp raises an exception", async () => {
    const client = inspectGet(encodeURIComponent('{"type":"nope","params":{}}'));
    await nextRequest();
    await output("/report", { payload: "0x01" });
    await output("/exception", { payload: utf8ToHex("unknown query type: nope") });
    const next = nextRequest();
    expect(await (await client).json()).toEqual({
      status: "Rejected",
      exception_payload: utf8ToHex("unknown query type: nope"),
      reports: [],
      processed_input_count: 0,
    });
    h.addInput({ type: "x", params: {} });
    advanceOf(await next);
  });

  it("refuses notices and vouchers during an inspect", async () => {
    const client = inspectGet("x");
    await nextRequest();
    expect((await output("/notice", { payload: "0x01" })).status).toBe(400);
    expect((await output("/voucher", { destination: SENDER, payload: "0x01" })).status).toBe(400);
    const next = nextRequest();
    expect(((await (await client).json()) as InspectEnvelope).reports).toEqual([]);
    h.addInput({ type: "x", params: {} });
    advanceOf(await next);
  });

  it("queues inspects between advances, alternating, and counts processed inputs", async () => {
    h.addInput({ type: "a", params: {} });
    h.addInput({ type: "b", params: {} });
    const first = await nextRequest();
    expect(advanceOf(first).metadata.input_index).toBe(0);
    const client = inspectGet("q");
    // Input 0 finishes; the inspect waiting since then goes before input 1.
    const second = await nextRequest("accept");
    expect(hexToUtf8(inspectOf(second).payload)).toBe("q");
    const third = await nextRequest("reject");
    expect(advanceOf(third).metadata.input_index).toBe(1);
    expect(((await (await client).json()) as InspectEnvelope).processed_input_count).toBe(1);
    // The status sent after the inspect was ignored; input 0 stays accepted.
    expect(h.store.getInput(0)?.status).toBe("ACCEPTED");
    const done = post("/finish", { status: "reject" });
    await expect.poll(() => h.store.getInput(1)?.status, POLL).toBe("REJECTED");
    await (await done).text();
    expect(h.model.processedInputCount).toBe(2);
  });

  it("answers 503 with a clear error when no dapp is connected", async () => {
    const response = await inspectGet("x");
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("NO_DAPP");
    expect(body.error.message).toMatch(/no dapp is connected/);
  });
});

describe("decodeInspectPath", () => {
  it.each([
    ["plain text stays as it is", "abc", "abc"],
    ["percent-escapes decode", "%7B%22a%22%3A1%7D", '{"a":1}'],
    ["encoded and literal slashes are both part of the payload", "a%2Fb/c", "a/b/c"],
    ["plus is not a space in a path", "a+b%20c", "a+b c"],
    ["UTF-8 escapes become their bytes", "%C3%BC", "ü"],
    ["a stray percent stays literal", "100%", "100%"],
    ["a percent without two hex digits stays literal", "%zz%4", "%zz%4"],
    ["lower-case hex digits decode", "%7b%7d", "{}"],
    ["a query string follows the decoded path as sent", "a%20c?x=%201", "a c?x=%201"],
  ])("%s", (_name, raw, expected) => {
    expect(decodeInspectPath(raw).toString("utf8")).toBe(expected);
  });
});

describe("envelopeJson", () => {
  it("writes exactly what JSON.stringify writes for the same envelope", () => {
    const cases: InspectEnvelope[] = [
      { status: "Accepted", exception_payload: null, reports: [], processed_input_count: 0 },
      { status: "Accepted", exception_payload: null, reports: [{ payload: "0x" }, { payload: jsonToHex({ a: "b\"c" }) }], processed_input_count: 12 },
      { status: "Rejected", exception_payload: utf8ToHex("no such query"), reports: [{ payload: "0x00ff" }], processed_input_count: 3 },
    ];
    for (const envelope of cases) {
      const written = envelopeJson(envelope.status, envelope.exception_payload, envelope.reports.map((r) => r.payload), envelope.processed_input_count);
      expect(written).toBe(JSON.stringify(envelope));
    }
  });
});
