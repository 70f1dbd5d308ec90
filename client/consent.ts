/**
 * Signing consent on the owner's side (DECISIONS.md section 16): the typed data of a grant or a revoke in
 * the rollup's domain (`client.consentDomain()`), signed by the owner's wallet (a viem account, or any
 * signer of EIP-712 typed data), with a fresh nonce and a deadline. The rollup checks the signature.
 */
import type { Address, Hex, LocalAccount, TypedDataDomain } from "viem";
import { grantTypedData, revokeTypedData } from "../common/consent.ts";

/** What can sign EIP-712 typed data: a viem local account (privateKeyToAccount, mnemonicToAccount) does. */
export type TypedDataSigner = Pick<LocalAccount, "address" | "signTypedData">;

export interface SignedConsent {
  nonce: Hex;
  deadline: number;
  signature: Hex;
}

/** How long a signature stays good by default: long enough for a relayed transaction to land. */
export const DEFAULT_CONSENT_TTL_SECONDS = 3600;

function randomNonce(): Hex {
  return `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
}

function deadlineIn(ttlSeconds: number): number {
  return Math.floor(Date.now() / 1000) + ttlSeconds;
}

export async function signGrantConsent(
  signer: TypedDataSigner,
  domain: TypedDataDomain,
  grant: { requester: Address; schemaId: Hex; expiresAt: number },
  options: { ttlSeconds?: number; nonce?: Hex } = {},
): Promise<SignedConsent> {
  const nonce = options.nonce ?? randomNonce();
  const deadline = deadlineIn(options.ttlSeconds ?? DEFAULT_CONSENT_TTL_SECONDS);
  const owner = signer.address.toLowerCase() as Address;
  const signature = await signer.signTypedData(grantTypedData(domain, { owner, ...grant, requester: grant.requester.toLowerCase() as Address, schemaId: grant.schemaId.toLowerCase() as Hex, nonce, deadline }));
  return { nonce, deadline, signature };
}

export async function signRevokeConsent(
  signer: TypedDataSigner,
  domain: TypedDataDomain,
  grantId: Hex,
  options: { ttlSeconds?: number; nonce?: Hex } = {},
): Promise<SignedConsent> {
  const nonce = options.nonce ?? randomNonce();
  const deadline = deadlineIn(options.ttlSeconds ?? DEFAULT_CONSENT_TTL_SECONDS);
  const owner = signer.address.toLowerCase() as Address;
  const signature = await signer.signTypedData(revokeTypedData(domain, { owner, grantId: grantId.toLowerCase() as Hex, nonce, deadline }));
  return { nonce, deadline, signature };
}
