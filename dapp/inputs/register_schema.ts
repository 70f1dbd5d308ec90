import { z } from "zod";
import { canonicalJson } from "../../common/canonical.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { MAX_QUORUM, PROOF_KINDS, proofSchemaIssues } from "../../common/tls-claim.ts";
import { hexToBuffer } from "../db/bytes.ts";
import type { Store } from "../db/store.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { MAX_VALIDITY_PERIOD } from "../../common/validity.ts";
import { SEALINGS } from "../../common/wire.ts";
import { bucketDefinitions, LIMITS, shortText } from "./fields.ts";

export const params = z.object({
  provider: shortText,
  flowType: shortText,
  domain: shortText,
  bucketDefinitions,
  dataKeys: z.array(z.string().min(1).max(LIMITS.shortText)).max(LIMITS.dataKeys),
  freshnessHalfLife: z.number().positive(),
  name: shortText.optional(),
  description: z.string().max(LIMITS.description).optional(),
  proof: z.enum(PROOF_KINDS).optional(),
  attestorQuorum: z.int().min(1).max(MAX_QUORUM).optional(),
  /** Seconds an attestation of the schema stays valid (at most 100 years); absent: attestations never expire. */
  validityPeriod: z.int().min(1).max(MAX_VALIDITY_PERIOD).optional(),
  /** Grants and revokes of the schema's data need the owner's own consent: relayed ones are refused. */
  requireSignedConsent: z.boolean().optional(),
  /** Whose keys open its attestations' data: the admin's registered key (default), the owner's, or both. */
  sealing: z.enum(SEALINGS).optional(),
  /** The JSON path of the provider's account id: the schema is then unique per account (docs/nullifiers.md). */
  accountIdField: z.string().min(1).max(LIMITS.shortText).optional(),
}).superRefine((p, ctx) => {
  for (const issue of proofSchemaIssues(p)) ctx.addIssue({ code: "custom", ...issue });
});

/**
 * A schema unique per account needs the nullifier key set, and a quorum of at least its threshold t: the
 * dapp counts a nullifier's shares only from the claim's signers, so fewer signers could never give t.
 */
function checkUniqueSchema(store: Store, quorum: number): void {
  const keys = store.nullifierKeys();
  if (keys === undefined) {
    throw new InputRejection("INVALID_PARAMS", "accountIdField: no nullifier key set is registered (set_nullifier_keys): a schema unique per account needs one");
  }
  if (quorum < keys.threshold) {
    throw new InputRejection(
      "INVALID_PARAMS",
      `accountIdField: a schema unique per account needs an attestorQuorum of at least the nullifier threshold ${keys.threshold} (got ${quorum}): shares count only from a claim's signers`,
    );
  }
}

/** Registers a provider schema; identical content is already registered, so it is accepted as a no-op. */
export default defineInput({
  kind: "register_schema",
  params,
  sender: { role: "admin" },
  apply({ store, input }, p) {
    const schemaId = schemaIdOf(p);
    const key = hexToBuffer(schemaId);
    if (store.schemaById(key)) return [];
    if (p.accountIdField !== undefined) checkUniqueSchema(store, p.attestorQuorum ?? 1);
    store.insertSchema({
      inputIndex: input.index,
      itemIndex: input.item,
      schemaId: key,
      name: p.name ?? `${p.domain}/${p.flowType}`,
      description: p.description ?? "",
      providerType: p.provider,
      flowType: p.flowType,
      domain: p.domain,
      bucketDefinitions: canonicalJson(p.bucketDefinitions),
      dataKeys: JSON.stringify(p.dataKeys),
      freshnessHalfLife: p.freshnessHalfLife,
      createdAt: input.timestamp,
      proof: p.proof ?? "none",
      attestorQuorum: p.attestorQuorum ?? 1,
      validityPeriod: p.validityPeriod ?? null,
      requireSignedConsent: p.requireSignedConsent === true,
      sealing: p.sealing ?? "admin",
      accountIdField: p.accountIdField ?? null,
    });
    return [{ event: "schema:registered", data: { schema_id: schemaId } }];
  },
});
