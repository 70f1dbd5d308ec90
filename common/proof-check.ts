/**
 * The check of an attestation's signed TLS claims (DECISIONS.md sections 14 and 16, docs/provider.md):
 * the dapp's judgement, which the api runs first too, so a claim the rollup would refuse fails at the
 * api with a reason instead of a rejected input. Synchronous (it runs inside the input's SQLite
 * transaction), deterministic (the input's block time is "now") and our own code over viem and
 * @noble/curves. No message ever carries a provider value: no claim holds one.
 */
import { recoverDigestSigner } from "./signature.ts";
import { hashMessage, hexToBytes, type Address, type Hex } from "viem";
import type { BucketDefinition } from "./buckets.ts";
import { canonicalJson } from "./canonical.ts";
import { binRange } from "./range-pattern.ts";
import { claimIdentifier, claimParameters, claimSignText, type TlsProof } from "./tls-claim.ts";

/** A claim may be this much older than its input's block, and dated this much after it (clock skew). */
export const MAX_CLAIM_AGE_SECONDS = 3600;
export const MAX_CLAIM_SKEW_SECONDS = 600;

/** Why signed claims do not prove an attestation: one sentence, in the domain's words. */
export class ProofProblem extends Error {
  override readonly name = "ProofProblem";
}

export interface ProofSubject {
  schemaId: Hex;
  domain: string;
  definitions: Record<string, BucketDefinition>;
  /** How many distinct registered attestors must sign (the schema's `attestor_quorum`). */
  quorum: number;
  owner: Address;
  bucketValues: Record<string, string>;
  /** The input's block time. */
  now: number;
}

export interface CheckedProofs {
  /** The signers, lower-case, in the order of the claims. */
  attestors: Address[];
  /** The digests the attestors signed: each proves one attestation, never a second. */
  digests: Hex[];
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProofProblem(`the claim's ${what} is not JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new ProofProblem(`the claim's ${what} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The signer of an EIP-191 message digest. */
function recoverSigner(digest: Hex, signature: Hex): Address {
  const signer = recoverDigestSigner(digest, signature);
  if (signer === undefined) throw new ProofProblem("the signature does not recover");
  return signer;
}

/** One claim: signed by a registered attestor, over exactly the canonical statement for this attestation. */
function checkClaim(proof: TlsProof, subject: ProofSubject, field: string, label: string, isAttestor: (address: Address) => boolean) {
  const { claim } = proof;
  if (claim.provider !== "http") throw new ProofProblem(`the claim's provider is "${claim.provider}", not "http"`);
  const context = parseObject(claim.context, "context");
  const identifier = claimIdentifier(claim);
  if (identifier !== claim.identifier.toLowerCase()) throw new ProofProblem("the claim's identifier does not match its content");
  const digest = hashMessage(claimSignText(claim, identifier));
  const attestor = recoverSigner(digest, proof.signature);
  if (!isAttestor(attestor)) throw new ProofProblem(`signed by ${attestor}, which is not a registered attestor`);

  const parameters = parseObject(claim.parameters, "parameters");
  let url: URL;
  try {
    url = new URL(String(parameters.url));
  } catch {
    throw new ProofProblem("the claim's URL is not a URL");
  }
  if (url.protocol !== "https:") throw new ProofProblem("the claim's URL is not https");
  if (url.hostname.toLowerCase() !== subject.domain.toLowerCase()) {
    throw new ProofProblem(`the claim names host ${url.hostname.toLowerCase()}, the schema's domain is ${subject.domain.toLowerCase()}`);
  }
  const method = parameters.method;
  if (method !== "GET" && method !== "POST") throw new ProofProblem("the claim's method is not GET or POST");
  const definition = subject.definitions[field] as BucketDefinition;
  const range = binRange(definition, label);
  if (range === undefined) throw new ProofProblem(`"${label}" is not a label of ${field}`);
  const expected = claimParameters({ url: String(parameters.url), method, field, range });
  const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);
  if (!same(parameters.responseRedactions, expected.responseRedactions)) throw new ProofProblem(`the claim is not about field ${field}`);
  if (!same(parameters.responseMatches, expected.responseMatches)) throw new ProofProblem(`the claim does not prove that ${field} lies in bucket ${JSON.stringify(label)}`);
  const extra = Object.keys(parameters).find((key) => !(key in expected));
  if (extra !== undefined) throw new ProofProblem(`the claim's parameters hold "${extra}", which a proven attestation may not use`);

  if (String(context.contextAddress).toLowerCase() !== subject.owner.toLowerCase()) throw new ProofProblem("the claim was made for another owner");
  if (String(context.contextMessage).toLowerCase() !== subject.schemaId.toLowerCase()) throw new ProofProblem("the claim was made for another schema");
  const age = subject.now - claim.timestampS;
  if (age > MAX_CLAIM_AGE_SECONDS) throw new ProofProblem(`the claim is ${age} s old (at most ${MAX_CLAIM_AGE_SECONDS})`);
  if (-age > MAX_CLAIM_SKEW_SECONDS) throw new ProofProblem(`the claim is dated ${-age} s after its input`);
  return { attestor, digest };
}

/**
 * Checks `proofs` for an attestation of `subject`; `isAttestor` says whether the rollup trusts an address.
 * At least `quorum` claims from as many distinct registered attestors, each over the same canonical
 * statement (this field in this bucket), for this owner and this schema. Throws ProofProblem.
 */
export function checkProofs(proofs: readonly TlsProof[], subject: ProofSubject, isAttestor: (address: Address) => boolean): CheckedProofs {
  const fields = Object.keys(subject.bucketValues);
  const field = fields[0];
  if (fields.length !== 1 || field === undefined) throw new ProofProblem("a proven attestation buckets exactly one field");
  if (!Object.hasOwn(subject.definitions, field)) throw new ProofProblem(`field ${field} has no bucket definition in schema ${subject.schemaId}`);
  if (proofs.length < subject.quorum) {
    throw new ProofProblem(`schema ${subject.schemaId} requires claims from ${subject.quorum} attestors, got ${proofs.length}`);
  }
  const label = subject.bucketValues[field] as string;
  const attestors: Address[] = [];
  const digests: Hex[] = [];
  proofs.forEach((proof, i) => {
    let checked: { attestor: Address; digest: Hex };
    try {
      checked = checkClaim(proof, subject, field, label, isAttestor);
    } catch (error) {
      if (error instanceof ProofProblem && proofs.length > 1) throw new ProofProblem(`claim ${i + 1}: ${error.message}`);
      throw error;
    }
    if (attestors.includes(checked.attestor)) {
      throw new ProofProblem(`attestor ${checked.attestor} signed two of the claims: each claim must come from a distinct attestor`);
    }
    attestors.push(checked.attestor);
    digests.push(checked.digest);
  });
  return { attestors, digests };
}
