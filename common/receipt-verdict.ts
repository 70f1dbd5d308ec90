/**
 * The verdict on a receipt (docs/receipts.md), the same whether `npm run verify -- --receipt` or the api's
 * `POST /api/core/verify/receipt` asks: first its signature against the signer and domain the operator
 * publishes, then, once the epoch is claimed, every field against what the notices the chain proves make of
 * it. Where the evidence comes from (the api over HTTP, or the api's own reads) is the caller's; the chain
 * judges the proofs in both (common/notice-check.ts).
 */
import type { Address, Hex } from "viem";
import {
  isRevocationReceipt,
  receiptMessage,
  receiptMismatches,
  receiptSignatureProblem,
  revocationReceiptMessage,
  type FieldMismatch,
  type Receipt,
  type ReceiptDomain,
  type ReceiptMessage,
  type ReceiptSource,
  type RevocationSource,
} from "./receipt.ts";

/**
 * VALID: signed, and equal to the proven notices. REVOKED: an attestation's receipt, valid, whose attestation
 * the rollup revoked since. SIGNED: signed, its epoch not claimed yet. MISMATCH: the rollup contradicts it
 * (evidence against the operator). INVALID: the signature does not hold. REFUSED: the chain refused the
 * notice's proof.
 */
export const RECEIPT_VERDICTS = ["VALID", "REVOKED", "SIGNED", "MISMATCH", "INVALID", "REFUSED"] as const;
export type ReceiptVerdictName = (typeof RECEIPT_VERDICTS)[number];
/** An attestation's receipt, or the receipt of its revocation. */
export type ReceiptKind = "attestation" | "revocation";

export interface ReceiptVerdict {
  verdict: ReceiptVerdictName;
  kind: ReceiptKind;
  /** The rollup's attestation id the receipt is about (its refUID). */
  claimId: Hex;
  /** The verdict in one sentence. */
  reason: string;
  /** Each field the proven notices contradict (MISMATCH only). */
  mismatches: FieldMismatch[];
  /** When the rollup revoked the attestation (REVOKED, and a revocation receipt's VALID). */
  revokedAt: number | null;
}

/** A notice as the chain judged its proof, or why there is none to judge. */
export type ProvenNotice<T> =
  | { kind: "proven"; data: T; where: string }
  | { kind: "not-yet"; message: string }
  | { kind: "refused"; where: string; reason: string }
  /** The rollup holds no such notice: no such attestation, or no revocation of it. */
  | { kind: "absent"; message: string };

/** What the verdict needs from the operator and the rollup. */
export interface ReceiptEvidence {
  /** The receipt signer and domain the operator publishes (GET /api/core/status); no domain, no receipts. */
  published: { signer: Address; domain: ReceiptDomain | null };
  attestationNotice(claimId: Hex): Promise<ProvenNotice<ReceiptSource>>;
  revocationNotice(claimId: Hex): Promise<ProvenNotice<RevocationSource>>;
  /** When the rollup revoked the attestation, or null while it stands. */
  revokedAt(claimId: Hex): Promise<number | null>;
}

/** The exit code `npm run verify` gives each verdict: 0 valid, 4 revoked, 3 try later, 1 against it. */
export const VERDICT_EXIT: Record<ReceiptVerdictName, number> = { VALID: 0, REVOKED: 4, SIGNED: 3, MISMATCH: 1, INVALID: 1, REFUSED: 1 };

export async function judgeReceipt(signer: Address, receipt: Receipt, evidence: ReceiptEvidence): Promise<ReceiptVerdict> {
  const kind: ReceiptKind = isRevocationReceipt(receipt) ? "revocation" : "attestation";
  const claimId = receipt.message.refUID.toLowerCase() as Hex;
  const verdict = (name: ReceiptVerdictName, reason: string, more: Partial<ReceiptVerdict> = {}): ReceiptVerdict => ({ verdict: name, kind, claimId, reason, mismatches: [], revokedAt: null, ...more });
  const { published } = evidence;
  // Lower case, as the api serves every address.
  const by = published.signer.toLowerCase();
  if (published.domain === null) return verdict("INVALID", "this operator publishes no receipt domain (its api knows no registry)");
  if (signer.toLowerCase() !== by) {
    return verdict("INVALID", `the receipt names ${signer} as its signer; this operator's receipt signer is ${by}`);
  }
  const problem = await receiptSignatureProblem(receipt, published.signer, published.domain);
  if (problem !== undefined) return verdict("INVALID", `its signature does not hold: ${problem}`);
  const what = kind === "revocation" ? `the receipt of the revocation of attestation ${claimId}` : `the receipt of attestation ${claimId}`;

  const attestation = await evidence.attestationNotice(claimId);
  const revocation = kind === "revocation" ? await evidence.revocationNotice(claimId) : undefined;
  for (const notice of [attestation, revocation]) {
    if (notice === undefined || notice.kind === "proven") continue;
    if (notice.kind === "absent") return verdict("MISMATCH", `${what} is signed by ${by}, but ${notice.message}: the rollup contradicts it`);
    if (notice.kind === "refused") return verdict("REFUSED", `${notice.where} refuses the proof: ${notice.reason}`);
    return verdict("SIGNED", `${what} is signed by ${by}; not yet provable: ${notice.message}`);
  }
  if (attestation.kind !== "proven" || (revocation !== undefined && revocation.kind !== "proven")) throw new Error("unreachable: every notice is proven here");
  const expected: ReceiptMessage = revocation === undefined ? receiptMessage(attestation.data) : revocationReceiptMessage(attestation.data, revocation.data);
  const where = (revocation ?? attestation).where;
  const mismatches = receiptMismatches(receipt, expected);
  if (mismatches.length > 0) {
    return verdict("MISMATCH", `${what}, signed by ${by}, contradicts the notice ${where} proves`, { mismatches });
  }
  if (revocation !== undefined) {
    return verdict("VALID", `${what} is signed by ${by} and equals, field for field, the revocation ${where} proves`, { revokedAt: revocation.data.revoked_at });
  }
  const revokedAt = await evidence.revokedAt(claimId);
  if (revokedAt !== null) {
    return verdict("REVOKED", `${what} equals its proven notice, and the rollup revoked it at ${revokedAt} (its proof: GET /api/core/attestation/${claimId}/revocation/proof)`, { revokedAt });
  }
  return verdict("VALID", `${what} is signed by ${by} and equals, field for field, the notice ${where} proves`);
}
