/**
 * The api's read pool (api/rollup/read-pool.ts) over real HTTP endpoints that behave as a sick reader
 * does: its status says serving while its inspects fail. Reads go to the healthy reader, and the pool
 * shows the sick one down, with why, for as long as reads leave it alone, whatever its status says.
 * Then every way a reader can fail a read (v2's `Failed`, v1's `TimeLimitExceeded`, a reset connection, a
 * 503, a refused connection, a timeout, a body that is no answer) moves the read on to the next reader,
 * counted in the api's metrics with its reason; the dapp's own answer (a rejection, an exception) does not,
 * and from the node alone an inspect it could not complete is 503 ROLLUP_UNAVAILABLE, not a rejection.
 * (Real validators, killed and lagging, are test/api/readers.e2e.test.ts.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { ApiError } from "../../api/errors.ts";
import { createApiMetrics } from "../../api/metrics.ts";
import { RollupReader, type ReadFailureReason } from "../../api/rollup/inspect.ts";
import { ReadPool, type ReaderView } from "../../api/rollup/read-pool.ts";
import { WriteMark } from "../../api/rollup/write-mark.ts";
import { closedPort } from "../support/api-fixtures.ts";
import { until } from "../support/until.ts";

interface Endpoint {
  url: string;
  inspects: number;
  server: Server;
}

type Answer = (res: ServerResponse, req: IncomingMessage) => void;

function json(status: number, body: unknown): Answer {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
}

/** The health query's answer at 5 inputs, in a shape both a v1 and a v2 reader accept. */
const HEALTHY = json(200, { status: "Accepted", exception_payload: null, reports: [{ payload: jsonToHex({ processed_inputs: 5 }) }], processed_input_count: 5 });

/** An endpoint: GET /reader says serving at 5 inputs; an inspect (GET or POST, v1 or v2) gets `answer`. */
async function endpoint(answer: Answer): Promise<Endpoint> {
  const state = { inspects: 0 };
  const server = createServer((req, res) => {
    if (req.url === "/reader") return json(200, { serving: true, stale: false, reason: null, processedInputCount: 5 })(res, req);
    state.inspects += 1;
    // The body read first, as a node does before it answers.
    req.resume();
    req.once("end", () => answer(res, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    get inspects() {
      return state.inspects;
    },
  };
}

async function close(e: Endpoint): Promise<void> {
  // A hung answer holds its connection: end it, or close() waits for it.
  e.server.closeAllConnections();
  await new Promise<void>((resolve) => e.server.close(() => resolve()));
}

let sick: Endpoint;
let healthy: Endpoint;
let node: Endpoint;

beforeAll(async () => {
  [sick, healthy, node] = [await endpoint(json(500, { error: { code: "BROKEN", message: "the dapp is gone" } })), await endpoint(HEALTHY), await endpoint(HEALTHY)];
});

afterAll(async () => {
  for (const e of [sick, healthy, node]) await close(e);
});

describe("the read pool", () => {
  it("skips a reader whose status says serving while its inspects fail, and shows it down until its rest is over", async () => {
    const outcomes: string[] = [];
    const pool = new ReadPool([new RollupReader({ rollupUrl: sick.url }), new RollupReader({ rollupUrl: healthy.url })], new RollupReader({ rollupUrl: node.url }), new WriteMark(), {
      waitMs: 1_000,
      pollMs: 20,
      onRead: (target, outcome) => outcomes.push(`${target === sick.url ? "sick" : target === healthy.url ? "healthy" : target} ${outcome}`),
    });
    pool.start();
    try {
      // Both readers take turns to go first: within two reads the sick one is tried, fails, and the healthy one answers.
      for (let i = 0; i < 2; i++) expect(await pool.query("health")).toEqual({ processed_inputs: 5 });
      expect(outcomes).toContain("sick failed");
      expect(node.inspects).toBe(0);
      const sickView = (): ReaderView | undefined => pool.readers().find((r) => r.url === sick.url);
      // Status polls keep saying "serving" meanwhile; the pool's view does not.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sickView()).toEqual({ url: sick.url, kind: "reader", health: "down", processedInputCount: 5, reason: expect.stringContaining("HTTP 500: BROKEN (the dapp is gone)") });
      expect(pool.readers().find((r) => r.url === healthy.url)).toMatchObject({ health: "serving", reason: null });
      // While it rests, reads do not try it.
      const tried = sick.inspects;
      for (let i = 0; i < 4; i++) await pool.query("health");
      expect(sick.inspects).toBe(tried);
      // Its rest over (2 s), its status is what the pool shows again, and reads try it again.
      await until(() => sickView()?.health, (health) => health === "serving", "the sick reader's rest to end", 10_000);
      for (let i = 0; i < 2; i++) await pool.query("health");
      expect(sick.inspects).toBeGreaterThan(tried);
    } finally {
      await pool.stop();
    }
  });
});

const APPLICATION = "0x00000000000000000000000000000000000000aa";
const V2 = { v2Application: APPLICATION } as const;
const HEALTH = { processed_inputs: 5 };

/** A reader whose every inspect fails one way, each with the reason the pool counts and what the pool says of it. */
const FAILURES: { name: string; rollups: "v1" | "v2"; answer: Answer | "refused"; reason: ReadFailureReason; says: RegExp }[] = [
  {
    name: "v2 `Failed` (its dapp killed mid-inspect)",
    rollups: "v2",
    answer: json(200, { status: "Failed", error: "The node could not complete the inspection", reports: [], processed_input_count: 5 }),
    reason: "failed",
    says: /^Failed: The node could not complete the inspection$/,
  },
  { name: "v1 `TimeLimitExceeded`", rollups: "v1", answer: json(200, { status: "TimeLimitExceeded", exception_payload: null, reports: [], processed_input_count: 5 }), reason: "failed", says: /^TimeLimitExceeded$/ },
  { name: "a connection reset before any answer", rollups: "v2", answer: (_res, req) => req.socket.resetAndDestroy(), reason: "reset", says: /^fetch failed: / },
  {
    name: "503 Machine not ready",
    rollups: "v2",
    answer: (res) => {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("Machine not ready\n");
    },
    reason: "5xx",
    says: /^HTTP 503$/,
  },
  { name: "v1 503 DAPP_GONE (its dapp killed mid-inspect)", rollups: "v1", answer: json(503, { error: { code: "DAPP_GONE", message: "the dapp disconnected during the inspect" } }), reason: "5xx", says: /^HTTP 503: DAPP_GONE/ },
  { name: "a refused connection", rollups: "v2", answer: "refused", reason: "refused", says: /ECONNREFUSED/ },
  { name: "no answer within the reader's timeout", rollups: "v1", answer: () => undefined, reason: "timeout", says: /timeout/i },
  {
    name: "a body that is no inspect answer",
    rollups: "v2",
    answer: (res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>gateway</html>");
    },
    reason: "malformed",
    says: /^not JSON: /,
  },
];

/** The dapp's own answers: final, whichever reader gave them. */
const FINAL: { name: string; rollups: "v1" | "v2"; body: unknown; error: { code: string; message: string } }[] = [
  {
    name: "v2 `Exception` (the dapp refused the query: the v2 node's word for it)",
    rollups: "v2",
    body: { status: "Exception", error: "The machine raised an exception while inspecting", exception_data: utf8ToHex("schema not found: 0x01"), reports: [], processed_input_count: 5 },
    error: { code: "SCHEMA_NOT_FOUND", message: "Provider schema not found" },
  },
  { name: "v1 `Rejected`", rollups: "v1", body: { status: "Rejected", exception_payload: utf8ToHex("attestation not found: 0x02"), reports: [], processed_input_count: 5 }, error: { code: "ATTESTATION_NOT_FOUND", message: "Attestation not found" } },
  { name: "v2 `Rejected`", rollups: "v2", body: { status: "Rejected", reports: [], processed_input_count: 5 }, error: { code: "INTERNAL_ERROR", message: "The rollup rejected a query: Rejected" } },
  { name: "v2 `MachineHalted` (the dapp halted on this state, as it would on any replica)", rollups: "v2", body: { status: "MachineHalted", reports: [], processed_input_count: 5 }, error: { code: "INTERNAL_ERROR", message: "The rollup rejected a query: MachineHalted" } },
];

describe("a reader that cannot answer a read", () => {
  const metrics = createApiMetrics({ wsClients: () => 0, provers: () => 0, redisUp: () => undefined });
  const opened: Endpoint[] = [];
  afterAll(async () => {
    for (const e of opened) await close(e);
  });

  /** A pool of [bad, good] (the first read tries `bad` first) and a node, recording where each read went. */
  async function poolOf(rollups: "v1" | "v2", bad: Answer | "refused"): Promise<{ pool: ReadPool; bad: string; good: Endpoint; node: Endpoint; outcomes: string[] }> {
    const [good, node] = [await endpoint(HEALTHY), await endpoint(HEALTHY)];
    opened.push(good, node);
    let badUrl = `http://127.0.0.1:${await closedPort()}`;
    if (bad !== "refused") {
      const e = await endpoint(bad);
      opened.push(e);
      badUrl = e.url;
    }
    const outcomes: string[] = [];
    const version = rollups === "v2" ? V2 : {};
    const pool = new ReadPool([new RollupReader({ rollupUrl: badUrl, timeoutMs: 300, ...version }), new RollupReader({ rollupUrl: good.url, ...version })], new RollupReader({ rollupUrl: node.url, ...version }), new WriteMark(), {
      waitMs: 1_000,
      pollMs: 20,
      onRead: (target, outcome, reason) => {
        metrics.observeRead(target, outcome, reason);
        outcomes.push([target === badUrl ? "bad" : target === good.url ? "good" : target, outcome, reason].filter((part) => part !== undefined).join(" "));
      },
    });
    return { pool, bad: badUrl, good, node, outcomes };
  }

  it.each(FAILURES)("$name: the read moves on to the next reader, counted with reason $reason", async ({ rollups, answer, reason, says }) => {
    const { pool, bad, good, node, outcomes } = await poolOf(rollups, answer);
    expect(await pool.query("health")).toEqual(HEALTH);
    expect(outcomes).toEqual([`bad failed ${reason}`, "good ok"]);
    expect([good.inspects, node.inspects]).toEqual([1, 0]);
    expect(pool.readers()[0]).toMatchObject({ url: bad, health: "down", reason: expect.stringMatching(says) });
    expect(await metrics.text()).toContain(`api_rollup_reads_total{target="${bad}",outcome="failed",reason="${reason}"} 1\n`);
  });

  it("every reader failing: the node answers", async () => {
    const failed = json(200, { status: "Failed", error: "The node could not complete the inspection", reports: [], processed_input_count: 5 });
    const [first, second, node] = [await endpoint(failed), await endpoint(failed), await endpoint(HEALTHY)];
    opened.push(first, second, node);
    const outcomes: string[] = [];
    const pool = new ReadPool([first, second].map((e) => new RollupReader({ rollupUrl: e.url, ...V2 })), new RollupReader({ rollupUrl: node.url, ...V2 }), new WriteMark(), {
      waitMs: 100,
      pollMs: 20,
      onRead: (target, outcome, reason) => outcomes.push([target === first.url ? "first" : target === second.url ? "second" : target, outcome, reason].filter((part) => part !== undefined).join(" ")),
    });
    expect(await pool.query("health")).toEqual(HEALTH);
    expect(outcomes).toEqual(["first failed failed", "second failed failed", "node fallback"]);
    expect(node.inspects).toBe(1);
  });

  it.each(FINAL)("$name is the dapp's answer: final, no other reader asked", async ({ rollups, body, error }) => {
    const { pool, good, node, outcomes } = await poolOf(rollups, json(200, body));
    const thrown = await pool.query("health").catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ApiError);
    expect({ code: (thrown as ApiError).code, message: (thrown as ApiError).message }).toEqual(error);
    expect(outcomes).toEqual(["bad ok"]);
    expect([good.inspects, node.inspects]).toEqual([0, 0]);
  });

  it("the node alone: an inspect it could not complete is 503 ROLLUP_UNAVAILABLE, not the dapp's rejection", async () => {
    const e = await endpoint(json(200, { status: "Failed", error: "The node could not complete the inspection", reports: [], processed_input_count: 5 }));
    opened.push(e);
    const thrown = await new RollupReader({ rollupUrl: e.url, ...V2 }).query("health").catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ApiError);
    expect({ code: (thrown as ApiError).code, status: (thrown as ApiError).status, message: (thrown as ApiError).message, details: (thrown as ApiError).details }).toEqual({
      code: "ROLLUP_UNAVAILABLE",
      status: 503,
      message: "The rollup node could not complete the query",
      details: { url: e.url, error: "Failed: The node could not complete the inspection" },
    });
  });
});
