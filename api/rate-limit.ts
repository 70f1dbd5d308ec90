/**
 * Rate limits (DECISIONS.md section 8): per client address and per endpoint group, in fixed 60-second
 * windows. Memory stays bounded: expired windows are swept, and the table has a hard cap.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "./errors.ts";

export const RATE_LIMIT_GROUPS = {
  health: 100,
  schemas: 60,
  attestations: 10,
  grants: 20,
  admin: 60,
  auth: 60,
} as const;
export type RateLimitGroup = keyof typeof RATE_LIMIT_GROUPS;

export const WINDOW_SECONDS = 60;
/** Past this many live (client, group) windows the oldest are dropped: a flood of addresses cannot exhaust memory. */
const MAX_WINDOWS = 100_000;

interface Window {
  /** Unix seconds when the window ends. */
  resetAt: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAt: number;
  /** Seconds until the window ends, at least 1. */
  retryAfter: number;
}

/** A 429 that carries its rate-limit headers, so the one error handler can put them on the response. */
export class RateLimitedError extends ApiError {
  constructor(decision: RateDecision, headers: Record<string, string>) {
    super(
      "RATE_LIMITED",
      `Too many requests: at most ${decision.limit} per ${WINDOW_SECONDS}s; retry in ${decision.retryAfter}s`,
      { limit: decision.limit, window: `${WINDOW_SECONDS}s`, retry_after: decision.retryAfter },
    );
    this.withHeaders(headers);
  }
}

/**
 * Where the windows are counted: this process (`RateLimiter`), or Redis when replicas share the limits
 * (`RedisRateLimiter`, api/redis/rate-limiter.ts).
 */
export interface RateLimitStore {
  hit(group: RateLimitGroup, client: string): RateDecision | Promise<RateDecision>;
}

/** Windows in this process's memory: the default with one api process. */
export class RateLimiter implements RateLimitStore {
  private readonly windows = new Map<string, Window>();
  private nextSweep = 0;

  constructor(
    private readonly now: () => number,
    readonly limits: Record<RateLimitGroup, number> = RATE_LIMIT_GROUPS,
  ) {}

  hit(group: RateLimitGroup, client: string): RateDecision {
    const now = this.now();
    this.sweep(now);
    const limit = this.limits[group];
    const key = `${group}\u0000${client}`;
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      if (window !== undefined) this.windows.delete(key);
      window = { resetAt: now + WINDOW_SECONDS, count: 0 };
      this.windows.set(key, window);
      this.enforceCap();
    }
    window.count += 1;
    return {
      allowed: window.count <= limit,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetAt: window.resetAt,
      retryAfter: Math.max(1, window.resetAt - now),
    };
  }

  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + WINDOW_SECONDS;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  private enforceCap(): void {
    while (this.windows.size > MAX_WINDOWS) {
      const oldest = this.windows.keys().next().value;
      if (oldest === undefined) return;
      this.windows.delete(oldest);
    }
  }
}

export type ClientAddressOf = (c: Context) => string;

/**
 * The header a load balancer's own health checks carry (`npm start -- --api-replicas N` sets it in haproxy's
 * checks and strips it from what clients send): with TRUST_PROXY, such a `/healthcheck` is not a client's
 * request and is not counted. Counted, two checks a second per replica would use up the health group's 100
 * a minute of the balancer's address, and the replicas would answer their own checks with 429 and be taken
 * out of the balancer.
 */
export const BALANCER_CHECK_HEADER = "X-Balancer-Check";

export function rateLimit(limiter: RateLimitStore | undefined, group: RateLimitGroup, clientOf: ClientAddressOf, exempt?: (c: Context) => boolean) {
  return createMiddleware(async (c, next) => {
    if (limiter === undefined || exempt?.(c) === true) return next();
    const decision = await limiter.hit(group, clientOf(c));
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) throw new RateLimitedError(decision, headers);
    // Prepared on the context, not set on `c.res` after the route: that copies the answer into a full
    // WHATWG Response (as hono's cors did, api/app.ts). An error's answer carries them too.
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    await next();
  });
}

/** The headers a rate-limited answer carries: the window's state, and Retry-After when refused. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(decision.resetAt),
    ...(decision.allowed ? {} : { "Retry-After": String(decision.retryAfter) }),
  };
}

/** The rate-limit key: the socket's peer, or the first X-Forwarded-For hop only behind a trusted proxy. */
export function clientAddress(trustProxy: boolean, forwardedFor: string | undefined, peer: string | undefined): string {
  if (trustProxy) {
    const forwarded = forwardedFor?.split(",")[0]?.trim();
    if (forwarded !== undefined && forwarded !== "") return forwarded;
  }
  return peer ?? "unknown";
}
