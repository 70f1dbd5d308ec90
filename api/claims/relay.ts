/**
 * A claim proven on the user's side (`POST /api/core/claim/proven`, an extension): the user's own prover
 * fetched the provider, the schema's quorum of attestors signed that the value lies in its bucket, and
 * the user sealed the data for the registered key. The api sees neither the provider's credentials nor
 * the value: it checks the signed claims the way the dapp will, and relays them for the token's address.
 */
import type { Address, Hex } from "viem";
import type { PublishedNullifier } from "../../common/nullifier.ts";
import { checkProofs, ProofProblem } from "../../common/proof-check.ts";
import { nullifierBindingProblem, type TlsProof } from "../../common/tls-claim.ts";
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
  /** Required for a schema unique per account, refused for any other. */
  nullifier?: PublishedNullifier | undefined;
  requestId: string | undefined;
}

function badProofs(issue: string): ApiError {
  return new ApiError("INVALID_REQUEST", `The signed claims do not prove the attestation: ${issue}`, { field: "proofs", issue });
}

/**
 * The nullifier's parts against the schema and the signed claims, as the dapp will hold them
 * (dapp/nullifier.ts): there exactly when the schema is unique per account, and bound by every claim's
 * signed context to its blind (B, R) and to the schema's account field. The proofs of the parts are the
 * rollup's to check against the registered key set; an account already bound is its answer too (409).
 */
function checkNullifierBinding(request: ProvenClaimRequest, schemaId: Hex, accountIdField: string | undefined): void {
  const { nullifier } = request;
  if (accountIdField === undefined) {
    if (nullifier !== undefined) throw new ApiError("INVALID_REQUEST", `Schema ${schemaId} is not unique per account: send no nullifier`, { field: "nullifier", issue: "only a schema unique per account takes one" });
    return;
  }
  if (nullifier === undefined) {
    throw new ApiError("INVALID_REQUEST", `Schema ${schemaId} is unique per account: its claims carry a nullifier`, { field: "nullifier", issue: "required: the nullifier made with the attestors' shares (docs/nullifiers.md)" });
  }
  request.proofs.forEach((proof, i) => {
    const problem = nullifierBindingProblem(proof.claim.context, nullifier, accountIdField);
    if (problem !== undefined) throw badProofs(`claim ${i + 1}: ${problem}`);
  });
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
  checkNullifierBinding(request, schema.schemaId, schema.accountIdField);
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
      ...(request.nullifier === undefined ? {} : { nullifier: request.nullifier }),
    },
    { reqId: request.requestId, path: "relay", attestors: request.proofs.length },
  );
}

