/**
 * Kept GraphQL answers sent in front of hono (api/graphql/kept-listener.ts). A real indexer process (on
 * PGlite, its node absent: its index is empty but answers) and a real api on a port: the third sighting of a
 * request is answered by the listener, with the body and headers hono's answer had, the rate limit counted
 * and enforced, the metric and the log line; everything else still goes to hono, with the body the listener
 * already read, on a connection that stays open.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../api/config.ts";
import { startApi, type RunningApi } from "../../api/main.ts";
import { closedPort, TEST_JWT_SECRET } from "../support/api-fixtures.ts";
import { processArgs } from "../support/stack.ts";
import { until } from "../support/until.ts";

let indexer: ChildProcess;
let api: RunningApi;
let dataDir: string;
const logLines: string[] = [];
/** Requests the listener answered (services.index.kept gave it a text). */
let keptHits = 0;
/** The next lookup of a kept answer throws this (a fault in the listener's own work). */
let keptFault: Error | undefined;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The request went on a connection an earlier request had opened. */
  reused: boolean;
}

function post(body: string | Buffer, headers: Record<string, string> = { "content-type": "application/json" }, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    const req = request(`${api.url}/graphql`, { method: "POST", agent, headers: chunked ? headers : { ...headers, "content-length": String(bytes.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), reused: req.reusedSocket }));
    });
    req.on("error", reject);
    if (chunked) {
      // Two writes without a declared length: node sends the body chunked.
      req.write(bytes.subarray(0, 5));
      req.end(bytes.subarray(5));
    } else req.end(bytes);
  });
}

const query = (take: number) => JSON.stringify({ query: `{ attestations(take: ${take}, orderBy: [{ time: desc }]) { id attester } }` });

/** Headers whose values differ between any two answers. */
const VARYING = new Set(["date", "x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "keep-alive", "connection"]);
const stable = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([k]) => !VARYING.has(k)).sort(([a], [b]) => a.localeCompare(b)));

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "kept-listener-"));
  const [down, indexPort, apiPort] = [await closedPort(), await closedPort(), await closedPort()];
  indexer = spawn(process.execPath, processArgs("api/index/main.ts"), {
    env: { ...process.env, ROLLUP_URL: `http://127.0.0.1:${down}`, RPC_URL: `http://127.0.0.1:${down}`, DATA_DIR: dataDir, INDEX_PORT: String(indexPort), DATABASE_URL: "" },
    stdio: "ignore",
  });
  const indexUrl = `http://127.0.0.1:${indexPort}`;
  await until(() => fetch(`${indexUrl}/health`).then((r) => r.status, () => 0), (s) => s === 200, "the indexer's /health", 60_000, 200);
  const config = loadConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: dataDir,
    API_PORT: String(apiPort),
    ROLLUP_URL: `http://127.0.0.1:${down}`,
    RPC_URL: `http://127.0.0.1:${down}`,
    ATTESTOR_URL: `ws://127.0.0.1:${down}/ws`,
    INDEX_URL: indexUrl,
    LOG_LEVEL: "info",
  });
  api = await startApi(config, { logDestination: { write: (line: string) => void logLines.push(line) } });
  const kept = api.services.index.kept.bind(api.services.index);
  api.services.index.kept = (request) => {
    const fault = keptFault;
    keptFault = undefined;
    if (fault !== undefined) throw fault;
    const text = kept(request);
    if (text !== undefined) keptHits += 1;
    return text;
  };
  // The api hears the indexer's version on /changes before it keeps anything.
  await until(async () => (await post(query(1)), await post(query(1)), await post(query(1)), keptHits), (n) => n > 0, "a first kept answer", 20_000, 100);
}, 120_000);

afterAll(async () => {
  // The indexer first: a failing stop of the api must not leave it running.
  indexer?.kill("SIGKILL");
  agent.destroy();
  await api?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("kept GraphQL answers in front of hono", () => {
  it("the third sighting is the listener's, with hono's body and headers, a log line and a metric", async () => {
    const body = query(7);
    const first = await post(body);
    const second = await post(body);
    const hitsBefore = keptHits;
    const third = await post(body);
    expect(keptHits).toBe(hitsBefore + 1);
    // The same kept answer through hono: a chunked body is not the listener's.
    const throughHono = await post(body, { "content-type": "application/json" }, true);
    expect(keptHits).toBe(hitsBefore + 1);
    expect([first.status, second.status, third.status, throughHono.status]).toEqual([200, 200, 200, 200]);
    expect(third.body).toBe(first.body);
    expect(throughHono.body).toBe(first.body);
    expect(JSON.parse(third.body)).toEqual({ data: { attestations: [] } });
    expect(stable(third.headers)).toEqual(stable(throughHono.headers));
    // An answer read from the index also says the input it held; a kept one, as hono sends it, does not.
    const { "x-index-input": held, ...read } = stable(first.headers);
    expect(held).toBe("-1");
    expect(read).toEqual(stable(third.headers));
    expect(third.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(third.headers["access-control-allow-origin"]).toBe("*");
    expect(third.headers["x-ratelimit-limit"]).toBe("60");
    expect(Number(third.headers["x-ratelimit-remaining"])).toBe(Number(second.headers["x-ratelimit-remaining"]) - 1);
    expect(logLines.some((line) => line.includes(`"reqId":"${third.headers["x-request-id"]}"`) && line.includes('"route":"/graphql"') && line.includes('"status":200'))).toBe(true);
    // A client's own request id is answered and logged as it came.
    const named = await post(body, { "content-type": "application/json", "x-request-id": "client-chosen.1" });
    expect(named.headers["x-request-id"]).toBe("client-chosen.1");
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(/api_http_requests_total\{route="\/graphql",method="POST",status="200"\} \d+/);
  });

  it("what it does not answer goes to hono with the body it read: a bad body, a new query, a read-your-writes one", async () => {
    const hitsBefore = keptHits;
    // Kept by now (the previous test's query), but it needs an input the index does not hold: hono's, and
    // the index waits for it (5 s) before it says so, meanwhile the rest goes on another connection.
    const consistent = fetch(`${api.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "x-min-input-index": "0" }, body: query(7) });
    const malformed = await post("{ not json");
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ success: false, error: { code: "INVALID_REQUEST", details: { field: "body" } } });
    const notGraphql = await post(JSON.stringify({ query: 3 }));
    expect(notGraphql.status).toBe(400);
    expect(notGraphql.body).toContain("query");
    const fresh = await post(query(11));
    expect(fresh.status).toBe(200);
    expect(JSON.parse(fresh.body)).toEqual({ data: { attestations: [] } });
    const behind = await consistent;
    expect(behind.status).toBe(503);
    expect(await behind.json()).toMatchObject({ success: false, error: { code: "INDEX_BEHIND" } });
    expect(keptHits).toBe(hitsBefore);
  });

  it("a connection whose request went on to hono after its body was read stays open for the next", async () => {
    await post(query(13));
    // @hono/node-server closes a connection whose request body it sees unread 500 ms after the answer.
    await new Promise((r) => setTimeout(r, 1_000));
    const next = await post(query(7));
    expect(next.status).toBe(200);
    expect(next.reused).toBe(true);
  });

  it("a rate-limit store that fails hands the request to hono, which asks it again and answers", async () => {
    const body = query(19);
    await post(body);
    await post(body);
    const limiter = api.services.limiter;
    if (limiter === undefined) throw new Error("the api runs without a rate limiter");
    const hit = limiter.hit.bind(limiter);
    let failed = 0;
    limiter.hit = () => {
      limiter.hit = hit;
      failed += 1;
      throw new Error("the store is down");
    };
    const hitsBefore = keptHits;
    const answer = await post(body);
    expect(failed).toBe(1);
    expect(keptHits).toBe(hitsBefore + 1);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(JSON.stringify({ data: { attestations: [] } }));
    expect(answer.headers["x-ratelimit-limit"]).toBe("60");
  });

  it("a fault in the listener's own work is a 500 INTERNAL_ERROR, logged, and the api goes on serving", async () => {
    const body = query(23);
    await post(body);
    await post(body);
    keptFault = new Error("a lookup that broke");
    const broken = await post(body);
    expect(broken.status).toBe(500);
    expect(JSON.parse(broken.body)).toMatchObject({ success: false, error: { code: "INTERNAL_ERROR", message: "Internal server error" } });
    expect(broken.body).not.toContain("a lookup that broke");
    expect(logLines.some((line) => line.includes("unexpected fault") && line.includes("a lookup that broke"))).toBe(true);
    const after = await post(body);
    expect(after.status).toBe(200);
  });

  it("the rate limit holds on kept answers: past 60 a minute, 429 RATE_LIMITED with Retry-After, counted", async () => {
    const body = query(17);
    let last: Answer | undefined;
    for (let i = 0; i < 70 && last?.status !== 429; i++) last = await post(body);
    expect(last?.status).toBe(429);
    expect(JSON.parse(last?.body ?? "{}")).toMatchObject({ success: false, error: { code: "RATE_LIMITED", details: { limit: 60 } } });
    expect(last?.headers["retry-after"]).toMatch(/^\d+$/);
    expect(last?.headers["x-ratelimit-remaining"]).toBe("0");
    expect(last?.headers["access-control-allow-origin"]).toBe("*");
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(/api_http_requests_total\{route="\/graphql",method="POST",status="429"\} [1-9]/);
  });
});
