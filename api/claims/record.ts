/**
 * The last step of every claim path: the attestation as a `create_attestation` write, its id from the
 * input's position, and the log line that ties the request to its input and its notice.
 */
import type { Address, Hex } from "viem";
import { writeIdOf } from "../../common/ids.ts";
import { nativeKeccakHex } from "../../common/native-keccak.ts";
import type { PublishedNullifier } from "../../common/nullifier.ts";
import type { TlsProof } from "../../common/tls-claim.ts";
import type { ClaimServices } from "./services.ts";

export interface AttestationToRecord {
  schemaId: Hex;
  owner: Address;
  provider: string;
  encryptedData: Hex;
  field: string;
  bucket: string;
  proofs?: TlsProof[];
  /** A schema unique per account's claim: its nullifier's published parts (docs/nullifiers.md). */
  nullifier?: PublishedNullifier;
}

export interface RecordedClaim {
  claimId: Hex;
  txHash: Hex;
  bucket: string;
  /** Its schema is unique per account: the claim carried a nullifier the rollup bound to the owner. */
  uniquePerAccount: boolean;
}

/** `trace` goes into the log line: the request id and how the claim was made (never a value). */
export async function recordAttestation(services: ClaimServices, a: AttestationToRecord, trace: Record<string, unknown>): Promise<RecordedClaim> {
  const submitted = await services.write(
    "create_attestation",
    {
      schema_id: a.schemaId,
      owner: a.owner,
      provider: a.provider,
      encrypted_data: a.encryptedData,
      bucket_values: { [a.field]: a.bucket },
      ...(a.proofs === undefined ? {} : { proofs: a.proofs }),
      ...(a.nullifier === undefined ? {} : { nullifier: a.nullifier }),
    },
    { schemaId: a.schemaId },
  );
  const claimId = writeIdOf("create_attestation", submitted.inputIndex, submitted.item, nativeKeccakHex);
  services.logger.info(
    { ...trace, claimId, inputIndex: submitted.inputIndex, item: submitted.item, txHash: submitted.txHash, schemaId: a.schemaId },
    "claim recorded",
  );
  return { claimId, txHash: submitted.txHash, bucket: a.bucket, uniquePerAccount: a.nullifier !== undefined };
}
