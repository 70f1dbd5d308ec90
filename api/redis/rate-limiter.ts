/**
 * Rate limits shared by api replicas: the same fixed 60-second windows as `RateLimiter`, counted in
 * Redis, so N replicas behind a load balancer allow what one process allows. One script call per
 * request makes the count and the window's end atomic. While Redis cannot answer, each replica counts
 * in its own memory (limits then hold per replica, at most N times the limit), and says so in its log.
 */
import type { Redis } from "ioredis";
import { RateLimiter, WINDOW_SECONDS, type RateDecision, type RateLimitGroup, type RateLimitStore } from "../rate-limit.ts";

// INCR opens the window on its first hit; the TTL is the window's remaining time. A key that lost its TTL
// (it cannot here, but a manual SET could do it) gets one again, so a window never lasts for ever.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

export const RATE_LIMIT_KEY_PREFIX = "attestation-api:rl:";

export class RedisRateLimiter implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    /** Counts while Redis is away; its limits are the shared ones. */
    private readonly fallback: RateLimiter,
    private readonly now: () => number,
    private readonly onFallback: (error: unknown) => void,
  ) {}

  async hit(group: RateLimitGroup, client: string): Promise<RateDecision> {
    const limit = this.fallback.limits[group];
    let reply: unknown;
    try {
      reply = await this.redis.eval(HIT_SCRIPT, 1, `${RATE_LIMIT_KEY_PREFIX}${group}:${client}`, WINDOW_SECONDS);
    } catch (error) {
      this.onFallback(error);
      return this.fallback.hit(group, client);
    }
    const [count, ttl] = Array.isArray(reply) ? reply.map(Number) : [Number.NaN, Number.NaN];
    if (count === undefined || ttl === undefined || !Number.isFinite(count) || !Number.isFinite(ttl)) {
      this.onFallback(new Error(`unexpected reply from Redis: ${JSON.stringify(reply)}`));
      return this.fallback.hit(group, client);
    }
    const retryAfter = Math.max(1, ttl);
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: this.now() + retryAfter,
      retryAfter,
    };
  }
}
