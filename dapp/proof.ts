/**
 * The rollup's side of attestor-proven attestations (DECISIONS.md sections 14 and 16): how the signed
 * claims travel in `create_attestation`, and their check (common/proof-check.ts) as an input rejection
 * whose message starts `proof: `.
 */
import { type Address, type Hex } from "viem";
import { z } from "zod";
import { checkProofs, ProofProblem, type CheckedProofs, type ProofSubject } from "../common/proof-check.ts";
import { MAX_QUORUM, type TlsProof } from "../common/tls-claim.ts";
import { InputRejection } from "./errors.ts";

export { MAX_CLAIM_AGE_SECONDS, MAX_CLAIM_SKEW_SECONDS } from "../common/proof-check.ts";

const CLAIM_TEXT = 16 * 1024;

const proofParam = z.strictObject({
  claim: z.strictObject({
    provider: z.string().min(1).max(64),
    parameters: z.string().min(2).max(CLAIM_TEXT),
    owner: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte hex address").transform((s) => s as Address),
    timestampS: z.int().min(0),
    context: z.string().max(CLAIM_TEXT),
    identifier: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex identifier").transform((s) => s as Hex),
    epoch: z.int().min(0),
  }),
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "expected a 0x-prefixed 65-byte hex signature"),
});

/** How the claims travel in `create_attestation` params: one per attestor of the schema's quorum. */
export const proofsParam = z.array(proofParam).min(1).max(MAX_QUORUM);

export function checkAttestationProofs(proofs: readonly z.output<typeof proofParam>[], subject: ProofSubject, isAttestor: (address: Address) => boolean): CheckedProofs {
  try {
    return checkProofs(
      proofs.map((p): TlsProof => ({ claim: p.claim, signature: p.signature as Hex })),
      subject,
      isAttestor,
    );
  } catch (error) {
    if (error instanceof ProofProblem) throw new InputRejection("PROOF_REJECTED", `proof: ${error.message}`);
    throw error;
  }
}
