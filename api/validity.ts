/**
 * An attestation's validity as the api shows it (DECISIONS.md section 17): attester, expiry, status,
 * freshness and revocation, from the rollup's view at the api's clock, in the api's camelCase.
 */
import { z } from "@hono/zod-openapi";
import type { AttestationView } from "../common/wire.ts";
import { addressOut, id32, unixSeconds } from "./operations.ts";

/** The validity extensions of an attestation view (DECISIONS.md section 17), at the api's clock unless asked. */
export const validityFields = {
  attester: addressOut.nullable().describe("the account that sent it (EAS's attester); null for attestations recorded before attesters were kept"),
  expiresAt: unixSeconds.nullable().describe("when it stops being valid (its schema's validity period after timestamp), null: never"),
  status: z.enum(["valid", "revoked", "expired"]).describe("its state at `at`"),
  freshness: z.number().min(0).max(1).describe("2^(-(at - timestamp) / the schema's freshness_half_life)"),
  at: unixSeconds.describe("the time status and freshness are computed at: the api's clock"),
  revocation: z
    .object({
      revokedAt: unixSeconds,
      revoker: addressOut,
      reason: z.string(),
      supersededBy: id32.nullable(),
      inputIndex: z.number().int().nonnegative(),
    })
    .nullable()
    .describe("its revocation, null while it stands"),
};

/** The validity extensions of a rollup view, in the api's camelCase. */
export function validityOf(view: AttestationView) {
  const r = view.revocation;
  return {
    attester: view.attester,
    expiresAt: view.expires_at,
    status: view.status,
    freshness: view.freshness,
    at: view.at,
    revocation: r === null ? null : { revokedAt: r.revoked_at, revoker: r.revoker, reason: r.reason, supersededBy: r.superseded_by, inputIndex: r.input_index },
  };
}

