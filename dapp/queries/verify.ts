/**
 * `verify` (an extension, DECISIONS.md section 17): does the owner hold an attestation of the schema that
 * is valid at `at` and meets what the consumer asks (a minimum bucket per field, in the schema's label
 * order; a minimum freshness; attestors that must have proven it)? The owner's attestations of the
 * schema are looked at newest first, and the newest that qualifies is the one relied on. When none does,
 * the reasons are the newest one's: the attestation a consumer would expect to count.
 */
import type { Address, Hex } from "viem";
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import type { BucketDefinition } from "../../common/buckets.ts";
import { freshnessAt, statusAt } from "../../common/validity.ts";
import type { VerifyReasonCode, VerifyResult } from "../../common/wire.ts";
import { hexToBuffer } from "../db/bytes.ts";
import type { AttestationRead } from "../db/store.ts";
import { atParam, defineQuery, queryTime } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { bytes32, fieldName } from "../inputs/fields.ts";
import { attestationView } from "../views.ts";

/** Attestations looked at per call: an owner's history of one schema beyond this is not searched. */
export const VERIFY_SCAN_LIMIT = 1000;

const params = z.object({
  owner: addressSchema,
  schema_id: bytes32,
  /** A label for a schema of one bucket field, or field → label. */
  min_bucket: z.union([z.string().min(1), z.record(fieldName, z.string().min(1))]).optional(),
  min_freshness: z.number().gt(0).max(1).optional(),
  attestors: z.array(addressSchema).min(1).max(16).optional(),
  at: atParam,
});

type Reason = { code: VerifyReasonCode; message: string };

/** The minimum label per field as ranks in the schema's order, or a rejection naming what is wrong. */
function minimumRanks(minimum: string | Record<string, string>, definitions: Record<string, BucketDefinition>, schemaId: Hex): Map<string, number> {
  const fields = Object.keys(definitions);
  let wanted: Record<string, string>;
  if (typeof minimum === "string") {
    if (fields.length !== 1) throw new QueryRejection(`invalid query: min_bucket: schema ${schemaId} has ${fields.length} bucket fields; give {field: label}`);
    wanted = { [fields[0] as string]: minimum };
  } else wanted = minimum;
  const ranks = new Map<string, number>();
  for (const [field, label] of Object.entries(wanted)) {
    const definition = Object.hasOwn(definitions, field) ? definitions[field] : undefined;
    if (definition === undefined) throw new QueryRejection(`invalid query: min_bucket.${field}: not a bucket field of schema ${schemaId}`);
    const rank = definition.labels.indexOf(label);
    if (rank < 0) throw new QueryRejection(`invalid query: min_bucket.${field}: "${label}" is not one of the field's labels (${definition.labels.join(", ")})`);
    ranks.set(field, rank);
  }
  return ranks;
}

export default defineQuery({
  type: "verify",
  params,
  read({ store }, p): VerifyResult {
    const schema = store.schemaById(hexToBuffer(p.schema_id));
    if (schema === undefined) throw new QueryRejection(`schema not found: ${p.schema_id}`);
    const definitions = JSON.parse(schema.bucketDefinitions) as Record<string, BucketDefinition>;
    const ranks = p.min_bucket === undefined ? new Map<string, number>() : minimumRanks(p.min_bucket, definitions, p.schema_id);
    const at = queryTime(store, p.at);
    const halfLife = schema.freshnessHalfLife;
    const required = (p.attestors ?? []).map((a) => a.toLowerCase() as Address);

    const problemsOf = (row: AttestationRead, freshness: number): Reason[] => {
      const id = row.attestationId;
      const reasons: Reason[] = [];
      const status = statusAt(row, at);
      if (status === "revoked") {
        const why = row.revocationReason ? `: ${row.revocationReason}` : "";
        reasons.push({ code: "REVOKED", message: `attestation ${id} was revoked at ${row.revokedAt ?? 0}${why}` });
      } else if (status === "expired") reasons.push({ code: "EXPIRED", message: `attestation ${id} expired at ${row.expiresAt ?? 0}` });
      const buckets = JSON.parse(row.bucketValues) as Record<string, string>;
      for (const [field, minimum] of ranks) {
        const labels = definitions[field]?.labels ?? [];
        const label = Object.hasOwn(buckets, field) ? buckets[field] : undefined;
        if (label === undefined) reasons.push({ code: "BUCKET_BELOW_MINIMUM", message: `attestation ${id} has no bucket for ${field}` });
        else if (labels.indexOf(label) < minimum) {
          reasons.push({ code: "BUCKET_BELOW_MINIMUM", message: `attestation ${id}: ${field} is "${label}", below the minimum "${labels[minimum] ?? ""}"` });
        }
      }
      if (p.min_freshness !== undefined && freshness < p.min_freshness) {
        reasons.push({ code: "NOT_FRESH", message: `attestation ${id} has freshness ${freshness} at ${at}, below the minimum ${p.min_freshness}` });
      }
      if (required.length > 0) {
        const provers = new Set(row.attestors !== null ? (JSON.parse(row.attestors) as string[]) : row.attestor === null ? [] : [row.attestor]);
        for (const attestor of required) {
          if (!provers.has(attestor)) reasons.push({ code: "ATTESTOR_MISSING", message: `attestation ${id} was not proven by attestor ${attestor}` });
        }
      }
      return reasons;
    };

    const rows = store.attestationsOfSchema(hexToBuffer(p.owner), hexToBuffer(p.schema_id), at, VERIFY_SCAN_LIMIT);
    const newest = rows[0];
    if (newest === undefined) {
      const reason = { code: "NO_ATTESTATION" as const, message: `${p.owner} holds no attestation of schema ${p.schema_id} made at or before ${at}` };
      return { valid: false, reasons: [reason], attestation: null, freshness: null, at, checked: 0 };
    }
    let newestReasons: Reason[] = [];
    let checked = 0;
    for (const row of rows) {
      checked++;
      const freshness = freshnessAt(row.timestamp, halfLife, at);
      const reasons = problemsOf(row, freshness);
      if (reasons.length === 0) return { valid: true, reasons: [], attestation: attestationView(row, { at, halfLife }), freshness, at, checked };
      if (row === newest) newestReasons = reasons;
      // Older attestations are no fresher: once one falls short of the minimum, every later one does.
      if (reasons.some((r) => r.code === "NOT_FRESH")) break;
    }
    return { valid: false, reasons: newestReasons, attestation: attestationView(newest, { at, halfLife }), freshness: freshnessAt(newest.timestamp, halfLife, at), at, checked };
  },
});
