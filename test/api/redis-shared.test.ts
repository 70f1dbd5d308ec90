/**
 * What replicas share through Redis (api/redis/): rate-limit windows and login nonces, against a real
 * redis-server; what each replica does while Redis is away (refuses for a window, then its share of each
 * limit; its own nonces); and a slow Redis, delayed by a relay in front of it, which never lets a request
 * past the limit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NonceStore } from "../../api/auth/siwe.ts";
import { RateLimiter, RATE_LIMIT_GROUPS } from "../../api/rate-limit.ts";
import { connectRedis, type SharedRedis } from "../../api/redis/connection.ts";
import { RedisNonces } from "../../api/redis/nonces.ts";
import { RedisRateLimiter } from "../../api/redis/rate-limiter.ts";
import { freePorts } from "../support/stack.ts";

let server: ChildProcess;
let port: number;
const connections: SharedRedis[] = [];
const now = () => Math.floor(Date.now() / 1000);

async function startRedis(): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 300));
  return child;
}

async function connected(): Promise<SharedRedis> {
  const shared = connectRedis(`redis://127.0.0.1:${port}`, () => undefined);
  connections.push(shared);
  for (let i = 0; i < 50 && !shared.ready; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(shared.ready).toBe(true);
  return shared;
}

beforeAll(async () => {
  [port] = (await freePorts(1)) as [number];
  server = await startRedis();
});

afterAll(async () => {
  for (const c of connections) await c.close();
  server?.kill("SIGKILL");
});

describe("rate limits in Redis", () => {
  it("two replicas count one client's window together; other clients and groups are apart", async () => {
    const limits = { ...RATE_LIMIT_GROUPS, attestations: 3 };
    const fallbacks: unknown[] = [];
    const replicas = await Promise.all(
      [0, 1].map(async () => {
        const shared = await connected();
        return new RedisRateLimiter(shared.client, new RateLimiter(now, limits), now, (e) => fallbacks.push(e), { replicas: 2, connected: () => shared.ready });
      }),
    );
    const [one, two] = replicas as [RedisRateLimiter, RedisRateLimiter];
    const client = `client-${Math.random()}`;
    const decisions = [await one.hit("attestations", client), await two.hit("attestations", client), await one.hit("attestations", client), await two.hit("attestations", client)];
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[3]?.retryAfter).toBeGreaterThanOrEqual(59);
    expect(decisions[3]?.resetAt).toBeGreaterThanOrEqual(now() + 59);
    expect((await two.hit("attestations", `${client}-other`)).allowed).toBe(true);
    expect((await one.hit("grants", client)).remaining).toBe(RATE_LIMIT_GROUPS.grants - 1);
    expect(fallbacks).toEqual([]);
  });
});

describe("login nonces in Redis", () => {
  it("a nonce issued by one replica is consumed once, by any replica", async () => {
    const [a, b] = await Promise.all([connected(), connected()]);
    const one = new RedisNonces(a.client, new NonceStore(now), now, () => undefined);
    const two = new RedisNonces(b.client, new NonceStore(now), now, () => undefined);
    const { nonce, expiresAt } = await one.issue();
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(expiresAt).toBeGreaterThan(now());
    expect(await two.consume(nonce)).toBe(true);
    expect(await one.consume(nonce)).toBe(false);
    expect(await two.consume(nonce)).toBe(false);
    expect(await one.consume("never-issued-nonce")).toBe(false);
  });
});

describe("Redis away", () => {
  it("a replica refuses what it cannot count for a window, then allows its share; nonces stay its own; shared again once Redis is back", async () => {
    const shared = await connected();
    const states: boolean[] = [];
    const watched = connectRedis(`redis://127.0.0.1:${port}`, (up) => states.push(up));
    connections.push(watched);
    const fallbacks: unknown[] = [];
    let clock = now();
    const limiter = new RedisRateLimiter(shared.client, new RateLimiter(() => clock, { ...RATE_LIMIT_GROUPS, auth: 4 }), () => clock, (e) => fallbacks.push(e), {
      replicas: 2,
      connected: () => shared.ready,
    });
    const nonces = new RedisNonces(shared.client, new NonceStore(now), now, (e) => fallbacks.push(e));
    for (let i = 0; i < 50 && !watched.ready; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const client = `away-${Math.random()}`;
    expect((await limiter.hit("auth", client)).remaining).toBe(3);

    server.kill("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(shared.ready).toBe(false);
    // The other replica may have counted in this client's open window: nothing uncounted for a window.
    const refused = await limiter.hit("auth", client);
    expect([refused.allowed, refused.retryAfter]).toEqual([false, 60]);
    clock += 30;
    expect((await limiter.hit("auth", client)).retryAfter).toBe(30);
    // A window later each of the 2 replicas allows its share of 4: 2, so both together stay within 4.
    clock += 30;
    expect((await limiter.hit("auth", client)).remaining).toBe(1);
    expect((await limiter.hit("auth", client)).remaining).toBe(0);
    expect((await limiter.hit("auth", client)).allowed).toBe(false);
    const { nonce } = await nonces.issue();
    expect(await nonces.consume(nonce)).toBe(true);
    expect(await nonces.consume(nonce)).toBe(false);
    expect(fallbacks.length).toBeGreaterThanOrEqual(6);

    server = await startRedis();
    for (let i = 0; i < 80 && !(shared.ready && watched.ready); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(shared.ready).toBe(true);
    expect(states).toEqual([true, false, true]);
    const before = fallbacks.length;
    // The 2 hits allowed while away go into the shared window with the next one: 3 of 4 used.
    expect((await limiter.hit("auth", client)).remaining).toBe(1);
    expect((await limiter.hit("auth", `back-${Math.random()}`)).remaining).toBe(3);
    expect(fallbacks).toHaveLength(before);
  });
});

/** A relay in front of Redis that holds back some of its answers (each chunk in order, after `delay(i)` ms). */
async function delayingRelay(target: number, delay: (chunk: number) => number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: "127.0.0.1", port: target });
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    let chunks = 0;
    let queue = Promise.resolve();
    upstream.on("data", (chunk: Buffer) => {
      const wait = delay(chunks++);
      queue = queue.then(() => new Promise<void>((resolve) => setTimeout(() => (client.write(chunk), resolve()), wait)));
    });
    const end = (): void => void (client.destroy(), upstream.destroy());
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a slow Redis", () => {
  it("never lets an eleventh claim through in a minute, on two replicas, whatever answers come late", async () => {
    server = server.exitCode === null ? server : await startRedis();
    // Every third answer comes after the command timeout (1 s); the others at once.
    const relay = await delayingRelay(port, (chunk) => (chunk % 3 === 2 ? 1_400 : 0));
    try {
      const fallbacks: unknown[] = [];
      const replicas = await Promise.all(
        [0, 1].map(async () => {
          const shared = connectRedis(`redis://127.0.0.1:${relay.port}`, () => undefined);
          connections.push(shared);
          for (let i = 0; i < 50 && !shared.ready; i++) await new Promise((resolve) => setTimeout(resolve, 50));
          return new RedisRateLimiter(shared.client, new RateLimiter(now), now, (e) => fallbacks.push(e), { replicas: 2, connected: () => shared.ready });
        }),
      );
      const client = `slow-${Math.random()}`;
      const decisions = [];
      // 30 claims in waves of 6 at once, spread over both replicas.
      for (let wave = 0; wave < 5; wave++) {
        decisions.push(...(await Promise.all(Array.from({ length: 6 }, (_, i) => (replicas[i % 2] as RedisRateLimiter).hit("attestations", client)))));
      }
      const allowed = decisions.filter((d) => d.allowed);
      expect(allowed.length).toBeLessThanOrEqual(RATE_LIMIT_GROUPS.attestations);
      expect(allowed.length).toBeGreaterThan(0);
      // Some answers did come late, and those requests were refused rather than counted apart.
      expect(fallbacks.length).toBeGreaterThan(0);
      expect(decisions.filter((d) => !d.allowed && d.retryAfter === 1).length).toBeGreaterThan(0);
      // What was allowed is what the shared count says: no two allowed requests read the same remaining count.
      const remaining = allowed.map((d) => d.remaining).sort((a, b) => b - a);
      expect(new Set(remaining).size).toBe(remaining.length);
    } finally {
      await relay.close();
    }
  }, 60_000);
});
