/**
 * Rate limits shared by api replicas: the same fixed 60-second windows as `RateLimiter`, counted in
 * Redis, so N replicas behind a load balancer allow what one process allows. One script call per
 * request makes the count and the window's end atomic.
 *
 * A hit Redis did not count is never allowed past the limit (docs/operations.md, "When Redis is slow or
 * away"):
 * - a call that fails or runs out of time while Redis is connected refuses that one request (429 with a
 *   short Retry-After): the count may have been made or not, and allowing it could be the eleventh;
 * - once Redis is known away, every hit is refused for one window (what other replicas counted in the
 *   open windows is unknown); after that each replica counts on its own with a share of the limit,
 *   `floor(limit / replicas)`, so that all of them together stay within it;
 * - when Redis is back, the hits a replica allowed on its own in a window still open are added to the
 *   shared count with the first one it sends, so the window that follows holds them too.
 */
import type { Redis } from "ioredis";
import { RateLimiter, WINDOW_SECONDS, type RateDecision, type RateLimitGroup, type RateLimitStore } from "../rate-limit.ts";

// INCRBY opens the window on its first hit; the TTL is the window's remaining time. A key that lost its
// TTL (it cannot here, but a manual SET could do it) gets one again, so a window never lasts for ever.
const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

export const RATE_LIMIT_KEY_PREFIX = "attestation-api:rl:";

/** How long a refused request is told to wait when Redis answered too slowly (it is likely back soon). */
const SLOW_RETRY_SECONDS = 1;

export interface SharedLimitOptions {
  /** How many replicas share the limits: each takes `floor(limit / replicas)` while Redis is away. */
  replicas: number;
  /** Whether the connection to Redis is up (a failed call with the connection up is a slow Redis). */
  connected: () => boolean;
}

export class RedisRateLimiter implements RateLimitStore {
  /** Counts while Redis is away, with each group's share of the limit. */
  private readonly share: RateLimiter;
  /** When this replica found Redis away (unix seconds), or undefined while it answers. */
  private awaySince: number | undefined;
  /** Hits this replica allowed on its own, per key, not yet added to the shared count. */
  private readonly unreported = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly redis: Redis,
    /** The shared limits (its counts are not used). */
    private readonly limits: RateLimiter,
    private readonly now: () => number,
    private readonly onFallback: (error: unknown) => void,
    private readonly options: SharedLimitOptions,
  ) {
    const replicas = Math.max(1, options.replicas);
    const shares = Object.fromEntries(Object.entries(limits.limits).map(([group, limit]) => [group, Math.floor(limit / replicas)]));
    this.share = new RateLimiter(now, shares as Record<RateLimitGroup, number>);
  }

  async hit(group: RateLimitGroup, client: string): Promise<RateDecision> {
    const limit = this.limits.limits[group];
    const key = `${RATE_LIMIT_KEY_PREFIX}${group}:${client}`;
    const now = this.now();
    const pending = this.unreported.get(key);
    const carried = pending !== undefined && pending.until > now ? pending.count : 0;
    let reply: unknown;
    try {
      reply = await this.redis.eval(HIT_SCRIPT, 1, key, WINDOW_SECONDS, 1 + carried);
    } catch (error) {
      this.onFallback(error);
      return this.uncounted(group, client, key, limit);
    }
    const [count, ttl] = Array.isArray(reply) ? reply.map(Number) : [Number.NaN, Number.NaN];
    if (count === undefined || ttl === undefined || !Number.isFinite(count) || !Number.isFinite(ttl)) {
      this.onFallback(new Error(`unexpected reply from Redis: ${JSON.stringify(reply)}`));
      return this.uncounted(group, client, key, limit);
    }
    this.awaySince = undefined;
    this.unreported.delete(key);
    const retryAfter = Math.max(1, ttl);
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: now + retryAfter,
      retryAfter,
    };
  }

  /** A hit Redis did not count: refused, unless Redis has been away a whole window (then the replica's share). */
  private uncounted(group: RateLimitGroup, client: string, key: string, limit: number): RateDecision {
    const now = this.now();
    if (this.options.connected()) {
      // Slow, not away: this count may have been made or not; refuse this one request only.
      return { allowed: false, limit, remaining: 0, resetAt: now + SLOW_RETRY_SECONDS, retryAfter: SLOW_RETRY_SECONDS };
    }
    this.awaySince ??= now;
    const sharesFrom = this.awaySince + WINDOW_SECONDS;
    if (now < sharesFrom) {
      // The windows other replicas counted in may still be open: nothing more until they have ended.
      return { allowed: false, limit, remaining: 0, resetAt: sharesFrom, retryAfter: Math.max(1, sharesFrom - now) };
    }
    const decision = this.share.hit(group, client);
    if (decision.allowed) {
      const pending = this.unreported.get(key);
      this.unreported.set(key, { count: (pending !== undefined && pending.until > now ? pending.count : 0) + 1, until: decision.resetAt });
    }
    return decision;
  }
}
