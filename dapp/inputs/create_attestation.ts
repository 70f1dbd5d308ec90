import type { Address, Hex } from "viem";
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import type { BucketDefinition } from "../../common/buckets.ts";
import { writeIdOf } from "../../common/ids.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { parseOwnerSealed } from "../../common/owner-sealed.ts";
import { bytesToHex } from "../../common/hex.ts";
import type { Store } from "../db/store.ts";
import { publishedNullifierSchema } from "../../common/nullifier.ts";
import { bindNullifier, checkClaimNullifier } from "../nullifier.ts";
import { checkAttestationProofs, proofsParam } from "../proof.ts";
import { bytes32, fieldRecord, LIMITS, shortText } from "./fields.ts";

export const params = z.object({
  schema_id: bytes32,
  owner: addressSchema,
  provider: shortText,
  encrypted_data: z
    .string()
    .max(2 + 2 * LIMITS.encryptedData, `at most ${LIMITS.encryptedData} bytes`)
    .regex(/^0x(?:[0-9a-fA-F]{2})+$/, "expected non-empty 0x-prefixed hex bytes"),
  bucket_values: fieldRecord(z.string().min(1).max(LIMITS.label))
    .refine((v) => Object.keys(v).length <= LIMITS.bucketFields, `at most ${LIMITS.bucketFields} fields`),
  proofs: proofsParam.optional(),
  /** Required by a schema unique per account (dapp/nullifier.ts judges it). */
  nullifier: publishedNullifierSchema.optional(),
});

/**
 * For a schema that seals to the owner, the data must be in the owner-sealed form with a box for the
 * owner's newest key (and, for "owner+admin", the newest admin key): otherwise whoever attests could seal
 * it to a key of its own. The boxes themselves are opaque here; a wrong one only hurts its sender.
 */
function checkOwnerSealing(store: Store, sealing: "owner" | "owner+admin", schemaId: Hex, owner: Address, encryptedData: string): void {
  const parsed = parseOwnerSealed(hexToBuffer(encryptedData));
  if (typeof parsed === "string") throw new InputRejection("INVALID_PARAMS", `encrypted_data: schema ${schemaId} seals to the owner's key: ${parsed}`);
  const ownerKey = store.ownerKey(hexToBuffer(owner));
  if (ownerKey === undefined) throw new InputRejection("INVALID_PARAMS", `encrypted_data: schema ${schemaId} seals to the owner's key, and ${owner} has registered none (register_owner_key)`);
  const wanted = [bytesToHex(ownerKey.keyId)];
  if (sealing === "owner+admin") {
    const admin = store.latestKey();
    if (admin === undefined) throw new InputRejection("INVALID_PARAMS", `encrypted_data: schema ${schemaId} seals to the admin's key too, and none is registered`);
    wanted.push(bytesToHex(admin.keyId));
  }
  const sealedTo = new Set(parsed.recipients.map((r) => r.keyId));
  const missing = wanted.filter((id) => !sealedTo.has(id));
  if (missing.length > 0) throw new InputRejection("INVALID_PARAMS", `encrypted_data: not sealed to key ${missing.join(", ")} (schema ${schemaId} seals to ${sealing === "owner" ? "the owner's newest key" : "the owner's newest key and the admin's"})`);
  if (parsed.recipients.length !== wanted.length) {
    throw new InputRejection("INVALID_PARAMS", `encrypted_data: sealed to ${parsed.recipients.length} keys; schema ${schemaId} seals to exactly ${wanted.length}`);
  }
}

/** An owner may record its own attestation when it carries signed claims (proven on the owner's side). */
function carriesProofs(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && "proofs" in raw && Array.isArray(raw.proofs) && raw.proofs.length > 0;
}

export default defineInput({
  kind: "create_attestation",
  params,
  sender: { role: "attestor", ownerMay: carriesProofs },
  apply({ store, input }, p) {
    const schemaKey = hexToBuffer(p.schema_id);
    const schema = store.schemaById(schemaKey);
    if (!schema) throw new InputRejection("SCHEMA_NOT_FOUND", `schema not found: ${p.schema_id}`);
    if (p.provider !== schema.providerType) {
      throw new InputRejection("INVALID_PARAMS", `provider: "${p.provider}" is not the schema's provider_type "${schema.providerType}"`);
    }
    const definitions = JSON.parse(schema.bucketDefinitions) as Record<string, BucketDefinition>;
    for (const [field, label] of Object.entries(p.bucket_values)) {
      const definition = Object.hasOwn(definitions, field) ? definitions[field] : undefined;
      if (!definition) throw new InputRejection("INVALID_PARAMS", `bucket_values.${field}: not a bucket field of schema ${p.schema_id}`);
      if (!definition.labels.includes(label)) {
        throw new InputRejection("INVALID_PARAMS", `bucket_values.${field}: "${label}" is not one of the field's labels`);
      }
    }
    if (schema.sealing !== "admin") checkOwnerSealing(store, schema.sealing, p.schema_id, p.owner, p.encrypted_data);
    // Parts no schema rule asks for would sit in calldata meaning nothing: refused rather than ignored.
    if (p.nullifier !== undefined && schema.accountIdField === null) {
      throw new InputRejection("INVALID_PARAMS", `nullifier: schema ${p.schema_id} is not unique per account`);
    }
    const attestationId = writeIdOf("create_attestation", input.index, input.item);
    // Proofs, when present, are checked whatever the schema; a schema with proof "attestor" requires them.
    if (p.proofs === undefined && schema.proof === "attestor") {
      throw new InputRejection("PROOF_REJECTED", `proof: schema ${p.schema_id} requires signed claims from ${schema.attestorQuorum} attestor(s)`);
    }
    let attestors: Address[] = [];
    if (p.proofs !== undefined) {
      const checked = checkAttestationProofs(
        p.proofs,
        {
          schemaId: p.schema_id,
          domain: schema.domain,
          definitions,
          quorum: schema.attestorQuorum,
          owner: p.owner,
          bucketValues: p.bucket_values,
          now: input.timestamp,
        },
        (address) => store.isTlsAttestor(hexToBuffer(address)),
      );
      for (const hex of checked.digests) {
        const digest = hexToBuffer(hex);
        const usedBy = store.claimUsedBy(digest);
        if (usedBy !== undefined) throw new InputRejection("DUPLICATE", `proof: this claim was already used by attestation 0x${usedBy.toString("hex")}`);
        store.useClaim(digest, hexToBuffer(attestationId));
      }
      attestors = checked.attestors;
      // After the proofs: a share counts only from an attestor that signed, as checkProofs found them.
      if (schema.accountIdField !== null) {
        const nullifier = checkClaimNullifier(store, { schemaId: p.schema_id, accountIdField: schema.accountIdField, proofs: p.proofs, signers: checked.attestors, published: p.nullifier });
        bindNullifier(store, { schemaId: p.schema_id, nullifier, owner: p.owner, attestationId, inputIndex: input.index });
      }
    }
    const attestor = attestors[0];
    const expiresAt = schema.validityPeriod === null ? null : input.timestamp + schema.validityPeriod;
    store.insertAttestation({
      inputIndex: input.index,
      itemIndex: input.item,
      attestationId: hexToBuffer(attestationId),
      schemaId: schemaKey,
      owner: hexToBuffer(p.owner),
      encryptedData: hexToBuffer(p.encrypted_data),
      bucketValues: JSON.stringify(p.bucket_values),
      timestamp: input.timestamp,
      blockNumber: input.blockNumber,
      attestor: attestor === undefined ? null : hexToBuffer(attestor),
      attestors: attestors.length > 1 ? JSON.stringify(attestors) : null,
      attester: hexToBuffer(input.sender),
      expiresAt,
    });
    // The notice is the attestation's public record on the base layer (DECISIONS.md section 13): the bucket,
    // never the sealed value. Its keys keep the order they always had; contracts read the input's batch
    // notice instead, which is made from this one (common/attestation-batch.ts).
    const data = {
      claimId: attestationId,
      owner: p.owner,
      provider: p.provider,
      schema_id: p.schema_id.toLowerCase() as Hex,
      bucket_values: p.bucket_values,
      // Only when proven, so an unproven attestation's notice keeps the bytes it always had.
      ...(attestor === undefined ? {} : { attestor }),
      ...(attestors.length > 1 ? { attestors } : {}),
      attester: input.sender,
      timestamp: input.timestamp,
      expires_at: expiresAt,
      freshness_half_life: schema.freshnessHalfLife,
    };
    return [{ event: "attestation:created", data }];
  },
});
