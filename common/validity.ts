/**
 * An attestation's validity at a given time (DECISIONS.md section 17), shared by the dapp's queries and
 * the api: revoked once its revocation's time has come, expired from its `expires_at` second on, and a
 * freshness that halves every half-life of its schema. Pure arithmetic on integer seconds: the dapp runs
 * it on the inspect path, where the wall clock is not to be trusted.
 */
import type { AttestationStatus } from "./wire.ts";

/** A schema's validity period may reach 100 years (in seconds). */
export const MAX_VALIDITY_PERIOD = 100 * 365 * 24 * 3600;

/** `2^(-(at - timestamp) / halfLife)`: 1 at (or before) the attestation's own time, 0.5 one half-life later. */
export function freshnessAt(timestamp: number, halfLife: number, at: number): number {
  if (at <= timestamp) return 1;
  return 2 ** (-(at - timestamp) / halfLife);
}

/** Revoked wins over expired: a revocation is someone's statement, an expiry only the calendar. */
export function statusAt(validity: { revokedAt: number | null; expiresAt: number | null }, at: number): AttestationStatus {
  if (validity.revokedAt !== null && validity.revokedAt <= at) return "revoked";
  if (validity.expiresAt !== null && validity.expiresAt <= at) return "expired";
  return "valid";
}
