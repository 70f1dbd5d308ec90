/**
 * Sealing of `encrypted_data` (DECISIONS.md section 5): `nacl.box` (X25519, XSalsa20-Poly1305) from a
 * fresh ephemeral key pair to the registered key. The sealed form is `0x` + hex of
 * `ephemeral public key (32) | nonce (24) | ciphertext (plaintext + 16-byte tag)`, so the key holder
 * needs nothing but its secret key to open it.
 */
import nacl from "tweetnacl";
import { bytesToHex, hexToBytes } from "../common/hex.ts";
import { ApiError } from "./errors.ts";

export const SEAL_PUBLIC_KEY_BYTES = nacl.box.publicKeyLength;
export const SEAL_NONCE_BYTES = nacl.box.nonceLength;
const HEADER_BYTES = SEAL_PUBLIC_KEY_BYTES + SEAL_NONCE_BYTES;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeRecipientKey(base64: string): Uint8Array {
  const expected = `a base64-encoded ${SEAL_PUBLIC_KEY_BYTES}-byte NaCl public key`;
  if (!BASE64_RE.test(base64)) {
    throw new ApiError("INVALID_KEY_FORMAT", "encryption key is not base64", { expected, received: "not base64" });
  }
  const key = new Uint8Array(Buffer.from(base64, "base64"));
  if (key.length !== SEAL_PUBLIC_KEY_BYTES) {
    throw new ApiError("INVALID_KEY_FORMAT", "encryption key has the wrong length", { expected, received: `${key.length} bytes` });
  }
  return key;
}

export function sealForKey(plaintext: Uint8Array, recipientPublicKeyBase64: string): `0x${string}` {
  const recipient = decodeRecipientKey(recipientPublicKeyBase64);
  // A fresh pair per seal: the sender keeps no key, and two seals of one plaintext are unlinkable.
  const ephemeral = nacl.box.keyPair();
  const nonce = nacl.randomBytes(SEAL_NONCE_BYTES);
  const ciphertext = nacl.box(plaintext, nonce, recipient, ephemeral.secretKey);
  const sealed = new Uint8Array(HEADER_BYTES + ciphertext.length);
  sealed.set(ephemeral.publicKey, 0);
  sealed.set(nonce, SEAL_PUBLIC_KEY_BYTES);
  sealed.set(ciphertext, HEADER_BYTES);
  return bytesToHex(sealed);
}

function decryptionFailed(reason: string): ApiError {
  return new ApiError("DECRYPTION_FAILED", `sealed data cannot be opened: ${reason}`, { reason });
}

export function openSealed(sealed: string, recipientSecretKey: Uint8Array): Uint8Array {
  if (recipientSecretKey.length !== nacl.box.secretKeyLength) {
    throw decryptionFailed(`secret key must be ${nacl.box.secretKeyLength} bytes`);
  }
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(sealed);
  } catch {
    throw decryptionFailed("sealed data is not 0x-prefixed hex");
  }
  if (bytes.length < HEADER_BYTES + nacl.box.overheadLength) throw decryptionFailed("sealed data is too short");
  const opened = nacl.box.open(
    bytes.subarray(HEADER_BYTES),
    bytes.subarray(SEAL_PUBLIC_KEY_BYTES, HEADER_BYTES),
    bytes.subarray(0, SEAL_PUBLIC_KEY_BYTES),
    recipientSecretKey,
  );
  if (opened === null) throw decryptionFailed("wrong key or tampered data");
  return opened;
}
