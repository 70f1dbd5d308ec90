/**
 * A claim proven on the user's own machine (docs/provider.md#proving-on-the-users-side-npm-run-prove): prover processes
 * (attestor/prover.ts, AGPL-3.0, separate processes) open the TLS session to the provider through each of
 * the schema's quorum of attestors, with the request's secret headers; the attestors sign that the field's
 * value lies in its bucket; the data is sealed here, for the rollup's registered key or, where the schema
 * seals to the owner, for the owner's own key (docs/consent.md). What leaves the
 * machine is the signed claims, the sealed data and the bucket: the credentials travel only inside the TLS
 * sessions to the provider, and the value nowhere. The result goes to the api (`claimProven`) or straight
 * to the InputBox from the owner's wallet (`create_attestation` with `proofs`).
 */
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import type { Address, Hex } from "viem";
import type { BucketDefinition } from "../common/buckets.ts";
import { failureCode, ProverPool, spawnProver, type FailureCode, type ProverSpawner } from "../common/prover-pool.ts";
import type { ProveFailure, ProveSuccess } from "../common/prover-protocol.ts";
import { drawClaimBlind, finishClaimNullifier } from "../common/claim-nullifier.ts";
import { NullifierError, type NullifierKeys, type PublishedNullifier } from "../common/nullifier.ts";
import { readBodyField } from "../common/revealed-response.ts";
import { sealToOwner } from "../common/content-seal.ts";
import { sealAnonymous } from "../common/seal.ts";
import { sealedContent } from "../common/sealed-content.ts";
import { proofFieldProblem, type ProofMode, type TlsProof } from "../common/tls-claim.ts";

/** What the prover must know of the schema (the rollup's `provider_schema` answer has it all). */
export interface ProvingSchema {
  schemaId: Hex;
  domain: string;
  field: string;
  definition: BucketDefinition;
  /** How many distinct attestors must sign. */
  quorum: number;
  dataKeys: readonly string[];
  /** Every bucket field of the schema: with more than `field` alone the sealed content names its values. */
  bucketFields: readonly string[];
  /**
   * A schema unique per account: its `account_id_field` and the rollup's key set (query `nullifier_keys`),
   * to finish the claim's nullifier against (docs/nullifiers.md).
   */
  nullifier?: { accountField: string; keys: NullifierKeys };
}

/**
 * Whom a claim's data is sealed to (base64 NaCl public keys): the rollup's registered key (`encryption_key`,
 * the specification's way), or the owner's newest own key first (`owner_key`) and, for "owner+admin", the
 * rollup's key after it; the dapp checks exactly these recipients.
 */
export type SealingKeys = { kind: "admin"; publicKey: string } | { kind: "owner"; publicKeys: readonly [string, ...string[]] };

export function sealWith(keys: SealingKeys, plaintext: Uint8Array): Hex {
  return keys.kind === "admin" ? sealAnonymous(plaintext, keys.publicKey) : sealToOwner(plaintext, keys.publicKeys);
}

export interface ProveOnUserSideOptions {
  request: { url: string; method?: "GET" | "POST"; headers?: Record<string, string> };
  schema: ProvingSchema;
  /** Whom the data is sealed to, as the schema's `sealing` says. */
  sealTo: SealingKeys;
  /** The attestation's owner: bound into every claim, and the one who may record it. */
  owner: Address;
  /** The attestors to prove through: the first `schema.quorum` of them are used. */
  attestorUrls: readonly string[];
  mode?: ProofMode;
  /** Extra root certificates (comma-separated PEM paths) the provers' TLS library trusts. */
  caFiles?: string;
  timeoutMs?: number;
  /** Starts a prover process (tests start a lying one). */
  spawn?: ProverSpawner;
  /** attestor/prover.ts compiled, run without tsx (ProverSettings.proverModule). */
  proverModule?: string;
  /**
   * Prover processes to reuse (`userSideProvers`), so that many claims pay a process's start once; by
   * default each call starts its own and ends them.
   */
  provers?: ProverPool;
}

/** Prover processes for many user-side claims in a row (close them when done): `quorum` of them at once. */
export function userSideProvers(quorum: number, options: { caFiles?: string; timeoutMs?: number; spawn?: ProverSpawner; proverModule?: string } = {}): ProverPool {
  // A fresh key for the claims' requests: it signs nothing that matters (the owner is in the context),
  // and no key of the user's goes into an AGPL process.
  return new ProverPool(
    { provers: quorum, timeoutMs: options.timeoutMs ?? 120_000, caFiles: options.caFiles ?? "", dataDir: tmpdir(), proverPrivateKey: `0x${randomBytes(32).toString("hex")}`, ...(options.proverModule === undefined ? {} : { proverModule: options.proverModule }) },
    options.spawn ?? spawnProver,
    "the prover was stopped",
  );
}

export interface UserProvenClaim {
  schemaId: Hex;
  field: string;
  bucket: string;
  encryptedData: Hex;
  proofs: TlsProof[];
  attestors: Address[];
  /** A schema unique per account's: the nullifier's published parts (never the account). */
  nullifier?: PublishedNullifier;
  /** Wall time of the slowest claim, and the largest prover's peak resident memory. */
  stats: { ms: number; proverPeakRssBytes: number };
}

/** A failure on the user's side, in the specification's codes (ZKTLS_PROOF_FAILED with a reason, PROVIDER_AUTH_FAILED, ...). */
export class UserProveError extends Error {
  override readonly name = "UserProveError";
  constructor(
    readonly code: FailureCode["code"] | "INVALID_REQUEST",
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

function proofFailed(reason: string): UserProveError {
  return new UserProveError("ZKTLS_PROOF_FAILED", `zkTLS proof failed: ${reason}`, { reason });
}

export async function proveOnUserSide(o: ProveOnUserSideOptions): Promise<UserProvenClaim> {
  const { schema } = o;
  const fieldProblem = proofFieldProblem(schema.field);
  if (fieldProblem !== undefined) throw new UserProveError("INVALID_REQUEST", fieldProblem, { field: "field", issue: fieldProblem });
  let url: URL;
  try {
    url = new URL(o.request.url);
  } catch {
    throw new UserProveError("INVALID_REQUEST", "the provider URL is not a URL", { field: "url", issue: "expected an https URL" });
  }
  if (url.protocol !== "https:") throw new UserProveError("INVALID_REQUEST", "a proven claim needs an https provider URL", { field: "url", issue: "expected an https URL" });
  if (url.hostname.toLowerCase() !== schema.domain.toLowerCase()) {
    throw new UserProveError("INVALID_REQUEST", `the URL's host is not the schema's domain ${schema.domain}`, { field: "url", issue: `host must be ${schema.domain}` });
  }
  const attestorUrls = o.attestorUrls.slice(0, schema.quorum);
  if (attestorUrls.length < schema.quorum) throw proofFailed(`schema ${schema.schemaId} requires ${schema.quorum} attestors, ${o.attestorUrls.length} given`);

  const pool = o.provers ?? userSideProvers(attestorUrls.length, { ...(o.caFiles === undefined ? {} : { caFiles: o.caFiles }), ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }), ...(o.spawn === undefined ? {} : { spawn: o.spawn }), ...(o.proverModule === undefined ? {} : { proverModule: o.proverModule }) });
  // One blind r for every attestor of the claim, so that all their contexts bind one B and R.
  const blind = schema.nullifier === undefined ? undefined : drawClaimBlind(schema.nullifier.accountField);
  let results;
  try {
    results = await Promise.all(
      attestorUrls.map((attestorUrl) =>
        pool.run({
          url: url.href,
          method: o.request.method ?? "GET",
          headers: o.request.headers ?? {},
          field: schema.field,
          definition: schema.definition,
          mode: o.mode ?? "zk",
          owner: o.owner,
          schemaId: schema.schemaId,
          attestorUrl,
          ...(blind === undefined ? {} : { nullifier: blind.request }),
        }),
      ),
    );
  } finally {
    if (o.provers === undefined) await pool.close();
  }
  const failed = results.find((r): r is ProveFailure => !r.ok);
  if (failed !== undefined) {
    const { code, message, details } = failureCode(failed, url.href);
    throw new UserProveError(code, message, details);
  }
  const proven = results as ProveSuccess[];
  const first = proven[0] as ProveSuccess;
  if (proven.some((p) => p.label !== first.label)) throw proofFailed("the attestors' sessions saw values in different buckets (the value changed between them)");

  const token = readBodyField(first.response.body, schema.field);
  if (!token.ok) throw proofFailed(`extraction failed: ${token.reason}`);
  let body: unknown;
  try {
    body = JSON.parse(first.response.body);
  } catch {
    throw new UserProveError("PROVIDER_INVALID_RESPONSE", "provider response is not JSON", { expected: "JSON body", received: "a body that is not JSON" });
  }
  let nullifier: PublishedNullifier | undefined;
  if (blind !== undefined && schema.nullifier !== undefined) {
    try {
      nullifier = finishClaimNullifier(blind, proven, schema.nullifier.keys);
    } catch (error) {
      if (error instanceof NullifierError) throw proofFailed(`nullifier: ${error.message}`);
      throw error;
    }
  }
  const plaintext = sealedContent(body, { dataKeys: schema.dataKeys, bucketFields: schema.bucketFields }, schema.field, Number(token.value.spelling));
  return {
    schemaId: schema.schemaId,
    field: schema.field,
    bucket: first.label,
    encryptedData: sealWith(o.sealTo, plaintext),
    proofs: proven.map(({ claim, signature }) => ({ claim, signature })),
    attestors: proven.map((p) => p.attestor.toLowerCase() as Address),
    ...(nullifier === undefined ? {} : { nullifier }),
    stats: { ms: Math.max(...proven.map((p) => p.ms)), proverPeakRssBytes: Math.max(...proven.map((p) => p.maxRssBytes)) },
  };
}

/** The `create_attestation` params that record a user-side claim straight through the InputBox, from the owner's wallet. */
export function attestationInput(claim: UserProvenClaim, owner: Address): { type: "create_attestation"; params: Record<string, unknown> } {
  return {
    type: "create_attestation",
    params: {
      schema_id: claim.schemaId,
      owner: owner.toLowerCase(),
      provider: "http",
      encrypted_data: claim.encryptedData,
      bucket_values: { [claim.field]: claim.bucket },
      proofs: claim.proofs,
      ...(claim.nullifier === undefined ? {} : { nullifier: claim.nullifier }),
    },
  };
}
