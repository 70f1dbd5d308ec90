/**
 * The rollup model behind the devnode's two HTTP servers, driven over HTTP with no chain: the test plays
 * the dapp on the rollup HTTP server (/finish, /notice, /voucher, /report, /exception) and a client on
 * the query interface (/inspect, /graphql), with the record in an in-memory SQLite database.
 */
import { Agent, request as httpRequest } from "node:http";
import { connect, type AddressInfo, type Server } from "node:net";
import type { Address, Hex } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hexToUtf8, jsonToHex, utf8ToHex } from "../../common/hex.ts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { createGraphqlApi } from "../../devnode/graphql.ts";
import { RollupModel, type RollupRequest } from "../../devnode/model.ts";
import { createQueryServer, decodeInspectPath, envelopeJson } from "../../devnode/query-server.ts";
import { createRollupServer } from "../../devnode/rollup-server.ts";
import { DevnodeStore, type InputRecord } from "../../devnode/store.ts";

/** Waiting for the servers to act on a request: generous, the machine may be loaded. */
const POLL = { timeout: 10_000 };
const SENDER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;

interface Harness {
  store: DevnodeStore;
  model: RollupModel;
  rollupUrl: string;
  nodeUrl: string;
  /** Records an input as the chain follower does and queues it for the dapp. */
  addInput(payload: unknown): InputRecord;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startHarness(): Promise<Harness> {
  const store = new DevnodeStore(":memory:");
  const model = new RollupModel(store, {
    finishTimeoutMs: 300,
    dappWaitMs: 300,
    inspectTimeoutMs: 10_000,
    processedInputCount: 0,
  });
  const rollupServer = createRollupServer(model);
  const queryServer = createQueryServer(model, createGraphqlApi(store));
  const rollupUrl = await listen(rollupServer);
  const nodeUrl = await listen(queryServer);
  let next = 0;
  return {
    store,
    model,
    rollupUrl,
    nodeUrl,
    addInput(payload) {
      const input: InputRecord = {
        index: next++,
        status: "UNPROCESSED",
        msgSender: SENDER,
        payload: jsonToHex(payload),
        blockNumber: 10 + next,
        timestamp: 1_700_000_000 + next,
      };
      store.addInputs([input], BigInt(input.blockNumber + 1));
      model.enqueueAdvance(input);
      return input;
    },
    async close() {
      model.close();
      for (const server of [rollupServer, queryServer]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      store.close();
    },
  };
}

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

// ---- the fake dapp ----

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${h.rollupUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** `/finish` until a request arrives (202 answers are retried, as a dapp does). */
async function nextRequest(status: "accept" | "reject" = "accept"): Promise<RollupRequest> {
  for (;;) {
    const response = await post("/finish", { status });
    if (response.status === 200) return (await response.json()) as RollupRequest;
    expect(response.status).toBe(202);
    await response.text();
  }
}

async function output(path: "/notice" | "/voucher" | "/report" | "/exception", body: unknown): Promise<Response> {
  const response = await post(path, body);
  return response;
}

async function inspectGet(rawPath: string): Promise<Response> {
  return fetch(`${h.nodeUrl}/inspect/${rawPath}`);
}

async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: T; errors?: { message: string }[] }> {
  const response = await fetch(`${h.nodeUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: T; errors?: { message: string }[] };
}

function advanceOf(request: RollupRequest): Extract<RollupRequest, { request_type: "advance_state" }>["data"] {
  if (request.request_type !== "advance_state") throw new Error(`expected an advance, got ${request.request_type}`);
  return request.data;
}

function inspectOf(request: RollupRequest): Extract<RollupRequest, { request_type: "inspect_state" }>["data"] {
  if (request.request_type !== "inspect_state") throw new Error(`expected an inspect, got ${request.request_type}`);
  return request.data;
}

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
    // (dapp/app.ts): the server must act on them in the order they were written.
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

describe("GraphQL", () => {
  async function processAll(count: number): Promise<void> {
    for (let i = 0; i < count; i++) h.addInput({ type: "k", params: { i } });
    for (let i = 0; i < count; i++) {
      const advance = advanceOf(await nextRequest());
      const index = advance.metadata.input_index;
      if (index % 2 === 0) await output("/notice", { payload: jsonToHex({ n: index }) });
      await output("/report", { payload: jsonToHex({ r: index }) });
    }
    const last = post("/finish", { status: "accept" });
    await expect.poll(() => h.model.processedInputCount, POLL).toBe(count);
    await (await last).text();
  }

  it("serves input(index) with the v1 field names and its notices and reports", async () => {
    await processAll(3);
    const { data } = await graphql<{ input: Record<string, unknown> }>(
      `query($i: Int!) { input(index: $i) {
          index status msgSender timestamp blockNumber payload
          notices { totalCount edges { cursor node { index payload input { index } } } }
          reports { totalCount edges { node { index payload } } }
          vouchers { totalCount }
      } }`,
      { i: 2 },
    );
    const input = h.store.getInput(2) as InputRecord;
    expect(data?.input).toEqual({
      index: 2,
      status: "ACCEPTED",
      // As the v1 graphql-server writes them: lower-case hex, BigInt values as strings, base64 cursors.
      msgSender: SENDER.toLowerCase(),
      timestamp: String(input.timestamp),
      blockNumber: String(input.blockNumber),
      payload: input.payload,
      notices: { totalCount: 1, edges: [{ cursor: "MA==", node: { index: 0, payload: jsonToHex({ n: 2 }), input: { index: 2 } } }] },
      reports: { totalCount: 1, edges: [{ node: { index: 0, payload: jsonToHex({ r: 2 }) } }] },
      vouchers: { totalCount: 0 },
    });
  });

  it("answers a missing input with a GraphQL error", async () => {
    const { data, errors } = await graphql(`{ input(index: 7) { status } }`);
    expect(data ?? null).toBeNull();
    expect(errors?.[0]?.message).toBe("input not found: 7");
  });

  it("answers a repeated query text the same way each time, a bad one too (documents are parsed and validated once)", async () => {
    const invalid = `{ input(index: 0) { nosuchfield } }`;
    const unparsable = `{ input(index: 0) { status }`;
    for (let i = 0; i < 3; i++) {
      expect((await graphql(invalid)).errors?.[0]?.message).toBe('Cannot query field "nosuchfield" on type "Input".');
      expect((await graphql(unparsable)).errors?.[0]?.message).toMatch(/^Syntax Error: Expected Name, found <EOF>/);
      expect((await graphql(`{ input(index: 7) { status } }`)).errors?.[0]?.message).toBe("input not found: 7");
    }
  });

  it("pages inputs and top-level notices and reports with first/after and last/before", async () => {
    await processAll(5);
    type Page = { totalCount: number; edges: { cursor: string; node: { index: number } }[]; pageInfo: Record<string, unknown> };
    const page = async (field: string, args: string): Promise<Page> => {
      const { data, errors } = await graphql<Record<string, Page>>(
        `{ ${field}${args === "" ? "" : `(${args})`} { totalCount edges { cursor node { index ${field === "inputs" ? "" : "input { index }"} } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`,
      );
      expect(errors).toBeUndefined();
      return (data as Record<string, Page>)[field] as Page;
    };
    const firstTwo = await page("inputs", "first: 2");
    expect(firstTwo.totalCount).toBe(5);
    expect(firstTwo.edges.map((e) => e.node.index)).toEqual([0, 1]);
    expect(firstTwo.pageInfo).toEqual({ startCursor: "MA==", endCursor: "MQ==", hasNextPage: true, hasPreviousPage: false });
    const nextTwo = await page("inputs", `first: 2, after: "MQ=="`);
    expect(nextTwo.edges.map((e) => e.node.index)).toEqual([2, 3]);
    const lastTwo = await page("inputs", `last: 2, before: "NA=="`);
    expect(lastTwo.edges.map((e) => e.node.index)).toEqual([2, 3]);
    expect(lastTwo.pageInfo).toEqual({ startCursor: "Mg==", endCursor: "Mw==", hasNextPage: true, hasPreviousPage: true });
    // A cursor the v1 node made works here too, and a decimal one (this devnode's old form) is refused.
    expect((await page("inputs", `first: 1, after: "Mg=="`)).edges.map((e) => e.node.index)).toEqual([3]);
    const decimal = await graphql(`{ inputs(after: "2") { totalCount } }`);
    expect(decimal.errors?.[0]?.message).toMatch(/invalid cursor in after: 2/);
    const filtered = await page("inputs", "where: { indexGreaterThan: 1, indexLowerThan: 4 }");
    expect(filtered.edges.map((e) => e.node.index)).toEqual([2, 3]);

    const notices = await page("notices", "");
    expect(notices.totalCount).toBe(3);
    const noticeInputs = notices.edges.map((e) => (e.node as unknown as { input: { index: number } }).input.index);
    expect(noticeInputs).toEqual([0, 2, 4]);
    const afterLast = await page("notices", `after: "${notices.pageInfo["endCursor"] as string}"`);
    expect(afterLast.edges).toEqual([]);
    expect(afterLast.pageInfo["hasNextPage"]).toBe(false);
    expect((await page("reports", "first: 1")).totalCount).toBe(5);

    const bad = await graphql(`{ inputs(after: "nope") { totalCount } }`);
    expect(bad.errors?.[0]?.message).toMatch(/invalid cursor/);
  });

  it("finds single outputs by input and index", async () => {
    await processAll(1);
    const { data } = await graphql<{ notice: { payload: Hex }; report: { payload: Hex } }>(
      `{ notice(inputIndex: 0, noticeIndex: 0) { payload } report(inputIndex: 0, reportIndex: 0) { payload } }`,
    );
    expect(data).toEqual({ notice: { payload: jsonToHex({ n: 0 }) }, report: { payload: jsonToHex({ r: 0 }) } });
    const missing = await graphql(`{ voucher(inputIndex: 0, voucherIndex: 0) { payload } }`);
    expect(missing.errors?.[0]?.message).toMatch(/voucher not found/);
  });
});

describe("query interface", () => {
  it("answers unknown paths with 404 and reports its state on /healthz", async () => {
    expect((await fetch(`${h.nodeUrl}/nowhere`)).status).toBe(404);
    const health = (await (await fetch(`${h.nodeUrl}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", state: "idle", processedInputCount: 0 });
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
