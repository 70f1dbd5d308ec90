/**
 * A claim's provider value for a schema that requires proof: the same request rules as a plain fetch
 * (method, headers, host vetting), then the bucket proven by the schema's quorum of TLS attestors
 * (each through its own TLS session), checked the way the dapp will check it, so a claim that the rollup
 * would reject fails here with a reason instead.
 */
import type { Address, Hex } from "viem";
import type { BucketDefinition } from "../../common/buckets.ts";
import { checkProofs, ProofProblem } from "../../common/proof-check.ts";
import type { ShareEvaluation } from "../../common/nullifier.ts";
import type { ProveRequest } from "../../common/prover-protocol.ts";
import type { ProofMode, TlsProof } from "../../common/tls-claim.ts";
import { proofFieldProblem } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";
import { readNumericField } from "./field.ts";
import { proofFailed, type ProverPool } from "./attestor.ts";
import { checkHeaders, checkMethod, checkUrl, redactUrl, systemResolver, URL_EXPECTATION, vetHost, type Resolver } from "./target.ts";

export interface ProvenRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  field: string;
  definition: BucketDefinition;
  owner: Address;
  schemaId: Hex;
  domain: string;
  /** How many distinct attestors must sign (the schema's quorum). */
  quorum: number;
  /** The claim's `proofMode`, else the api's ATTESTOR_MODE. */
  mode: ProofMode;
  /** For a schema unique per account: the claim's blind and the account's field, handed to every attestor. */
  nullifier?: ProveRequest["nullifier"];
}

export interface ProvenDeps {
  pool: Pick<ProverPool, "prove">;
  /** The attestors the api proves through, in order: a quorum of k uses the first k. */
  attestorUrls: readonly string[];
  allowedHosts: readonly string[];
  /** The attestors the rollup trusts now (the dapp's `tls_attestors`), lower-case. */
  registeredAttestors(): Promise<ReadonlySet<string>>;
  /** Unix seconds: the dapp judges the claims' age by block time, close to this. */
  now(): number;
  resolve?: Resolver;
}

export interface ProvenFetch {
  /** The provider's JSON body as the first prover decrypted it (data keys and the value are read from it, to seal). */
  body: unknown;
  value: number;
  /** The bucket every claim proves. */
  label: string;
  proofs: TlsProof[];
  attestors: Address[];
  mode: ProofMode;
  /** With a request's `nullifier`: each attestor's evaluation of its share, in the order of `proofs`. */
  evaluations: (ShareEvaluation | undefined)[];
}

export async function fetchProven(request: ProvenRequest, deps: ProvenDeps): Promise<ProvenFetch> {
  const method = checkMethod(request.method);
  const headers = checkHeaders(request.headers);
  const url = checkUrl(request.url, deps.allowedHosts);
  if (url.protocol !== "https:") {
    throw new ApiError("INVALID_PARAMETER", "a proven claim needs an https provider URL: the attestor proves a TLS session", {
      parameter: "params.url",
      value: redactUrl(url),
      expected: "an https URL",
    });
  }
  const fieldProblem = proofFieldProblem(request.field);
  if (fieldProblem !== undefined) throw new ApiError("INVALID_REQUEST", fieldProblem, { field: "bucketDefinition.field", issue: fieldProblem });
  const vetted = await vetHost(url.hostname, deps.allowedHosts, deps.resolve ?? systemResolver).catch(() => undefined);
  if (vetted === undefined) {
    throw new ApiError("PROVIDER_UNAVAILABLE", "provider is not responding", { provider: "http", url: redactUrl(url), error: "host name not found" });
  }
  if (!vetted.ok) {
    throw new ApiError("INVALID_PARAMETER", `provider URL refused: ${vetted.reason}`, { parameter: "params.url", value: redactUrl(url), expected: URL_EXPECTATION });
  }
  // A claim no quorum in the rollup can vouch for would only be rejected there: say so before proving.
  const trusted = await deps.registeredAttestors();
  if (trusted.size === 0) throw proofFailed("no attestor is registered in the rollup (an admin registers one with set_tls_attestor)");
  if (deps.attestorUrls.length < request.quorum) {
    throw proofFailed(`schema ${request.schemaId} requires ${request.quorum} attestors and the api knows ${deps.attestorUrls.length} (ATTESTOR_URL)`);
  }

  const proven = await deps.pool.prove(
    {
      url: url.href,
      method,
      headers,
      field: request.field,
      definition: request.definition,
      owner: request.owner,
      schemaId: request.schemaId,
      mode: request.mode,
      ...(request.nullifier === undefined ? {} : { nullifier: request.nullifier }),
    },
    deps.attestorUrls.slice(0, request.quorum),
  );
  const first = proven[0];
  if (first === undefined) throw proofFailed("no attestor answered");
  const proofs = proven.map(({ claim, signature }) => ({ claim, signature }));
  const label = first.label;
  try {
    checkProofs(
      proofs,
      {
        schemaId: request.schemaId,
        domain: request.domain,
        definitions: { [request.field]: request.definition },
        quorum: request.quorum,
        owner: request.owner,
        bucketValues: { [request.field]: label },
        now: deps.now(),
      },
      (address) => trusted.has(address),
    );
  } catch (error) {
    if (error instanceof ProofProblem) throw proofFailed(`the attestors' claims do not check: ${error.message}`);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(first.response.body);
  } catch {
    throw new ApiError("PROVIDER_INVALID_RESPONSE", "provider response is not JSON", { expected: "JSON body", received: "a body that is not JSON" });
  }
  const value = readNumericField(body, request.field);
  return { body, value, label, proofs, attestors: proven.map((p) => p.attestor.toLowerCase() as Address), mode: request.mode, evaluations: proven.map((p) => p.nullifier) };
}
