/**
 * The fields of the dapp's attestation notices as the contracts take them (`Attestation` and `Revocation` of
 * contracts/AttestationNotice.sol): the contracts rebuild the notice's exact bytes from these and have the
 * application prove them, so a consumer passes fields, never JSON. Parsed strictly: a notice with a key the
 * contracts do not rebuild, or a value they cannot write back byte for byte, is refused here with the reason
 * rather than reverted on chain.
 */
import type { Address, Hex } from "viem";
import { z } from "zod";

export interface NoticeAttestation {
  claimId: Hex;
  owner: Address;
  provider: string;
  schemaId: Hex;
  field: string;
  bucket: string;
  /** Every TLS attestor that proved it, the notice's `attestor` first; empty for an unproven one. */
  attestors: Address[];
  attester: Address;
  timestamp: bigint;
  expiresAt: bigint;
  halfLife: bigint;
}

export interface NoticeRevocation {
  claimId: Hex;
  owner: Address;
  schemaId: Hex;
  revoker: Address;
  revokedAt: bigint;
  reason: string;
  supersededBy: Hex;
}

const ZERO_ID: Hex = `0x${"00".repeat(32)}`;
const id = z.string().regex(/^0x[0-9a-f]{64}$/).transform((v) => v as Hex);
const address = z.string().regex(/^0x[0-9a-f]{40}$/).transform((v) => v as Address);
const seconds = z.int().nonnegative();
/** What the contracts can write back: JSON escapes quotes, backslashes and control characters. */
const plain = z.string().regex(/^[^"\\\u0000-\u001f]*$/, "text JSON escapes cannot be rebuilt on chain");

const createdNotice = z.strictObject({
  event: z.literal("attestation:created"),
  data: z.strictObject({
    claimId: id,
    owner: address,
    provider: plain,
    schema_id: id,
    bucket_values: z.record(plain, plain).refine((v) => Object.keys(v).length === 1, "one bucketed field (as the api makes them)"),
    attestor: address.optional(),
    attestors: z.array(address).min(2).optional(),
    attester: address,
    timestamp: seconds,
    expires_at: seconds.nullable(),
    freshness_half_life: z.number().refine(Number.isInteger, "a whole number of seconds: a fractional half-life cannot be rebuilt on chain"),
  }),
});

const revokedNotice = z.strictObject({
  event: z.literal("attestation:revoked"),
  data: z.strictObject({
    claimId: id,
    owner: address,
    schema_id: id,
    revoker: address,
    revoked_at: seconds,
    reason: plain,
    superseded_by: id.nullable(),
  }),
});

export class NoticeFieldsError extends Error {
  override readonly name = "NoticeFieldsError";
}

function parsed<T>(schema: z.ZodType<T>, text: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new NoticeFieldsError("the notice is not JSON");
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new NoticeFieldsError(`the notice cannot be rebuilt on chain: ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
}

/** The event of a notice's JSON text, or undefined when it is no attestation event. */
export function noticeEvent(text: string): "attestation:created" | "attestation:revoked" | undefined {
  try {
    const event = (JSON.parse(text) as { event?: unknown }).event;
    return event === "attestation:created" || event === "attestation:revoked" ? event : undefined;
  } catch {
    return undefined;
  }
}

/** The fields of an `attestation:created` notice (its JSON text), for the contracts' `record`. */
export function attestationFields(text: string): NoticeAttestation {
  const { data } = parsed(createdNotice, text);
  const [[field, bucket]] = Object.entries(data.bucket_values) as [[string, string]];
  if (data.attestors !== undefined && data.attestors[0] !== data.attestor) throw new NoticeFieldsError("the notice cannot be rebuilt on chain: its attestor is not the first of its attestors");
  return {
    claimId: data.claimId,
    owner: data.owner,
    provider: data.provider,
    schemaId: data.schema_id,
    field,
    bucket,
    attestors: data.attestors ?? (data.attestor === undefined ? [] : [data.attestor]),
    attester: data.attester,
    timestamp: BigInt(data.timestamp),
    expiresAt: BigInt(data.expires_at ?? 0),
    halfLife: BigInt(data.freshness_half_life),
  };
}

/** The fields of an `attestation:revoked` notice (its JSON text), for the contracts' `revoke`. */
export function revocationFields(text: string): NoticeRevocation {
  const { data } = parsed(revokedNotice, text);
  return {
    claimId: data.claimId,
    owner: data.owner,
    schemaId: data.schema_id,
    revoker: data.revoker,
    revokedAt: BigInt(data.revoked_at),
    reason: data.reason,
    supersededBy: data.superseded_by ?? ZERO_ID,
  };
}
