/**
 * Sealing of `encrypted_data` (DECISIONS.md section 5), by the api or on the user's side: `nacl.box` (X25519, XSalsa20-Poly1305) from a
 * fresh ephemeral key pair to the registered key. The sealed form is `0x` + hex of
 * `ephemeral public key (32) | nonce (24) | ciphertext (plaintext + 16-byte tag)`, so the key holder
 * needs nothing but its secret key to open it.
 */
import { createPublicKey, diffieHellman, generateKeyPairSync, randomFillSync, type KeyObject } from "node:crypto";
import nacl from "tweetnacl";
import { bytesToHex, hexToBytes } from "./hex.ts";

/**
 * Why a key or a sealed text is unusable, with the specification's code and details (the api answers
 * with them; `npm run prove` and `npm run open` print them). Never the plaintext.
 */
export class SealError extends Error {
  override readonly name = "SealError";
  constructor(
    readonly code: "INVALID_KEY_FORMAT" | "DECRYPTION_FAILED",
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const SEAL_PUBLIC_KEY_BYTES = nacl.box.publicKeyLength;
export const SEAL_NONCE_BYTES = nacl.box.nonceLength;
const HEADER_BYTES = SEAL_PUBLIC_KEY_BYTES + SEAL_NONCE_BYTES;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeRecipientKey(base64: string): Uint8Array {
  const expected = `a base64-encoded ${SEAL_PUBLIC_KEY_BYTES}-byte NaCl public key`;
  if (!BASE64_RE.test(base64)) {
    throw new SealError("INVALID_KEY_FORMAT", "encryption key is not base64", { expected, received: "not base64" });
  }
  const key = new Uint8Array(Buffer.from(base64, "base64"));
  if (key.length !== SEAL_PUBLIC_KEY_BYTES) {
    throw new SealError("INVALID_KEY_FORMAT", "encryption key has the wrong length", { expected, received: `${key.length} bytes` });
  }
  return key;
}

/**
 * tweetnacl's HSalsa20 core, which it exports at run time but not in its types. It turns an X25519 shared
 * secret into the key of `nacl.box` (what `nacl.box.before` does after its scalar multiplication).
 */
const naclLowLevel = (nacl as unknown as { lowlevel: { crypto_core_hsalsa20(out: Uint8Array, input: Uint8Array, key: Uint8Array, constant: Uint8Array): number } }).lowlevel;
const HSALSA_SIGMA = new TextEncoder().encode("expand 32-byte k");
const ZERO_16 = new Uint8Array(16);

/** Recipient keys as node KeyObjects, per base64 key: the registered key changes rarely. */
const recipientKeys = new Map<string, KeyObject>();

function recipientKeyObject(base64: string, raw: Uint8Array): KeyObject {
  let key = recipientKeys.get(base64);
  if (key === undefined) {
    key = createPublicKey({ key: { kty: "OKP", crv: "X25519", x: Buffer.from(raw).toString("base64url") }, format: "jwk" });
    if (recipientKeys.size > 16) recipientKeys.clear();
    recipientKeys.set(base64, key);
  }
  return key;
}

/**
 * `nacl.box`'s shared key, with the X25519 step done by node's native crypto: tweetnacl's pure-JS scalar
 * multiplications made a seal cost 2.9 ms here (two per seal), a ceiling of ~350 claims/s on one core.
 * The bytes are those of `nacl.box`: HSalsa20 of the same shared secret, then `nacl.secretbox`.
 */
function ephemeralBoxKey(recipientBase64: string, recipient: Uint8Array): { publicKey: Uint8Array; sharedKey: Uint8Array } | undefined {
  let shared: Buffer;
  let publicKey: Uint8Array;
  try {
    const pair = generateKeyPairSync("x25519");
    shared = diffieHellman({ privateKey: pair.privateKey, publicKey: recipientKeyObject(recipientBase64, recipient) });
    const jwk = pair.publicKey.export({ format: "jwk" });
    publicKey = new Uint8Array(Buffer.from(jwk.x ?? "", "base64url"));
  } catch {
    // OpenSSL refuses low-order points; tweetnacl seals to them anyway, so such a key takes the slow path.
    return undefined;
  }
  const sharedKey = new Uint8Array(32);
  naclLowLevel.crypto_core_hsalsa20(sharedKey, ZERO_16, new Uint8Array(shared), HSALSA_SIGMA);
  return { publicKey, sharedKey };
}

export function sealForKey(plaintext: Uint8Array, recipientPublicKeyBase64: string): `0x${string}` {
  const recipient = decodeRecipientKey(recipientPublicKeyBase64);
  const nonce = new Uint8Array(SEAL_NONCE_BYTES);
  randomFillSync(nonce);
  // A fresh pair per seal: the sender keeps no key, and two seals of one plaintext are unlinkable.
  let ephemeralPublicKey: Uint8Array;
  let ciphertext: Uint8Array;
  const fast = ephemeralBoxKey(recipientPublicKeyBase64, recipient);
  if (fast !== undefined) {
    ephemeralPublicKey = fast.publicKey;
    ciphertext = nacl.secretbox(plaintext, nonce, fast.sharedKey);
  } else {
    const ephemeral = nacl.box.keyPair();
    ephemeralPublicKey = ephemeral.publicKey;
    ciphertext = nacl.box(plaintext, nonce, recipient, ephemeral.secretKey);
  }
  const sealed = new Uint8Array(HEADER_BYTES + ciphertext.length);
  sealed.set(ephemeralPublicKey, 0);
  sealed.set(nonce, SEAL_PUBLIC_KEY_BYTES);
  sealed.set(ciphertext, HEADER_BYTES);
  return bytesToHex(sealed);
}

function decryptionFailed(reason: string): SealError {
  return new SealError("DECRYPTION_FAILED", `sealed data cannot be opened: ${reason}`, { reason });
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
