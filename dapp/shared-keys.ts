/**
 * Content keys an owner shares with a grant's requester (docs/consent.md): each the content key of one of
 * the owner's attestations of the grant's schema, sealed on the owner's side to the requester's newest
 * key. The dapp cannot open them (nothing in the machine holds a key); it checks that each names an
 * attestation the grant covers and keeps it with the requester's key id, for the requester to fetch
 * (query `content_key`) while the grant stands.
 */
import type { Address, Hex } from "viem";
import { z } from "zod";
import { bytesToHex } from "../common/hex.ts";
import { SEALED_CONTENT_KEY_BYTES } from "../common/owner-sealed.ts";
import type { SharedKey } from "../common/wire.ts";
import { hexToBuffer } from "./db/bytes.ts";
import type { Store } from "./db/store.ts";
import { InputRejection } from "./errors.ts";
import { bytes32 } from "./inputs/fields.ts";

/** At most this many keys per input: a grant over a long history shares the rest with share_keys. */
export const MAX_SHARED_KEYS = 256;

export const sharedKeysParam = z
  .array(
    z.object({
      attestation_id: bytes32,
      sealed_key: z
        .string()
        .regex(new RegExp(`^0x[0-9a-fA-F]{${SEALED_CONTENT_KEY_BYTES * 2}}$`), `expected the 0x hex of a ${SEALED_CONTENT_KEY_BYTES}-byte sealed content key`)
        .transform((s) => s.toLowerCase() as Hex),
    }),
  )
  .min(1)
  .max(MAX_SHARED_KEYS);

interface Grant {
  grantId: Buffer;
  owner: Address;
  requester: Address;
  schemaId: Buffer;
}

/** Checks every key against the grant and keeps it; throws INVALID_PARAMS naming the first that does not fit. */
export function keepSharedKeys(store: Store, grant: Grant, keys: readonly SharedKey[], inputIndex: number): Hex[] {
  const requesterKey = store.ownerKey(hexToBuffer(grant.requester));
  if (requesterKey === undefined) {
    throw new InputRejection("INVALID_PARAMS", `keys: requester ${grant.requester} has registered no key to seal content keys to (register_owner_key)`);
  }
  const schema = store.schemaById(grant.schemaId);
  if (schema === undefined || schema.sealing === "admin") {
    throw new InputRejection("INVALID_PARAMS", `keys: schema ${bytesToHex(grant.schemaId)} seals to the admin's key: there are no content keys to share`);
  }
  const seen = new Set<string>();
  for (const [i, key] of keys.entries()) {
    if (seen.has(key.attestation_id)) throw new InputRejection("INVALID_PARAMS", `keys.${i}: attestation ${key.attestation_id} appears twice`);
    seen.add(key.attestation_id);
    const attestation = store.attestationById(hexToBuffer(key.attestation_id));
    if (attestation === undefined) throw new InputRejection("ATTESTATION_NOT_FOUND", `keys.${i}: attestation not found: ${key.attestation_id}`);
    if (attestation.owner !== grant.owner || attestation.schemaId !== bytesToHex(grant.schemaId)) {
      throw new InputRejection("INVALID_PARAMS", `keys.${i}: attestation ${key.attestation_id} is not ${grant.owner}'s of schema ${bytesToHex(grant.schemaId)}`);
    }
  }
  for (const key of keys) {
    store.putGrantKey({ grantId: grant.grantId, attestationId: hexToBuffer(key.attestation_id), keyId: requesterKey.keyId, sealedKey: hexToBuffer(key.sealed_key), inputIndex });
  }
  return keys.map((k) => k.attestation_id);
}
