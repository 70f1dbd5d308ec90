/**
 * The messages between a prover process (attestor/prover.ts) and its parent (the api, or `npm run prove`
 * on the user's machine), sent over Node's IPC channel. The prover is a separate process because the code
 * it links (Reclaim's attestor-core) is AGPL-3.0 and because proving blocks its event loop; this file is
 * the whole of what the two share.
 */
import type { Address, Hex } from "viem";
import type { BucketDefinition } from "./buckets.ts";
import type { ShareEvaluation } from "./nullifier.ts";
import type { ProofMode, TlsClaim } from "./tls-claim.ts";

export interface ProveRequest {
  id: number;
  url: string;
  method: "GET" | "POST";
  /** Sent to the provider but never signed or shown to the attestor's claim (attestor-core's secret params). */
  headers: Record<string, string>;
  field: string;
  /** The schema's bins for the field: the prover claims the one the value lies in. */
  definition: BucketDefinition;
  mode: ProofMode;
  /** The attestor to prove through, `ws://host:port/ws` (one per claim of a quorum). */
  attestorUrl: string;
  /** The attestation's owner and schema, bound into the claim's context. */
  owner: Address;
  schemaId: Hex;
  /**
   * For a schema unique per account (docs/nullifiers.md): the claim's blind r (blindHex; one for every
   * attestor of the claim, so all their contexts bind one B and R) and the field of the answer that names
   * the account. The prover hands r to the attestor, binds B and R in the context, and fetches the
   * attestor's evaluation.
   */
  nullifier?: { blind: Hex; accountField: string };
}

/** What went wrong, in words the api maps to its error codes. */
export type ProveFailureKind =
  | "attestor_unreachable" // no WebSocket to the attestor
  | "tls" // the handshake with the provider failed (a version below TLS 1.2 among the causes)
  | "provider_unreachable" // the attestor could not reach the provider
  | "provider_status" // the provider answered with a non-2xx status (`status` says which)
  | "extraction" // no number at the field, or the attestor could not read one where it was shown
  | "outside" // the value lies in no bucket of the field
  | "refused" // the attestor refused to sign (a proof that did not verify, a bad request)
  | "timeout"
  | "internal";

export interface ProveSuccess {
  id: number;
  ok: true;
  claim: TlsClaim;
  signature: Hex;
  /** The address the attestor says signs for it (the api checks the signature recovers to it). */
  attestor: Address;
  /** The bucket the claim proves the value lies in. */
  label: string;
  /** The provider's response as the prover decrypted it: the caller reads the value and data keys from it, to seal them. */
  response: { status: number; body: string };
  tlsVersion: string;
  /** Time spent, and the prover process's peak resident memory so far. */
  ms: number;
  maxRssBytes: number;
  /** With a request's `nullifier`: the attestor's evaluation of its share, proven against its commitment. */
  nullifier?: ShareEvaluation;
}

export interface ProveFailure {
  id: number;
  ok: false;
  kind: ProveFailureKind;
  reason: string;
  status?: number;
}

export type ProveResult = ProveSuccess | ProveFailure;

/** The first message of a prover once it can take requests. */
export interface ProverReady {
  ready: true;
  /** The address claims are made by (the claim's `owner`). */
  address: Address;
}
