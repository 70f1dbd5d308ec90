/**
 * The rollup's check of a TLS attestor's signed claim (DECISIONS.md section 14, docs/provider.md): our own
 * code over viem and @noble/curves, synchronous (it runs inside the input's SQLite transaction) and
 * deterministic (block time is "now"). Every failure is a rejection whose message starts `proof: ` and
 * never carries the signed value, which is private.
 */
import { secp256k1 } from "@noble/curves/secp256k1";
import { hashMessage, hexToBytes, type Address, type Hex } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import { z } from "zod";
import { bucketOf, type BucketDefinition } from "../common/buckets.ts";
import { canonicalJson } from "../common/canonical.ts";
import { claimIdentifier, claimParameters, claimSignText, VALUE_GROUP, type ProofMode, type TlsProof } from "../common/tls-claim.ts";
import { InputRejection } from "./errors.ts";

/** A claim may be this much older than its input's block, and dated this much after it (clock skew). */
export const MAX_CLAIM_AGE_SECONDS = 3600;
export const MAX_CLAIM_SKEW_SECONDS = 600;

/** The provider parameters a claim may name; anything else changes what was fetched or how it was read. */
export const ALLOWED_PARAMETER_KEYS = ["url", "method", "responseMatches", "responseRedactions"] as const;

const CLAIM_TEXT = 8 * 1024;

/** How the proof travels in `create_attestation` params. */
export const proofParams = z.strictObject({
  claim: z.strictObject({
    provider: z.string().min(1).max(64),
    parameters: z.string().min(2).max(CLAIM_TEXT),
    owner: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte hex address"),
    timestampS: z.int().min(0),
    context: z.string().max(CLAIM_TEXT),
    identifier: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex identifier"),
    epoch: z.int().min(0),
  }),
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "expected a 0x-prefixed 65-byte hex signature"),
});

export interface ProofSubject {
  schemaId: Hex;
  domain: string;
  definitions: Record<string, BucketDefinition>;
  owner: Address;
  bucketValues: Record<string, string>;
  /** The input's block time. */
  now: number;
}

export interface CheckedProof {
  attestor: Address;
  /** The digest the attestor signed: one attestation per claim. */
  digest: Hex;
}

function rejected(message: string): InputRejection {
  return new InputRejection("PROOF_REJECTED", `proof: ${message}`);
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw rejected(`the claim's ${what} is not JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw rejected(`the claim's ${what} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The signer of an EIP-191 message digest, from r ‖ s ‖ v (v 27/28 or 0/1). */
function recoverSigner(digest: Hex, signature: Hex): Address {
  const bytes = hexToBytes(signature);
  const v = bytes[64] as number;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) throw rejected("the signature does not recover");
  try {
    const point = secp256k1.Signature.fromCompact(bytes.subarray(0, 64)).addRecoveryBit(recovery).recoverPublicKey(hexToBytes(digest).slice());
    return publicKeyToAddress(`0x${point.toHex(false)}`).toLowerCase() as Address;
  } catch {
    throw rejected("the signature does not recover");
  }
}

/**
 * Checks `proof` for an attestation of `subject`; `isAttestor` says whether the rollup trusts an address.
 * Returns who signed it and the digest that must not be used again (the caller checks and records it).
 */
export function checkProof(proof: TlsProof, subject: ProofSubject, isAttestor: (address: Address) => boolean): CheckedProof {
  const { claim } = proof;
  const fields = Object.keys(subject.bucketValues);
  const field = fields[0];
  if (fields.length !== 1 || field === undefined) throw rejected("a proven attestation buckets exactly one field");
  const definition = Object.hasOwn(subject.definitions, field) ? subject.definitions[field] : undefined;
  if (definition === undefined) throw rejected(`field ${field} has no bucket definition in schema ${subject.schemaId}`);
  if (claim.provider !== "http") throw rejected(`the claim's provider is "${claim.provider}", not "http"`);

  const context = parseObject(claim.context, "context");
  const identifier = claimIdentifier(claim);
  if (identifier !== claim.identifier.toLowerCase()) throw rejected("the claim's identifier does not match its content");
  const digest = hashMessage(claimSignText(claim, identifier));
  const attestor = recoverSigner(digest, proof.signature);
  if (!isAttestor(attestor)) throw rejected(`signed by ${attestor}, which is not a registered attestor`);

  const parameters = parseObject(claim.parameters, "parameters");
  const extra = Object.keys(parameters).find((k) => !(ALLOWED_PARAMETER_KEYS as readonly string[]).includes(k));
  if (extra !== undefined) throw rejected(`the claim's parameters hold "${extra}", which a proven attestation may not use`);
  let url: URL;
  try {
    url = new URL(String(parameters.url));
  } catch {
    throw rejected("the claim's URL is not a URL");
  }
  if (url.protocol !== "https:") throw rejected("the claim's URL is not https");
  if (url.hostname.toLowerCase() !== subject.domain.toLowerCase()) {
    throw rejected(`the claim names host ${url.hostname.toLowerCase()}, the schema's domain is ${subject.domain.toLowerCase()}`);
  }
  const method = parameters.method;
  if (method !== "GET" && method !== "POST") throw rejected("the claim's method is not GET or POST");
  const mode: ProofMode = "responseRedactions" in parameters ? "zk" : "reveal";
  const expected = claimParameters({ url: url.href, method, field, mode });
  const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);
  if (!same(parameters.responseMatches, expected.responseMatches) || !same(parameters.responseRedactions, expected.responseRedactions)) {
    throw rejected(`the claim does not extract field ${field}`);
  }

  if (String(context.contextAddress).toLowerCase() !== subject.owner.toLowerCase()) throw rejected("the claim was made for another owner");
  if (String(context.contextMessage).toLowerCase() !== subject.schemaId.toLowerCase()) throw rejected("the claim was made for another schema");
  const extracted = context.extractedParameters;
  const raw = extracted !== null && typeof extracted === "object" ? (extracted as Record<string, unknown>)[VALUE_GROUP] : undefined;
  if (typeof raw !== "string" || !/^-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/.test(raw)) throw rejected(`the claim holds no number for ${field}`);
  const signedBucket = bucketOf(Number(raw), definition);
  const sent = subject.bucketValues[field] as string;
  if (signedBucket !== sent) throw rejected(`the signed value falls in bucket ${JSON.stringify(signedBucket ?? "none")}, not ${JSON.stringify(sent)}`);

  const age = subject.now - claim.timestampS;
  if (age > MAX_CLAIM_AGE_SECONDS) throw rejected(`the claim is ${age} s old (at most ${MAX_CLAIM_AGE_SECONDS})`);
  if (-age > MAX_CLAIM_SKEW_SECONDS) throw rejected(`the claim is dated ${-age} s after its input`);
  return { attestor, digest };
}
