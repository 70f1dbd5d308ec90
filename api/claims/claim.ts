/**
 * The specification's claim (`POST /api/core/claim`): the api reads the provider's value (itself, or
 * through the schema's quorum of TLS attestors when the schema requires proof), buckets it, seals it for
 * the registered key and records it. The owner is the token's address.
 */
import type { Address, Hex } from "viem";
import { bucketOf, type BucketDefinition } from "../../common/buckets.ts";
import type { ProofMode } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";
import { DEFAULT_PROVIDER_MAX_BODY_BYTES, DEFAULT_PROVIDER_TIMEOUT_MS, fetchProviderJson, readNumericField } from "../provider/index.ts";
import { fetchProven } from "../provider/proven.ts";
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
  // Its claims carry a nullifier made with the attestors' key shares, which the api's prover does not
  // run (docs/nullifiers.md, "Remaining"): refused here rather than as the rollup's rejection.
  if (schema.accountIdField !== undefined) {
    throw new ApiError("INVALID_REQUEST", `Schema ${schema.schemaId} is unique per account: its claims carry a nullifier the api cannot make yet`, {
      field: "schemaId",
      issue: "prove on your side and send the claims with their nullifier to POST /api/core/claim/proven",
    });
  }
  const seal = await sealerFor(services, schema, request.owner);

  if (schema.proof === "attestor") {
    const mode = request.proofMode ?? services.config.attestor.mode;
    const proven = await fetchProven(
      { ...request.params, field, definition: schema.definition, owner: request.owner, schemaId: schema.schemaId, domain: schema.domain, quorum: schema.quorum, mode },
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
      },
      { reqId: request.requestId, path: "api", attestors: proven.attestors, mode },
    );
  }

  const fetched = await fetchProviderJson(request.params, {
    allowedHosts: services.config.providerAllowedHosts,
    timeoutMs: DEFAULT_PROVIDER_TIMEOUT_MS,
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
