/**
 * Login nonces shared by api replicas: a nonce one replica hands out is consumed by whichever replica
 * the login reaches. GETDEL makes "once" hold across replicas. While Redis cannot answer, nonces come
 * from and go to this process's own store, so a login that stays on one replica still works.
 */
import type { Redis } from "ioredis";
import { NONCE_TTL_SECONDS, newNonce, type NonceKeeper, type NonceStore } from "../auth/siwe.ts";

export const NONCE_KEY_PREFIX = "attestation-api:nonce:";

export class RedisNonces implements NonceKeeper {
  constructor(
    private readonly redis: Redis,
    private readonly fallback: NonceStore,
    private readonly now: () => number,
    private readonly onFallback: (error: unknown) => void,
  ) {}

  async issue(): Promise<{ nonce: string; expiresAt: number }> {
    const nonce = newNonce();
    const expiresAt = this.now() + NONCE_TTL_SECONDS;
    try {
      await this.redis.set(`${NONCE_KEY_PREFIX}${nonce}`, String(expiresAt), "EX", NONCE_TTL_SECONDS);
      return { nonce, expiresAt };
    } catch (error) {
      this.onFallback(error);
      return this.fallback.issue();
    }
  }

  async consume(nonce: string): Promise<boolean> {
    // A nonce issued while Redis was away lives here.
    if (this.fallback.consume(nonce)) return true;
    try {
      const expiresAt = await this.redis.getdel(`${NONCE_KEY_PREFIX}${nonce}`);
      return expiresAt !== null && Number(expiresAt) > this.now();
    } catch (error) {
      this.onFallback(error);
      return false;
    }
  }
}
