/**
 * Data only its owner and its grantees can open (DECISIONS.md section 16, docs/consent.md). For a schema
 * that seals to the owner, `encrypted_data` is the data sealed under a fresh content key, and the content
 * key sealed to each recipient's registered NaCl key (the owner's; the admin's too where the schema asks):
 *
 *   "OKS1" | u8 recipient count | per recipient: key id (32) | sealed content key (104) | nonce (24) | secretbox
 *
 * A sealed content key is `common/seal.ts`'s box of the 32-byte key (ephemeral key 32, nonce 24, box 48).
 * A grant carries the content key sealed again for the requester's key, made on the owner's side: the api
 * never needs a key to serve a grantee. This file only reads the form (pure: the dapp checks the
 * recipients in the machine); common/content-seal.ts seals and opens, where the keys are.
 */
import { keccak256, type Hex } from "viem";
import { bytesToHex } from "./hex.ts";

export const MAGIC = new Uint8Array([0x4f, 0x4b, 0x53, 0x31]); // "OKS1"
const KEY_ID_BYTES = 32;
/** A content key sealed with common/seal.ts: ephemeral public key 32, nonce 24, the key 32 and a tag 16. */
export const SEALED_CONTENT_KEY_BYTES = 32 + 24 + 32 + 16;
const RECIPIENT_BYTES = KEY_ID_BYTES + SEALED_CONTENT_KEY_BYTES;
export const CONTENT_NONCE_BYTES = 24;
/** nacl.secretbox's tag. */
const BOX_OVERHEAD_BYTES = 16;
export const MAX_RECIPIENTS = 4;

export interface OwnerSealed {
  recipients: { keyId: Hex; sealedKey: Hex }[];
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

/** A registered key's id: keccak256 of its 32 bytes (as register_encryption_key's ids). */
export function keyIdOfBase64(publicKeyBase64: string): Hex {
  return keccak256(new Uint8Array(Buffer.from(publicKeyBase64, "base64")));
}

/** Whether `encrypted_data` is in the owner-sealed form at all (its magic bytes). */
export function isOwnerSealed(bytes: Uint8Array): boolean {
  return bytes.length >= MAGIC.length && MAGIC.every((b, i) => bytes[i] === b);
}

/** The envelope's parts, or a message saying what is wrong with it (never its content). */
export function parseOwnerSealed(bytes: Uint8Array): OwnerSealed | string {
  if (!isOwnerSealed(bytes)) return "not owner-sealed data (it does not start with OKS1)";
  const count = bytes[MAGIC.length] as number;
  if (count === 0 || count > MAX_RECIPIENTS) return `${count} recipients (1 to ${MAX_RECIPIENTS})`;
  const header = MAGIC.length + 1 + count * RECIPIENT_BYTES;
  if (bytes.length < header + CONTENT_NONCE_BYTES + BOX_OVERHEAD_BYTES) return "too short for its recipients, nonce and sealed data";
  const recipients: OwnerSealed["recipients"] = [];
  for (let i = 0; i < count; i++) {
    const at = MAGIC.length + 1 + i * RECIPIENT_BYTES;
    recipients.push({ keyId: bytesToHex(bytes.subarray(at, at + KEY_ID_BYTES)), sealedKey: bytesToHex(bytes.subarray(at + KEY_ID_BYTES, at + RECIPIENT_BYTES)) });
  }
  if (new Set(recipients.map((r) => r.keyId)).size !== recipients.length) return "a recipient appears twice";
  return { recipients, nonce: bytes.subarray(header, header + CONTENT_NONCE_BYTES), ciphertext: bytes.subarray(header + CONTENT_NONCE_BYTES) };
}

