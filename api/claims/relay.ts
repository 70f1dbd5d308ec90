/**
 * A claim proven on the user's side (`POST /api/core/claim/proven`, an extension): the user's own prover
 * fetched the provider, the schema's quorum of attestors signed that the value lies in its bucket, and
 * the user sealed the data for the registered key. The api sees neither the provider's credentials nor
 * the value: it checks the signed claims the way the dapp will, and relays them for the token's address.
 */
import type { Address, Hex } from "viem";
import { checkProofs, ProofProblem } from "../../common/proof-check.ts";
import type { TlsProof } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";
import { recordAttestation, type RecordedClaim } from "./record.ts";
import { namedSchema } from "./schema.ts";
import type { ClaimServices } from "./services.ts";

export interface ProvenClaimRequest {
  owner: Address;
  schemaId: Hex;
  field: string;
  bucket: string;
  encryptedData: Hex;
  proofs: TlsProof[];
  requestId: string | undefined;
}

function badProofs(issue: string): ApiError {
  return new ApiError("INVALID_REQUEST", `The signed claims do not prove the attestation: ${issue}`, { field: "proofs", issue });
}

export async function relayProvenClaim(services: ClaimServices, request: ProvenClaimRequest): Promise<RecordedClaim> {
  const schema = await namedSchema(services, "http", undefined, request.field, request.schemaId);
  if (!schema.definition.labels.includes(request.bucket)) {
    throw new ApiError("INVALID_REQUEST", `"${request.bucket}" is not a label of ${request.field}`, { field: "bucket", issue: `must be one of ${schema.definition.labels.join(", ")}` });
  }
  const trusted = await services.registeredAttestors();
  try {
    checkProofs(
      request.proofs,
      {
        schemaId: schema.schemaId,
        domain: schema.domain,
        definitions: { [request.field]: schema.definition },
        quorum: schema.quorum,
        owner: request.owner,
        bucketValues: { [request.field]: request.bucket },
        now: services.now(),
      },
      (address) => trusted.has(address),
    );
  } catch (error) {
    if (error instanceof ProofProblem) throw badProofs(error.message);
    throw error;
  }
  return recordAttestation(
    services,
    {
      schemaId: schema.schemaId,
      owner: request.owner,
      provider: "http",
      encryptedData: request.encryptedData,
      field: request.field,
      bucket: request.bucket,
      proofs: request.proofs,
    },
    { reqId: request.requestId, path: "relay", attestors: request.proofs.length },
  );
}

