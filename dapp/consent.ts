/**
 * The owner's signed consent to a grant or a revoke (DECISIONS.md section 16): checked here, against the
 * chain and application of the input (common/consent.ts builds the typed data), its deadline against
 * block time, and its nonce against every nonce the owner has used. A consent that passes is recorded as
 * used in the same transaction as the grant or revoke it allowed.
 */
import type { Address, Hex } from "viem";
import { z } from "zod";
import { consentDomain, consentSigner, grantTypedData, ownerKeyTypedData, revokeTypedData, type ConsentTypedData, type GrantConsent, type OwnerKeyConsent, type RevokeConsent } from "../common/consent.ts";
import type { ConsentKind, SignedConsent } from "../common/wire.ts";
import { hexToBuffer } from "./db/bytes.ts";
import type { AdvanceContext } from "./define.ts";
import { InputRejection } from "./errors.ts";
import { bytes32 } from "./inputs/fields.ts";

export const signedConsentParam = z.object({
  nonce: bytes32,
  deadline: z.int().min(0).max(2 ** 40),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/, "expected a 0x-prefixed 65-byte hex signature")
    .transform((s) => s.toLowerCase() as Hex),
});

const reject = (message: string): InputRejection => new InputRejection("CONSENT_REJECTED", `consent: ${message}`);

/** Checks the owner's signature of `what` and spends its nonce; throws CONSENT_REJECTED naming the problem. */
function check(ctx: AdvanceContext, owner: Address, consent: SignedConsent, typed: ConsentTypedData): void {
  const { input, store } = ctx;
  if (input.consentDomain === null) {
    throw reject("this rollup does not know its chain id and application address (DAPP_CHAIN_ID, DAPP_ADDRESS), so it cannot check a signature");
  }
  if (consent.deadline < input.timestamp) throw reject(`the signature's deadline ${consent.deadline} has passed (block time ${input.timestamp})`);
  const signer = consentSigner(typed, consent.signature);
  if (signer === undefined) throw reject("the signature does not recover");
  if (signer !== owner) throw reject(`signed by ${signer}, not by the owner ${owner} (or for another chain, application or message)`);
  const usedBy = store.nonceUsedBy(hexToBuffer(owner), hexToBuffer(consent.nonce));
  if (usedBy !== undefined) throw reject(`nonce ${consent.nonce} was already used (input ${usedBy})`);
  store.useNonce(hexToBuffer(owner), hexToBuffer(consent.nonce), input.index);
}

function domainOf(ctx: AdvanceContext) {
  const d = ctx.input.consentDomain;
  return d === null ? null : consentDomain(d.chainId, d.application);
}

export function checkGrantConsent(ctx: AdvanceContext, consent: SignedConsent, grant: Omit<GrantConsent, "nonce" | "deadline">): void {
  const domain = domainOf(ctx);
  const message = { ...grant, nonce: consent.nonce, deadline: consent.deadline };
  check(ctx, grant.owner, consent, grantTypedData(domain ?? {}, message));
}

export function checkRevokeConsent(ctx: AdvanceContext, consent: SignedConsent, revoke: Omit<RevokeConsent, "nonce" | "deadline">): void {
  const domain = domainOf(ctx);
  const message = { ...revoke, nonce: consent.nonce, deadline: consent.deadline };
  check(ctx, revoke.owner, consent, revokeTypedData(domain ?? {}, message));
}

export function checkOwnerKeyConsent(ctx: AdvanceContext, consent: SignedConsent, key: Omit<OwnerKeyConsent, "nonce" | "deadline">): void {
  const domain = domainOf(ctx);
  const message = { ...key, nonce: consent.nonce, deadline: consent.deadline };
  check(ctx, key.owner, consent, ownerKeyTypedData(domain ?? {}, message));
}

/**
 * Whose word an unsigned grant or revoke rests on: the owner's own wallet, or an operator's. A schema
 * that requires signed consent refuses the operator's.
 */
export function unsignedConsent(ctx: AdvanceContext, owner: Address, requireSigned: boolean, schemaId: Hex): ConsentKind {
  const kind: ConsentKind = ctx.input.sender === owner ? "owner" : "relayed";
  if (kind === "relayed" && requireSigned) {
    throw reject(`schema ${schemaId} requires the owner's own consent: sign it (consent) or send it from ${owner}; an operator's word is refused`);
  }
  return kind;
}
