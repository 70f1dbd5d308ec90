/** Rows → the rollup view of common/wire.ts (snake_case, lower-case hex). */
import type { Address } from "viem";
import type { BucketDefinition } from "../common/buckets.ts";
import { bytesToHex } from "../common/hex.ts";
import type { AttestationListItem, AttestationView, GrantView, SchemaDetail, SchemaSummary, TlsAttestorView } from "../common/wire.ts";
import type { AttestationRead, GrantRow, SchemaRow, TlsAttestorRow } from "./db/store.ts";

export function schemaSummary(row: SchemaRow, includeDescription: boolean): SchemaSummary {
  return {
    schema_id: bytesToHex(row.schemaId),
    name: row.name,
    ...(includeDescription ? { description: row.description } : {}),
    provider_type: row.providerType,
    bucket_definitions: JSON.parse(row.bucketDefinitions) as Record<string, BucketDefinition>,
  };
}

export function schemaDetail(row: SchemaRow, includeDescription: boolean): SchemaDetail {
  return {
    ...schemaSummary(row, includeDescription),
    data_keys: JSON.parse(row.dataKeys) as string[],
    freshness_half_life: row.freshnessHalfLife,
    domain: row.domain,
    proof: row.proof,
    attestor_quorum: row.attestorQuorum,
  };
}

export function attestationView(row: AttestationRead): AttestationView {
  return {
    attestation_id: row.attestationId,
    schema_id: row.schemaId,
    owner: row.owner,
    encrypted_data: row.encryptedData,
    bucket_values: JSON.parse(row.bucketValues) as Record<string, string>,
    timestamp: row.timestamp,
    input_index: row.inputIndex,
    item_index: row.itemIndex,
    attestor: row.attestor,
    attestors: row.attestors !== null ? (JSON.parse(row.attestors) as Address[]) : row.attestor === null ? [] : [row.attestor],
  };
}

export function attestationListItem(row: AttestationRead): AttestationListItem {
  return { ...attestationView(row), block_number: row.blockNumber };
}

export function grantView(row: GrantRow): GrantView {
  return {
    grant_id: bytesToHex(row.grantId),
    requester: bytesToHex(row.requester),
    schema_id: bytesToHex(row.schemaId),
    created_at: row.createdAt,
    expires_at: row.expiresAt,
  };
}

export function tlsAttestorView(row: TlsAttestorRow): TlsAttestorView {
  return { address: bytesToHex(row.address), name: row.name, added_at: row.addedAt };
}
