import { afterEach, describe, expect, it } from "vitest";
import { RATE_LIMIT_GROUPS, RateLimiter } from "../../api/rate-limit.ts";
import { type ErrorShape } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

const opened: OfflineApi[] = [];
afterEach(() => {
  for (const api of opened.splice(0)) api.cleanup();
});
async function open(env: Record<string, string> = {}) {
  const api = await offlineApi(env);
  opened.push(api);
  return api;
}

describe("RateLimiter", () => {
  it("counts per group and client in fixed 60 s windows", () => {
    let now = 1_000;
    const limiter = new RateLimiter(() => now, { ...RATE_LIMIT_GROUPS, attestations: 2 });
    expect(limiter.hit("attestations", "a")).toEqual({ allowed: true, limit: 2, remaining: 1, resetAt: 1_060, retryAfter: 60 });
    expect(limiter.hit("attestations", "a").remaining).toBe(0);
    now = 1_030;
    expect(limiter.hit("attestations", "a")).toEqual({ allowed: false, limit: 2, remaining: 0, resetAt: 1_060, retryAfter: 30 });
    // Another client and another group have their own windows.
    expect(limiter.hit("attestations", "b").allowed).toBe(true);
    expect(limiter.hit("grants", "a").allowed).toBe(true);
    now = 1_060;
    expect(limiter.hit("attestations", "a")).toMatchObject({ allowed: true, remaining: 1, resetAt: 1_120 });
  });

  it("forgets expired windows, so memory follows the live clients", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    for (let i = 0; i < 500; i++) limiter.hit("health", `10.0.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBe(500);
    now = 120;
    limiter.hit("health", "late");
    expect(limiter.size).toBe(1);
  });
});

describe("rate limits on the wire", () => {
  it("a balancer's health check (X-Balancer-Check) is not counted behind a trusted proxy, and is counted like any call without one", async () => {
    const proxied = await open({ TRUST_PROXY: "on" });
    for (let i = 0; i < 3; i++) {
      const check = await proxied.app.request("/healthcheck", { headers: { "X-Balancer-Check": "1" } });
      expect([check.status, check.headers.get("X-RateLimit-Limit")]).toEqual([200, null]);
    }
    // Only /healthcheck: the other health calls are counted as ever.
    expect((await proxied.app.request("/api/core/health", { headers: { "X-Balancer-Check": "1" } })).headers.get("X-RateLimit-Remaining")).toBe("99");
    const direct = await open();
    const counted = await direct.app.request("/healthcheck", { headers: { "X-Balancer-Check": "1" } });
    expect(counted.headers.get("X-RateLimit-Remaining")).toBe("99");
  });

  it("every limited response carries X-RateLimit-*; the 101st health call is 429 RATE_LIMITED", async () => {
    const { app } = await open();
    let last: Response | undefined;
    for (let i = 1; i <= 100; i++) {
      last = await app.request("/healthcheck");
      expect(last.status).toBe(200);
      expect(last.headers.get("X-RateLimit-Limit")).toBe("100");
      expect(last.headers.get("X-RateLimit-Remaining")).toBe(String(100 - i));
    }
    const reset = Number(last?.headers.get("X-RateLimit-Reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    const limited = await app.request("/api/core/status");
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as ErrorShape;
    expect(body.error.code).toBe("RATE_LIMITED");
    expect(body.error.details).toEqual({ limit: 100, window: "60s", retry_after: expect.any(Number) });
    const retryAfter = body.error.details?.retry_after as number;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get("Retry-After")).toBe(String(retryAfter));
    expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
    // Other groups are counted apart.
    expect((await app.request("/api/core/schemas/none")).headers.get("X-RateLimit-Limit")).toBe("60");
  });

  it("errors count and carry the headers too (attestations: 10 per minute)", async () => {
    const { app } = await open();
    for (let i = 0; i < 10; i++) {
      const response = await app.request("/api/core/attestation/nope");
      expect(response.status).toBe(404);
      expect(response.headers.get("X-RateLimit-Limit")).toBe("10");
    }
    expect((await app.request("/api/core/attestations/0x1")).status).toBe(429);
  });

  it("X-Forwarded-For separates clients only with TRUST_PROXY", async () => {
    const trusted = await open({ TRUST_PROXY: "true" });
    const untrusted = await open();
    for (const { app } of [trusted, untrusted]) {
      for (let i = 0; i < 10; i++) await app.request("/api/core/attestation/x", { headers: { "x-forwarded-for": "203.0.113.1" } });
    }
    const next = (app: OfflineApi["app"]) => app.request("/api/core/attestation/x", { headers: { "x-forwarded-for": "203.0.113.2, 10.0.0.1" } });
    expect((await next(trusted.app)).status).toBe(404);
    expect((await next(untrusted.app)).status).toBe(429);
  });

  it("RATE_LIMITS=off disables limits and their headers", async () => {
    const { app } = await open({ RATE_LIMITS: "off" });
    for (let i = 0; i < 120; i++) {
      const response = await app.request("/healthcheck");
      expect(response.status).toBe(200);
      expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
    }
  });
});
