/**
 * The rollup model behind the devnode's two HTTP servers, driven over HTTP with no chain: the test plays
 * the dapp on the rollup HTTP server (/finish, /notice, /voucher, /report, /exception) through advances,
 * with the record in an in-memory SQLite database: inputs handed out with their v1 metadata, outputs
 * recorded on accept, discarded on reject or exception, malformed calls refused, pipelined calls acted on
 * in order, and an input handed out again when the dapp dies. Inspects are in
 * rollup-server-inspect.test.ts, the query interface's GraphQL in rollup-server-query.test.ts.
 */
import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { utf8ToHex } from "../../common/hex.ts";
import type { RollupRequest } from "../../devnode/model.ts";
import { advanceOf, h, nextRequest, output, POLL, post, SENDER, useHarness } from "./rollup-server-support.ts";

useHarness();

describe("rollup HTTP server: advance", () => {
  it("answers 202 'no rollup request available' when there is nothing to do", async () => {
    const response = await post("/finish", { status: "accept" });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("no rollup request available");
  });

  it("hands out an input with v1 metadata and records notices, vouchers and reports on accept", async () => {
    const input = h.addInput({ type: "hello", params: {} });
    const advance = advanceOf(await nextRequest());
    expect(advance).toEqual({
      metadata: {
        msg_sender: SENDER,
        epoch_index: 0,
        input_index: 0,
        block_number: input.blockNumber,
        timestamp: input.timestamp,
      },
      payload: input.payload,
    });
    expect(await (await output("/notice", { payload: "0x01" })).json()).toEqual({ index: 0 });
    expect(await (await output("/notice", { payload: "0x02" })).json()).toEqual({ index: 1 });
    expect(await (await output("/voucher", { destination: SENDER, payload: "0xabcd" })).json()).toEqual({ index: 0 });
    expect((await output("/report", { payload: "0x03" })).status).toBe(200);
    const waiting = nextRequest();
    await expect.poll(() => h.store.getInput(0)?.status, POLL).toBe("ACCEPTED");
    expect(h.store.pageOutputs("notice", 0, 10, 0).map((o) => o.payload)).toEqual(["0x01", "0x02"]);
    expect(h.store.pageOutputs("voucher", 0, 10, 0)).toEqual([
      { kind: "voucher", inputIndex: 0, index: 0, payload: "0xabcd", destination: SENDER },
    ]);
    expect(h.store.pageOutputs("report", 0, 10, 0).map((o) => o.payload)).toEqual(["0x03"]);
    h.addInput({ type: "next", params: {} });
    expect(advanceOf(await waiting).metadata.input_index).toBe(1);
  });

  it("discards notices and vouchers of a rejected input but keeps its reports", async () => {
    h.addInput({ type: "bad", params: {} });
    h.addInput({ type: "after", params: {} });
    await nextRequest();
    await output("/notice", { payload: "0x01" });
    await output("/voucher", { destination: SENDER, payload: "0x02" });
    await output("/report", { payload: utf8ToHex('{"error":{"code":"UNKNOWN_KIND","message":"x"}}') });
    expect(advanceOf(await nextRequest("reject")).metadata.input_index).toBe(1);
    expect(h.store.getInput(0)?.status).toBe("REJECTED");
    expect(h.store.countOutputs("notice")).toBe(0);
    expect(h.store.countOutputs("voucher")).toBe(0);
    expect(h.store.countOutputs("report", 0)).toBe(1);
  });

  it("marks an input EXCEPTION on /exception, keeps its reports, and ignores the next finish's status", async () => {
    h.addInput({ type: "boom", params: {} });
    h.addInput({ type: "after", params: {} });
    await nextRequest();
    await output("/notice", { payload: "0x01" });
    await output("/report", { payload: "0x02" });
    expect((await output("/exception", { payload: utf8ToHex("it broke") })).status).toBe(200);
    expect(h.store.getInput(0)?.status).toBe("EXCEPTION");
    expect(h.store.countOutputs("notice")).toBe(0);
    expect(h.store.countOutputs("report", 0)).toBe(1);
    // The finish that follows an exception has nothing to finish: its "reject" must not touch input 1.
    expect(advanceOf(await nextRequest("reject")).metadata.input_index).toBe(1);
  });

  it("ignores the status of the first finish", async () => {
    h.addInput({ type: "first", params: {} });
    advanceOf(await nextRequest("reject"));
    const waiting = post("/finish", { status: "accept" });
    await expect.poll(() => h.store.getInput(0)?.status, POLL).toBe("ACCEPTED");
    await (await waiting).text();
  });

  it("refuses outputs with no request in progress and malformed bodies", async () => {
    const idle = await output("/notice", { payload: "0x01" });
    expect(idle.status).toBe(400);
    expect(await idle.text()).toMatch(/no advance in progress/);
    expect((await output("/report", { payload: "0x01" })).status).toBe(400);
    expect((await output("/exception", { payload: "0x01" })).status).toBe(400);
    h.addInput({ type: "x", params: {} });
    await nextRequest();
    expect((await output("/notice", { payload: "0x1" })).status).toBe(400);
    expect((await output("/notice", { payload: "zz" })).status).toBe(400);
    expect((await output("/voucher", { destination: "0x12", payload: "0x" })).status).toBe(400);
    expect((await post("/finish", { status: "maybe" })).status).toBe(400);
    expect((await fetch(`${h.rollupUrl}/finish`, { method: "POST", body: "not json" })).status).toBe(400);
    expect((await post("/nowhere", {})).status).toBe(404);
  });

  it("reads pipelined requests in order: outputs written in one segment with the /finish count for the input", async () => {
    // The dapp writes its outputs and the /finish behind them without waiting for the outputs' answers
    // (dapp/transports/http.ts): the server must act on them in the order they were written.
    h.addInput({ type: "pipelined", params: {} });
    h.addInput({ type: "after", params: {} });
    const socket = connect({ host: "127.0.0.1", port: Number(new URL(h.rollupUrl).port) });
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (received += chunk));
    const requestBytes = (path: string, body: unknown): string => {
      const text = JSON.stringify(body);
      return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    };
    try {
      socket.write(requestBytes("/finish", { status: "accept" }));
      await expect.poll(() => received.includes('"input_index":0'), POLL).toBe(true);
      received = "";
      socket.write(
        requestBytes("/notice", { payload: "0x01" }) +
          requestBytes("/report", { payload: "0x02" }) +
          requestBytes("/notice", { payload: "0x03" }) +
          requestBytes("/finish", { status: "accept" }),
      );
      // Three answers in order, then the next input as the /finish's answer.
      await expect.poll(() => received.includes('"input_index":1'), POLL).toBe(true);
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      expect(statuses).toEqual(["200", "200", "200", "200"]);
      expect(received.indexOf('{"index":0}')).toBeLessThan(received.indexOf('{"index":1}'));
      expect(h.store.getInput(0)?.status).toBe("ACCEPTED");
      expect(h.store.pageOutputs("notice", 0, 10).map((o) => o.payload)).toEqual(["0x01", "0x03"]);
      expect(h.store.pageOutputs("report", 0, 10).map((o) => o.payload)).toEqual(["0x02"]);
    } finally {
      socket.destroy();
    }
  });

  it("hands an input out again when the dapp dies in the middle of it, without the dead attempt's outputs", async () => {
    h.addInput({ type: "long", params: {} });
    // The dying dapp: its own connection, which the test then closes as a killed process would.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const raw = (path: string, body: unknown): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${h.rollupUrl}${path}`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject);
        req.end(JSON.stringify(body));
      });
    const first = await raw("/finish", { status: "accept" });
    expect(advanceOf(JSON.parse(first.text) as RollupRequest).metadata.input_index).toBe(0);
    expect((await raw("/notice", { payload: "0xdead" })).status).toBe(200);
    agent.destroy();
    await expect.poll(() => h.model.status().dappConnected, POLL).toBe(false);

    // The restarted dapp's first finish gets the same input, from scratch.
    expect(advanceOf(await nextRequest("accept")).metadata.input_index).toBe(0);
    await output("/notice", { payload: "0xbeef" });
    const waiting = post("/finish", { status: "accept" });
    await expect.poll(() => h.store.getInput(0)?.status, POLL).toBe("ACCEPTED");
    expect(h.store.pageOutputs("notice", 0, 10).map((o) => o.payload)).toEqual(["0xbeef"]);
    await (await waiting).text();
  });
});
