/**
 * Sealing and opening data in the owner-sealed form (common/owner-sealed.ts): where the keys are — the api
 * or the user's machine seals, the owner and its grantees open on their side.
 */
import nacl from "tweetnacl";
import type { Hex } from "viem";
import { hexToBytes } from "./hex.ts";
import { keyIdOfBase64, MAGIC, MAX_RECIPIENTS, parseOwnerSealed } from "./owner-sealed.ts";
import { openSealed, SealError, sealForKey } from "./seal.ts";
import { bytesToHex } from "./hex.ts";

/** Seals `plaintext` under a fresh content key, the key sealed to every recipient (base64 NaCl public keys). */
export function sealToOwner(plaintext: Uint8Array, recipients: readonly string[]): Hex {
  if (recipients.length === 0 || recipients.length > MAX_RECIPIENTS) throw new Error(`1 to ${MAX_RECIPIENTS} recipients, not ${recipients.length}`);
  const contentKey = nacl.randomBytes(nacl.secretbox.keyLength);
  const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
  const ciphertext = nacl.secretbox(plaintext, nonce, contentKey);
  const parts: Uint8Array[] = [MAGIC, new Uint8Array([recipients.length])];
  for (const publicKey of recipients) {
    parts.push(hexToBytes(keyIdOfBase64(publicKey)), hexToBytes(sealForKey(contentKey, publicKey)));
  }
  parts.push(nonce, ciphertext);
  return bytesToHex(Buffer.concat(parts));
}

/** The content key, opened with the secret key of recipient `keyId` (its box in the data, or one a grant carried). */
export function openContentKey(sealedKey: Hex, secretKey: Uint8Array): Uint8Array {
  const key = openSealed(sealedKey, secretKey);
  if (key.length !== nacl.secretbox.keyLength) throw new SealError("DECRYPTION_FAILED", "sealed data cannot be opened: the content key has the wrong length", { reason: "content key of the wrong length" });
  return key;
}

/** The owner's side of a grant: the content key sealed again for the requester's registered key. */
export function resealContentKey(encryptedData: Hex, ownerKeyId: Hex, ownerSecretKey: Uint8Array, requesterPublicKey: string): Hex {
  const parsed = parseOwnerSealed(hexToBytes(encryptedData));
  if (typeof parsed === "string") throw new SealError("DECRYPTION_FAILED", `sealed data cannot be opened: ${parsed}`, { reason: parsed });
  const own = parsed.recipients.find((r) => r.keyId === ownerKeyId.toLowerCase());
  if (own === undefined) throw new SealError("DECRYPTION_FAILED", "sealed data cannot be opened: it is not sealed to this key", { reason: "not sealed to this key" });
  return sealForKey(openContentKey(own.sealedKey, ownerSecretKey), requesterPublicKey);
}

/**
 * Opens owner-sealed data with a secret key: from the data's own box for `keyId` (the owner, or the admin
 * where the schema seals to it), or from `sealedKey`, the box a grant carried for a requester.
 */
export function openOwnerSealed(encryptedData: Hex, secretKey: Uint8Array, by: { keyId: Hex } | { sealedKey: Hex }): Uint8Array {
  const parsed = parseOwnerSealed(hexToBytes(encryptedData));
  if (typeof parsed === "string") throw new SealError("DECRYPTION_FAILED", `sealed data cannot be opened: ${parsed}`, { reason: parsed });
  let sealedKey: Hex;
  if ("sealedKey" in by) sealedKey = by.sealedKey;
  else {
    const own = parsed.recipients.find((r) => r.keyId === by.keyId.toLowerCase());
    if (own === undefined) throw new SealError("DECRYPTION_FAILED", "sealed data cannot be opened: it is not sealed to this key", { reason: "not sealed to this key" });
    sealedKey = own.sealedKey;
  }
  const opened = nacl.secretbox.open(parsed.ciphertext, parsed.nonce, openContentKey(sealedKey, secretKey));
  if (opened === null) throw new SealError("DECRYPTION_FAILED", "sealed data cannot be opened: wrong key or tampered data", { reason: "wrong key or tampered data" });
  return opened;
}
