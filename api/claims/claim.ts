/**
 * The specification's claim (`POST /api/core/claim`): the api reads the provider's value (itself, or
 * through the schema's quorum of TLS attestors when the schema requires proof), buckets it, seals it for
 * the registered key and records it. The owner is the token's address.
 */
import type { Address, Hex } from "viem";
import { bucketOf, type BucketDefinition } from "../../common/buckets.ts";
import type { ProofMode } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";
import { DEFAULT_PROVIDER_MAX_BODY_BYTES, fetchProviderJson, readNumericField } from "../provider/index.ts";
import { fetchProven, type ProvenFetch } from "../provider/proven.ts";
import { proofFailed } from "../provider/attestor.ts";
import { drawClaimBlind, finishClaimNullifier, type ClaimBlind } from "../../common/claim-nullifier.ts";
import { NullifierError, type NullifierKeys, type PublishedNullifier } from "../../common/nullifier.ts";
import { sealedContent } from "../../common/sealed-content.ts";
import { invalidParameter } from "../validation.ts";
import { recordAttestation, type RecordedClaim } from "./record.ts";
import { assertSameDefinition, chooseSchema } from "./schema.ts";
import { sealerFor } from "./seal.ts";
import type { ClaimServices } from "./services.ts";

export interface ClaimRequest {
  owner: Address;
  provider: string;
  params: { url: string; method: string; headers: Record<string, string> };
  bucketDefinition: BucketDefinition & { field: string };
  schemaId?: Hex | undefined;
  proofMode?: ProofMode | undefined;
  requestId: string | undefined;
}

/** The rollup's key set, read before anything is proven: without one no nullifier can be finished. */
async function claimKeys(services: ClaimServices): Promise<NullifierKeys> {
  return services.nullifierKeys().catch((error: unknown) => {
    if (error instanceof ApiError && error.code === "NOT_FOUND") throw proofFailed("no nullifier key set is registered in the rollup (an admin registers one with set_nullifier_keys)");
    throw error;
  });
}

/**
 * The claim's nullifier from its attestors' evaluations, finished against the rollup's key set. A share
 * that does not check, or fewer than t, is the attestors' failure: ZKTLS_PROOF_FAILED with the reason, as
 * for their signatures.
 */
function nullifierOf(blind: ClaimBlind, keys: NullifierKeys, proven: ProvenFetch): PublishedNullifier {
  try {
    return finishClaimNullifier(blind, proven.proofs.map((p, i) => ({ claim: p.claim, nullifier: proven.evaluations[i] })), keys);
  } catch (error) {
    if (error instanceof NullifierError) throw proofFailed(`nullifier: ${error.message}`);
    throw error;
  }
}

export async function makeClaim(services: ClaimServices, request: ClaimRequest): Promise<RecordedClaim> {
  if (request.provider !== "http") {
    throw new ApiError("INVALID_REQUEST", `Unsupported provider ${request.provider}`, { field: "provider", issue: 'only provider "http" is supported' });
  }
  let host: string;
  try {
    host = new URL(request.params.url).hostname.toLowerCase().replace(/^\[|\]$/g, "");
  } catch {
    // The same answer the provider fetch gives for a URL it cannot parse.
    throw invalidParameter("params.url", "(not a valid URL)", "an absolute http(s) URL");
  }
  const { field, boundaries, labels } = request.bucketDefinition;
  const schema = await chooseSchema(services, request.provider, host, field, request.schemaId);
  assertSameDefinition(schema, field, { boundaries, labels });
  const seal = await sealerFor(services, schema, request.owner);

  if (schema.proof === "attestor") {
    const mode = request.proofMode ?? services.config.attestor.mode;
    // A schema unique per account: one blind r for every attestor of the claim (docs/nullifiers.md).
    const blind = schema.accountIdField === undefined ? undefined : drawClaimBlind(schema.accountIdField);
    const keys = blind === undefined ? undefined : await claimKeys(services);
    const proven = await fetchProven(
      { ...request.params, field, definition: schema.definition, owner: request.owner, schemaId: schema.schemaId, domain: schema.domain, quorum: schema.quorum, mode, ...(blind === undefined ? {} : { nullifier: blind.request }) },
      {
        pool: services.attestor,
        attestorUrls: services.config.attestor.urls,
        allowedHosts: services.config.providerAllowedHosts,
        registeredAttestors: services.registeredAttestors,
        now: services.now,
      },
    );
    return recordAttestation(
      services,
      {
        schemaId: schema.schemaId,
        owner: request.owner,
        provider: request.provider,
        encryptedData: seal(sealedContent(proven.body, schema, field, proven.value)),
        field,
        bucket: proven.label,
        proofs: proven.proofs,
        ...(blind === undefined || keys === undefined ? {} : { nullifier: nullifierOf(blind, keys, proven) }),
      },
      { reqId: request.requestId, path: "api", attestors: proven.attestors, mode },
    );
  }

  const fetched = await fetchProviderJson(request.params, {
    allowedHosts: services.config.providerAllowedHosts,
    timeoutMs: services.config.providerTimeoutMs,
    maxBodyBytes: DEFAULT_PROVIDER_MAX_BODY_BYTES,
  });
  const value = readNumericField(fetched.body, field);
  const bucket = bucketOf(value, schema.definition);
  if (bucket === undefined) {
    // Never echo the value: it is private, only its bucket is ever published.
    throw new ApiError("PROVIDER_INVALID_RESPONSE", "The provider's value falls outside every bucket", {
      expected: `a value within the buckets of ${field}`,
      received: "a value outside every bucket",
    });
  }
  return recordAttestation(
    services,
    {
      schemaId: schema.schemaId,
      owner: request.owner,
      provider: request.provider,
      encryptedData: seal(sealedContent(fetched.body, schema, field, value)),
      field,
      bucket,
    },
    { reqId: request.requestId, path: "api" },
  );
}
