/**
 * The attestor's signed claim (DECISIONS.md section 14): the shape a TLS attestor (Reclaim's
 * attestor-core) signs, and how the api asks it to extract one bucketed field. Pure functions only: the
 * dapp checks claims with them deterministically and the api builds requests with them, so both agree on
 * every byte. Nothing here imports attestor-core (AGPL-3.0): the format is re-implemented from its
 * documented behaviour.
 */
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { canonicalJson } from "./canonical.ts";

/** How a schema's attestations are proven: `none` (the api's word) or `attestor` (a signed TLS claim). */
export const PROOF_KINDS = ["none", "attestor"] as const;
export type ProofKind = (typeof PROOF_KINDS)[number];

/**
 * How the attestor learned the value. `reveal`: the client hands the attestor the response's TLS keys and
 * it reads the whole response (fast). `zk`: the response is redacted down to the field and the client
 * proves in zero knowledge that the hidden bytes decrypt consistently (slow); the attestor sees only the
 * field. The dapp accepts both: either way the attestor signs only what it saw come from the server.
 */
export const PROOF_MODES = ["reveal", "zk"] as const;
export type ProofMode = (typeof PROOF_MODES)[number];

/** The claim as the attestor signs it (attestor-core's ProviderClaimData). */
export interface TlsClaim {
  provider: string;
  /** Canonical JSON of the provider parameters (url, method, response matches and redactions). */
  parameters: string;
  /** The address of the key that asked for the claim (the api's prover key). */
  owner: string;
  timestampS: number;
  /** Canonical JSON: what the client bound the claim to, plus `extractedParameters` and `providerHash`. */
  context: string;
  identifier: string;
  epoch: number;
}

/** What a proven attestation input carries: the claim and the attestor's signature over it. */
export interface TlsProof {
  claim: TlsClaim;
  signature: Hex;
}

/** The name of the regex group that carries the bucketed value. */
export const VALUE_GROUP = "value";

/**
 * `keccak256(provider \n parameters \n context)` with the context re-canonicalized, lower-case hex: the
 * claim's identifier as the attestor computes it.
 */
export function claimIdentifier(claim: Pick<TlsClaim, "provider" | "parameters" | "context">): Hex {
  const context = claim.context.length > 0 ? canonicalJson(JSON.parse(claim.context) as unknown) : "";
  return keccak256(stringToBytes(`${claim.provider}\n${claim.parameters}\n${context}`));
}

/** The text the attestor signs with Ethereum's personal_sign: identifier, owner, timestamp, epoch. */
export function claimSignText(claim: Pick<TlsClaim, "owner" | "timestampS" | "epoch">, identifier: Hex): string {
  return `${identifier}\n${claim.owner.toLowerCase()}\n${claim.timestampS}\n${claim.epoch}`;
}

/**
 * A field path that a proof can name: dot-separated object keys of letters, digits, `_` and `-`. Array
 * indexes are left out because the reveal mode's pattern cannot count array elements.
 */
const PROOF_KEY_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** Why `field` cannot be proven, or undefined when it can. */
export function proofFieldProblem(field: string): string | undefined {
  const bad = field.split(".").find((segment) => !PROOF_KEY_RE.test(segment));
  return bad === undefined ? undefined : `"${field}" cannot be proven: each segment must be an object key of letters, digits, "_" or "-" (got "${bad}")`;
}

// A JSON number, or a numeric string's digits. No sign other than minus: JSON has no "+".
const NUMBER_PATTERN = "-?[0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?";

/**
 * The regex the attestor runs over what it saw of the body. In `reveal` mode it sees the whole body and
 * the pattern walks the key chain (each object entered with `{` and no nested object crossed before the
 * next key); in `zk` mode the body is redacted down to the field's JSON value and the pattern reads it.
 */
export function valuePattern(field: string, mode: ProofMode): string {
  const value = `"?(?<${VALUE_GROUP}>${NUMBER_PATTERN})"?`;
  if (mode === "zk") return value;
  const keys = field.split(".");
  const chain = keys.map((k) => `"${k.replaceAll("-", "\\-")}"\\s*:\\s*`).join("\\{[^{}]*?");
  return chain + value;
}

/** The JSON path the `zk` mode redacts the body down to. */
export function jsonPathOf(field: string): string {
  return `$.${field}`;
}

export interface ClaimRequest {
  url: string;
  method: "GET" | "POST";
  field: string;
  mode: ProofMode;
}

/** Public provider parameters for one bucketed field (secret headers travel apart and are never signed). */
export interface ProviderParameters {
  url: string;
  method: "GET" | "POST";
  responseMatches: { type: "regex"; value: string }[];
  responseRedactions?: { jsonPath: string }[];
}

export function claimParameters({ url, method, field, mode }: ClaimRequest): ProviderParameters {
  const params: ProviderParameters = { url, method, responseMatches: [{ type: "regex", value: valuePattern(field, mode) }] };
  if (mode === "zk") params.responseRedactions = [{ jsonPath: jsonPathOf(field) }];
  return params;
}

/**
 * The client's part of the context: the attestation's owner and schema, so a claim made for one
 * attestation cannot be replayed for another owner or schema; and a nonce, so two claims of the same
 * value in the same second are two claims (the dapp refuses a signed claim it has seen).
 */
export function claimContext(
  owner: Address,
  schemaId: Hex,
  nonce?: Hex,
): { contextAddress: Address; contextMessage: Hex; nonce?: Hex } {
  const context = { contextAddress: owner.toLowerCase() as Address, contextMessage: schemaId.toLowerCase() as Hex };
  return nonce === undefined ? context : { ...context, nonce };
}
