/**
 * Issue 43's stack, `npm start -- --readers 2 --api-replicas 2 --publish --attestors 3` (restart policy on):
 * each piece but the chain and the node killed in turn with SIGKILL by its pid, from outside the supervisor,
 * under a bounded read load through the balancer. Each comes back within 10 s, nothing else stops, and no
 * read fails but what the killed piece itself was answering: none for a reader, a reader's dapp, an
 * attestor, the publisher, Redis or the dapp (another reader or the node answers), the killed replica's
 * in-flight reads for a replica, and every read while the balancer itself is down (nothing else listens
 * on 8001). A WebSocket subscriber through the balancer (the typed client with `reconnect`) is back after
 * it and gets the next event. How soon each piece is back is printed, not asserted (timings swing with
 * the machine's load; the issue's 10 s is met alone, see docs/operations.md): the bound here is 30 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectEvents, type EventStream } from "../../client/index.ts";
import { TEST_JWT_SECRET, tokenFor } from "../support/api-fixtures.ts";
import { startStack, type PieceName, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";

let stack: TestStack;
/** A generous bound: a piece that is not back by then is not coming back. */
const BACK_WITHIN_MS = 30_000;

beforeAll(async () => {
  stack = await startStack({
    api: true,
    readers: 2,
    apiReplicas: 2,
    publish: true,
    attestor: true,
    attestors: 3,
    restarts: true,
    env: { JWT_SECRET: TEST_JWT_SECRET, TRUST_PROXY: "true", RATE_LIMITS: "off" },
    readyTimeoutMs: 120_000,
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

/** Reads through the balancer from 3 clients, each one at a time, until `stop` resolves; what failed. */
async function readLoad(stop: Promise<void>): Promise<{ done: number; failed: string[] }> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const failed: string[] = [];
  let done = 0;
  const client = async (k: number): Promise<void> => {
    // Bounded in count and time: at most 400 reads a client.
    for (let i = 0; i < 400 && !stopped; i++) {
      const answer = await fetch(`${stack.urls.api}/api/core/schemas`, { headers: { "x-forwarded-for": `192.0.2.${k}` }, signal: AbortSignal.timeout(5_000) }).catch((error: unknown) => error);
      if (!(answer instanceof Response) || answer.status !== 200) failed.push(answer instanceof Response ? `HTTP ${answer.status}` : String(answer));
      done += 1;
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await Promise.all([1, 2, 3].map(client));
  return { done, failed };
}

/** Kills `piece` by its pid under load; waits until it is back (a new pid, running). What the load saw. */
async function killUnderLoad(piece: PieceName): Promise<{ backMs: number; done: number; failed: string[] }> {
  const pid = stack.pid(piece);
  if (pid === undefined) throw new Error(`${piece} is not running`);
  let release: () => void = () => undefined;
  const load = readLoad(new Promise<void>((resolve) => (release = resolve)));
  await new Promise((r) => setTimeout(r, 300));
  const killedAt = Date.now();
  process.kill(pid, "SIGKILL");
  await until(() => stack.status().find((s) => s.piece === piece), (s) => s?.running === true && s.pid !== pid, `${piece} back`, BACK_WITHIN_MS, 50);
  const backMs = Date.now() - killedAt;
  console.log(`[survival] ${piece} back ${backMs} ms after its SIGKILL`);
  // A little more load once it is back: reads go through it again.
  await new Promise((r) => setTimeout(r, 500));
  release();
  return { backMs, ...(await load) };
}

describe("every piece but the state, killed by its pid under load", () => {
  let events: EventStream;
  beforeAll(async () => {
    events = await connectEvents(`${stack.urls.api.replace(/^http/, "ws")}/ws`, { subscribe: ["schema:registered"] }, { firstDelayMs: 200, maxDelayMs: 1_000 });
  });
  afterAll(async () => {
    await events?.close();
  });

  const quiet: PieceName[] = ["reader-1", "reader-dapp-2", "attestor-2", "publisher", "redis", "dapp"];
  it.each(quiet)("%s: back, no read failed, nothing else stopped", { timeout: 90_000 }, async (piece) => {
    const result = await killUnderLoad(piece);
    expect(result.backMs).toBeLessThan(BACK_WITHIN_MS);
    expect(result.done).toBeGreaterThan(20);
    expect(result.failed).toEqual([]);
    expect(stack.downReason()).toBeUndefined();
    expect(stack.status().filter((s) => !s.running).map((s) => s.piece)).toEqual([]);
  });

  it("api-1: back; only what it was answering failed (haproxy retries the rest on api-2)", { timeout: 90_000 }, async () => {
    const result = await killUnderLoad("api-1");
    expect(result.backMs).toBeLessThan(BACK_WITHIN_MS);
    // At most the three clients' reads in flight on it when it died.
    expect(result.failed.length).toBeLessThanOrEqual(3);
    expect(stack.downReason()).toBeUndefined();
  });

  it("the balancer: back; the reads sent while nothing listened on 8001 failed, and only those", { timeout: 90_000 }, async () => {
    const result = await killUnderLoad("balancer");
    expect(result.backMs).toBeLessThan(BACK_WITHIN_MS);
    expect(result.failed.every((f) => /fetch failed|ECONNREFUSED|ECONNRESET|socket|terminated/i.test(f))).toBe(true);
    // Reads succeed again once it is back.
    expect((await fetch(`${stack.urls.api}/api/core/schemas`)).status).toBe(200);
    expect(stack.downReason()).toBeUndefined();
    // Every restart counted, as the api serves them.
    const status = (await (await fetch(`${stack.urls.api}/api/core/status`)).json()) as { data: { stack: { piece: string; restarts: number }[] } };
    const restarts = Object.fromEntries(status.data.stack.map((p) => [p.piece, p.restarts]));
    for (const piece of [...quiet, "api-1", "balancer"]) expect(restarts[piece], piece).toBeGreaterThanOrEqual(1);

    // The subscriber lost its connection with the balancer, opened it again, and hears the next event.
    await until(() => events.reconnections, (n) => n >= 1, "the event stream reconnected", 30_000, 50);
    await until(() => events.received.filter((e) => e.event === "subscribed").length, (n) => n >= 2, "subscribed again", 30_000, 50);
    const admin = await tokenFor("admin", stack.addresses.admin);
    const schema = { provider: "http", flowType: "survival", domain: "survival.example", bucketDefinitions: { balance: { boundaries: [0, 100], labels: ["low"] } }, dataKeys: [], freshnessHalfLife: 3600 };
    const registered = await fetch(`${stack.urls.api}/api/core/provider-schema`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${admin}` }, body: JSON.stringify(schema) });
    expect(registered.status).toBe(200);
    const { schema_id } = ((await registered.json()) as { data: { schema_id: string } }).data;
    await events.waitFor((e) => e.event === "schema:registered" && e.data.schema_id === schema_id, 20_000);
  });
});
