/**
 * Consent the owner signs (DECISIONS.md section 16): EIP-712 typed data for a grant and for a revoke,
 * bound to one chain and one application, with a nonce (used once) and a deadline judged by block time.
 * The dapp recovers the signer and records the grant as signed; the api, client/ and `npm run consent`
 * build the same typed data to sign. Shared so the bytes signed and the bytes checked cannot drift.
 */
import { hashTypedData, type Address, type Hex, type TypedDataDomain } from "viem";
import { recoverDigestSigner } from "./signature.ts";

/** The domain every consent is signed in: this service, on `chainId`, for the application at `application`. */
export function consentDomain(chainId: number, application: Address): TypedDataDomain {
  return { name: "Attestation rollup", version: "1", chainId, verifyingContract: application };
}

export const CONSENT_TYPES = {
  Grant: [
    { name: "owner", type: "address" },
    { name: "requester", type: "address" },
    { name: "schemaId", type: "bytes32" },
    { name: "expiresAt", type: "uint64" },
    { name: "nonce", type: "bytes32" },
    { name: "deadline", type: "uint64" },
  ],
  RevokeGrant: [
    { name: "owner", type: "address" },
    { name: "grantId", type: "bytes32" },
    { name: "nonce", type: "bytes32" },
    { name: "deadline", type: "uint64" },
  ],
  OwnerKey: [
    { name: "owner", type: "address" },
    { name: "keyId", type: "bytes32" },
    { name: "nonce", type: "bytes32" },
    { name: "deadline", type: "uint64" },
  ],
} as const;

export type ConsentKind = keyof typeof CONSENT_TYPES;

export interface GrantConsent {
  owner: Address;
  requester: Address;
  schemaId: Hex;
  expiresAt: number;
  nonce: Hex;
  deadline: number;
}

/** An owner's NaCl key, registered so data is sealed to it (keyId: keccak256 of its 32 bytes). */
export interface OwnerKeyConsent {
  owner: Address;
  keyId: Hex;
  nonce: Hex;
  deadline: number;
}

export interface RevokeConsent {
  owner: Address;
  grantId: Hex;
  nonce: Hex;
  deadline: number;
}

/** What an owner signs: pass it to a wallet's signTypedData (viem's, or eth_signTypedData_v4). */
export function grantTypedData(domain: TypedDataDomain, consent: GrantConsent) {
  return {
    domain,
    types: { Grant: CONSENT_TYPES.Grant },
    primaryType: "Grant" as const,
    message: { ...consent, expiresAt: BigInt(consent.expiresAt), deadline: BigInt(consent.deadline) },
  };
}

export function revokeTypedData(domain: TypedDataDomain, consent: RevokeConsent) {
  return {
    domain,
    types: { RevokeGrant: CONSENT_TYPES.RevokeGrant },
    primaryType: "RevokeGrant" as const,
    message: { ...consent, deadline: BigInt(consent.deadline) },
  };
}

export function ownerKeyTypedData(domain: TypedDataDomain, consent: OwnerKeyConsent) {
  return {
    domain,
    types: { OwnerKey: CONSENT_TYPES.OwnerKey },
    primaryType: "OwnerKey" as const,
    message: { ...consent, deadline: BigInt(consent.deadline) },
  };
}

export type ConsentTypedData = ReturnType<typeof grantTypedData> | ReturnType<typeof revokeTypedData> | ReturnType<typeof ownerKeyTypedData>;

/** The address that signed (lower-case), or undefined when the bytes are no signature of this typed data. */
export function consentSigner(typed: ConsentTypedData, signature: Hex): Address | undefined {
  const digest =
    typed.primaryType === "Grant" ? hashTypedData(typed) : typed.primaryType === "RevokeGrant" ? hashTypedData(typed) : hashTypedData(typed);
  return recoverDigestSigner(digest, signature);
}
