/**
 * A claim's provider value for a schema that requires proof: the same request rules as a plain fetch
 * (method, headers, host vetting), then the value through the TLS attestor, checked the way the dapp
 * will check it, so a claim that the rollup would reject fails here with a reason instead.
 */
import type { Address, Hex } from "viem";
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
  owner: Address;
  schemaId: Hex;
  /** The api's configured mode unless the claim asks for one. */
  mode?: ProofMode;
}

export interface ProvenDeps {
  pool: Pick<ProverPool, "prove">;
  allowedHosts: readonly string[];
  /** The attestors the rollup trusts now (the dapp's `tls_attestors`), lower-case. */
  registeredAttestors(): Promise<ReadonlySet<string>>;
  resolve?: Resolver;
}

export interface ProvenFetch {
  /** The provider's JSON body as the prover decrypted it (data keys are read from it). */
  body: unknown;
  value: number;
  proof: TlsProof;
  attestor: Address;
  mode: ProofMode;
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
  // A claim no attestor in the rollup can vouch for would only be rejected there: say so before proving.
  const trusted = await deps.registeredAttestors();
  if (trusted.size === 0) throw proofFailed("no attestor is registered in the rollup (an admin registers one with set_tls_attestor)");

  const proven = await deps.pool.prove({
    url: url.href,
    method,
    headers,
    field: request.field,
    owner: request.owner,
    schemaId: request.schemaId,
    ...(request.mode === undefined ? {} : { mode: request.mode }),
  });
  if (!trusted.has(proven.attestor)) throw proofFailed(`attestor ${proven.attestor} is not registered in the rollup`);

  let body: unknown;
  try {
    body = JSON.parse(proven.success.response.body);
  } catch {
    throw new ApiError("PROVIDER_INVALID_RESPONSE", "provider response is not JSON", { expected: "JSON body", received: "a body that is not JSON" });
  }
  const value = readNumericField(body, request.field);
  // The sealed value must be the one the attestor signed, or the bucket the dapp recomputes could differ.
  if (value !== Number(proven.signedValue)) throw proofFailed(`extraction failed: the attestor signed another value than the body holds at ${request.field}`);
  const { claim, signature } = proven.success;
  return { body, value, proof: { claim, signature }, attestor: proven.attestor, mode: proofModeOf(claim.parameters) };
}

function proofModeOf(parameters: string): ProofMode {
  return parameters.includes('"responseRedactions"') ? "zk" : "reveal";
}
