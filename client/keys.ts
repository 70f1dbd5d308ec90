/**
 * Keys on the owner's and the requester's side (docs/consent.md): an owner's own NaCl key pair, its
 * registration signed by the owner's wallet, the content keys of its attestations sealed again for a
 * requester's key (to go with a grant), and opening attested data with one's own secret key — whether the
 * data is sealed to the admin's key, to the owner's, or shared through a grant. No key leaves this process.
 */
import nacl from "tweetnacl";
import type { Address, Hex, TypedDataDomain } from "viem";
import { ownerKeyTypedData } from "../common/consent.ts";
import { openOwnerSealed, resealContentKey } from "../common/content-seal.ts";
import { hexToBytes } from "../common/hex.ts";
import { keyIdOf } from "../common/ids.ts";
import { isOwnerSealed } from "../common/owner-sealed.ts";
import { openSealed } from "../common/seal.ts";
import { namedContent, type ContentSchema } from "../common/sealed-content.ts";
import type { SignedConsent, TypedDataSigner } from "./consent.ts";
import { DEFAULT_CONSENT_TTL_SECONDS } from "./consent.ts";

export interface BoxKeyPair {
  /** Base64 of the 32-byte public key: what is registered. */
  publicKey: string;
  /** The 32-byte secret key: kept by its holder alone. */
  secretKey: Uint8Array;
  keyId: Hex;
}

export function newBoxKeyPair(): BoxKeyPair {
  const pair = nacl.box.keyPair();
  return { publicKey: Buffer.from(pair.publicKey).toString("base64"), secretKey: pair.secretKey, keyId: keyIdOf(pair.publicKey) };
}

/** The key pair of a 32-byte secret key (base64), as saved by `npm run consent -- key`. */
export function boxKeyPairOf(secretKeyBase64: string): BoxKeyPair {
  const secretKey = new Uint8Array(Buffer.from(secretKeyBase64.trim(), "base64"));
  if (secretKey.length !== nacl.box.secretKeyLength) throw new Error(`a secret key is ${nacl.box.secretKeyLength} bytes of base64, not ${secretKey.length}`);
  const { publicKey } = nacl.box.keyPair.fromSecretKey(secretKey);
  return { publicKey: Buffer.from(publicKey).toString("base64"), secretKey, keyId: keyIdOf(publicKey) };
}

/** The owner's signature of its key's registration (POST /api/core/owner-key). */
export async function signOwnerKey(signer: TypedDataSigner, domain: TypedDataDomain, keyId: Hex, ttlSeconds = DEFAULT_CONSENT_TTL_SECONDS): Promise<SignedConsent> {
  const nonce = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex;
  const deadline = Math.floor(Date.now() / 1000) + ttlSeconds;
  const signature = await signer.signTypedData(ownerKeyTypedData(domain, { owner: signer.address.toLowerCase() as Address, keyId, nonce, deadline }));
  return { nonce, deadline, signature };
}

/** The content keys of the owner's attestations sealed again for the requester's key: a grant's `keys`. */
export function shareContentKeys(owner: BoxKeyPair, requesterPublicKey: string, attestations: readonly { claimId: Hex; encryptedData: Hex }[]) {
  return attestations.map((a) => ({ attestationId: a.claimId, sealedKey: resealContentKey(a.encryptedData, owner.keyId, owner.secretKey, requesterPublicKey) }));
}

/**
 * The plaintext JSON of attested data, opened with one's own secret key: admin-sealed data with the admin
 * key (either sealing layout, common/seal.ts); owner-sealed data with the owner's key, or with the content
 * key a grant shared (`sealedKey`). Data sealed as values alone (common/sealed-content.ts) is named with
 * `schema` (its data keys and bucket fields, from the schema's public view).
 */
export function openAttestedData(encryptedData: Hex, mine: BoxKeyPair, sealedKey?: Hex, schema?: ContentSchema): Record<string, unknown> {
  const bytes = isOwnerSealed(hexToBytes(encryptedData))
    ? openOwnerSealed(encryptedData, mine.secretKey, sealedKey === undefined ? { keyId: mine.keyId } : { sealedKey })
    : openSealed(encryptedData, mine.secretKey);
  const named = namedContent(bytes, schema);
  if (!named.ok) throw new Error(`the opened data cannot be read: ${named.problem}${schema === undefined ? " (data sealed as values alone needs its schema to name them)" : ""}`);
  return named.value;
}
