/**
 * What replicas share through Redis (api/redis/): rate-limit windows and login nonces, against a real
 * redis-server; and what each replica does while Redis is away (its own count, its own nonces).
 */
import { spawn, type ChildProcess } from "node:child_process";
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
      [0, 1].map(async () => new RedisRateLimiter((await connected()).client, new RateLimiter(now, limits), now, (e) => fallbacks.push(e))),
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
  it("each replica counts alone and keeps its own nonces, and shares again once Redis is back", async () => {
    const shared = await connected();
    const states: boolean[] = [];
    const watched = connectRedis(`redis://127.0.0.1:${port}`, (up) => states.push(up));
    connections.push(watched);
    const fallbacks: unknown[] = [];
    const limiter = new RedisRateLimiter(shared.client, new RateLimiter(now, { ...RATE_LIMIT_GROUPS, auth: 2 }), now, (e) => fallbacks.push(e));
    const nonces = new RedisNonces(shared.client, new NonceStore(now), now, (e) => fallbacks.push(e));
    for (let i = 0; i < 50 && !watched.ready; i++) await new Promise((resolve) => setTimeout(resolve, 50));

    server.kill("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(shared.ready).toBe(false);
    const client = `away-${Math.random()}`;
    expect((await limiter.hit("auth", client)).remaining).toBe(1);
    expect((await limiter.hit("auth", client)).remaining).toBe(0);
    expect((await limiter.hit("auth", client)).allowed).toBe(false);
    const { nonce } = await nonces.issue();
    expect(await nonces.consume(nonce)).toBe(true);
    expect(await nonces.consume(nonce)).toBe(false);
    expect(fallbacks.length).toBeGreaterThanOrEqual(4);

    server = await startRedis();
    for (let i = 0; i < 80 && !(shared.ready && watched.ready); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(shared.ready).toBe(true);
    expect(states).toEqual([true, false, true]);
    const before = fallbacks.length;
    expect((await limiter.hit("auth", `back-${Math.random()}`)).remaining).toBe(1);
    expect(fallbacks).toHaveLength(before);
  });
});
