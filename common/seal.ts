/**
 * Sealing of `encrypted_data` (DECISIONS.md section 5), by the api or on the user's side: `nacl.box` (X25519,
 * XSalsa20-Poly1305) from a fresh ephemeral key pair to the registered key, in one of two layouts:
 *
 * - the **sealed box** (`sealAnonymous`, what claims are sealed with since issue 37): `ephemeral public key
 *   (32) | box (plaintext + 16-byte tag)`, the nonce not sent but derived, `BLAKE2b-192(ephemeral pk |
 *   recipient pk)`: libsodium's `crypto_box_seal` byte for byte, 24 bytes shorter on chain;
 * - the **nonce-carrying box** (`sealForKey`, every seal before it, and content keys of owner-sealed data
 *   still): `ephemeral public key (32) | nonce (24) | box`.
 *
 * `openSealed` opens both with nothing but the secret key: the sealed box first, then the other. Each
 * attempt authenticates (Poly1305), so a box opens under its own layout only, and a fixed order gives
 * every opener the same answer.
 */
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, randomFillSync, type KeyObject } from "node:crypto";
import { blake2b } from "@noble/hashes/blake2";
import nacl from "tweetnacl";
import { bytesToHex, hexToBytes } from "./hex.ts";
import type { Hex } from "viem";

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
/** What a sealed box adds to its plaintext: the ephemeral public key and the tag. */
export const SEALED_BOX_OVERHEAD = SEAL_PUBLIC_KEY_BYTES + nacl.box.overheadLength;
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

/** An X25519 public key as a node KeyObject. */
function x25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: "OKP", crv: "X25519", x: Buffer.from(raw).toString("base64url") }, format: "jwk" });
}

function rawPublicKey(key: KeyObject): Uint8Array {
  return new Uint8Array(Buffer.from(key.export({ format: "jwk" }).x ?? "", "base64url"));
}

/** Recipient keys as node KeyObjects, per base64 key: the registered key changes rarely. */
const recipientKeys = new Map<string, KeyObject>();

function recipientKeyObject(base64: string, raw: Uint8Array): KeyObject {
  let key = recipientKeys.get(base64);
  if (key === undefined) {
    key = x25519PublicKey(raw);
    if (recipientKeys.size > 16) recipientKeys.clear();
    recipientKeys.set(base64, key);
  }
  return key;
}

/** DER of a PKCS#8 X25519 private key, before its 32 bytes: lets node's native X25519 take a raw secret key. */
const X25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");

/** An opener's secret key as a node KeyObject, and its public key, per secret key: an opener holds one or two. */
const openerKeys = new Map<string, { privateKey: KeyObject; publicKey: Uint8Array }>();

function openerKeyObjects(secretKey: Uint8Array): { privateKey: KeyObject; publicKey: Uint8Array } {
  const id = Buffer.from(secretKey).toString("base64");
  let keys = openerKeys.get(id);
  if (keys === undefined) {
    const privateKey = createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, secretKey]), format: "der", type: "pkcs8" });
    keys = { privateKey, publicKey: rawPublicKey(createPublicKey(privateKey)) };
    if (openerKeys.size > 16) openerKeys.clear();
    openerKeys.set(id, keys);
  }
  return keys;
}

/**
 * `nacl.box`'s shared key, with the X25519 step done by node's native crypto: tweetnacl's pure-JS scalar
 * multiplications made a seal cost 2.9 ms here (two per seal), a ceiling of ~350 claims/s on one core.
 * The bytes are those of `nacl.box.before`: HSalsa20 of the same shared secret. Undefined where OpenSSL
 * refuses the point (a low-order key, which tweetnacl takes): the caller goes tweetnacl's way then.
 */
function nativeBoxKey(privateKey: KeyObject, publicKey: KeyObject): Uint8Array | undefined {
  let shared: Buffer;
  try {
    shared = diffieHellman({ privateKey, publicKey });
  } catch {
    return undefined;
  }
  const sharedKey = new Uint8Array(32);
  naclLowLevel.crypto_core_hsalsa20(sharedKey, ZERO_16, new Uint8Array(shared), HSALSA_SIGMA);
  return sharedKey;
}

/** A fresh ephemeral key pair's public key and its shared key with the recipient, natively (`nativeBoxKey`). */
function ephemeralBoxKey(recipientBase64: string, recipient: Uint8Array): { publicKey: Uint8Array; sharedKey: Uint8Array } | undefined {
  const pair = generateKeyPairSync("x25519");
  const sharedKey = nativeBoxKey(pair.privateKey, recipientKeyObject(recipientBase64, recipient));
  return sharedKey === undefined ? undefined : { publicKey: rawPublicKey(pair.publicKey), sharedKey };
}

/** The sealed box's nonce: BLAKE2b-192 of the ephemeral and the recipient's public keys (libsodium's). */
export function sealedBoxNonce(ephemeralPublicKey: Uint8Array, recipientPublicKey: Uint8Array): Uint8Array {
  const input = new Uint8Array(2 * SEAL_PUBLIC_KEY_BYTES);
  input.set(ephemeralPublicKey, 0);
  input.set(recipientPublicKey, SEAL_PUBLIC_KEY_BYTES);
  return blake2b(input, { dkLen: SEAL_NONCE_BYTES });
}

/** `ephemeral public key | box`: a fresh key pair per seal, the nonce derived from both public keys. */
function seal(plaintext: Uint8Array, recipientPublicKeyBase64: string, sentNonce: Uint8Array | undefined): Hex {
  const recipient = decodeRecipientKey(recipientPublicKeyBase64);
  // A fresh pair per seal: the sender keeps no key, and two seals of one plaintext are unlinkable.
  let ephemeralPublicKey: Uint8Array;
  let box: (nonce: Uint8Array) => Uint8Array;
  const fast = ephemeralBoxKey(recipientPublicKeyBase64, recipient);
  if (fast !== undefined) {
    ephemeralPublicKey = fast.publicKey;
    box = (nonce) => nacl.secretbox(plaintext, nonce, fast.sharedKey);
  } else {
    const ephemeral = nacl.box.keyPair();
    ephemeralPublicKey = ephemeral.publicKey;
    box = (nonce) => nacl.box(plaintext, nonce, recipient, ephemeral.secretKey);
  }
  const nonce = sentNonce ?? sealedBoxNonce(ephemeralPublicKey, recipient);
  const ciphertext = box(nonce);
  const sent = sentNonce === undefined ? 0 : SEAL_NONCE_BYTES;
  const sealed = new Uint8Array(SEAL_PUBLIC_KEY_BYTES + sent + ciphertext.length);
  sealed.set(ephemeralPublicKey, 0);
  if (sentNonce !== undefined) sealed.set(sentNonce, SEAL_PUBLIC_KEY_BYTES);
  sealed.set(ciphertext, SEAL_PUBLIC_KEY_BYTES + sent);
  return bytesToHex(sealed);
}

/**
 * A sealed box (libsodium's `crypto_box_seal`): `ephemeral public key (32) | box (plaintext + 16)`. The
 * nonce need not travel: the ephemeral key is fresh, so the nonce derived from it is never used twice.
 */
export function sealAnonymous(plaintext: Uint8Array, recipientPublicKeyBase64: string): Hex {
  return seal(plaintext, recipientPublicKeyBase64, undefined);
}

/** The nonce-carrying layout: `ephemeral public key (32) | random nonce (24) | box (plaintext + 16)`. */
export function sealForKey(plaintext: Uint8Array, recipientPublicKeyBase64: string): Hex {
  const nonce = new Uint8Array(SEAL_NONCE_BYTES);
  randomFillSync(nonce);
  return seal(plaintext, recipientPublicKeyBase64, nonce);
}

function decryptionFailed(reason: string): SealError {
  return new SealError("DECRYPTION_FAILED", `sealed data cannot be opened: ${reason}`, { reason });
}

/** The recipient's public key and `nacl.box.before(ephemeral, secret)`, natively where OpenSSL takes the point. */
function openingKeys(ephemeralPublicKey: Uint8Array, secretKey: Uint8Array): { publicKey: Uint8Array; sharedKey: Uint8Array } {
  const opener = openerKeyObjects(secretKey);
  const sharedKey = nativeBoxKey(opener.privateKey, x25519PublicKey(ephemeralPublicKey)) ?? nacl.box.before(ephemeralPublicKey, secretKey);
  return { publicKey: opener.publicKey, sharedKey };
}

/** Opens either layout (the sealed box first); see the top of this file. */
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
  if (bytes.length < SEALED_BOX_OVERHEAD) throw decryptionFailed("sealed data is too short");
  const ephemeralPublicKey = bytes.subarray(0, SEAL_PUBLIC_KEY_BYTES);
  const keys = openingKeys(ephemeralPublicKey, recipientSecretKey);
  const anonymous = nacl.secretbox.open(bytes.subarray(SEAL_PUBLIC_KEY_BYTES), sealedBoxNonce(ephemeralPublicKey, keys.publicKey), keys.sharedKey);
  if (anonymous !== null) return anonymous;
  if (bytes.length >= HEADER_BYTES + nacl.box.overheadLength) {
    const carried = nacl.secretbox.open(bytes.subarray(HEADER_BYTES), bytes.subarray(SEAL_PUBLIC_KEY_BYTES, HEADER_BYTES), keys.sharedKey);
    if (carried !== null) return carried;
  }
  throw decryptionFailed("wrong key or tampered data");
}
