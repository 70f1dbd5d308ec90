/** Rows → the rollup view of common/wire.ts (snake_case, lower-case hex). */
import type { Address } from "viem";
import type { BucketDefinition } from "../common/buckets.ts";
import { bytesToHex } from "../common/hex.ts";
import { freshnessAt, statusAt } from "../common/validity.ts";
import type { AttestationListItem, AttestationView, GrantView, RevocationView, SchemaDetail, SchemaSummary, TlsAttestorView } from "../common/wire.ts";
import type { AttestationRead, GrantRow, SchemaRow, TlsAttestorRow } from "./db/store.ts";

/** What a schema query adds on request: `include_description`, `include_index` (the schema's short index). */
export interface SchemaExtras {
  description: boolean;
  index: boolean;
}

export function schemaSummary(row: SchemaRow, extras: SchemaExtras): SchemaSummary {
  return {
    schema_id: bytesToHex(row.schemaId),
    name: row.name,
    ...(extras.description ? { description: row.description } : {}),
    provider_type: row.providerType,
    bucket_definitions: JSON.parse(row.bucketDefinitions) as Record<string, BucketDefinition>,
    // The row id: assigned at registration in creation order and never reused (store.schemaByIndex).
    ...(extras.index ? { schema_index: row.id } : {}),
  };
}

export function schemaDetail(row: SchemaRow, extras: SchemaExtras): SchemaDetail {
  return {
    ...schemaSummary(row, extras),
    data_keys: JSON.parse(row.dataKeys) as string[],
    freshness_half_life: row.freshnessHalfLife,
    domain: row.domain,
    proof: row.proof,
    attestor_quorum: row.attestorQuorum,
    validity_period: row.validityPeriod,
    require_signed_consent: row.requireSignedConsent,
    sealing: row.sealing,
    unique_per_account: row.accountIdField !== null,
    account_id_field: row.accountIdField,
  };
}

/** When an attestation's status and freshness are read: the query's `at`, and its schema's half-life. */
export interface ValidityClock {
  at: number;
  halfLife: number;
}

function revocationView(row: AttestationRead): RevocationView | null {
  if (row.revokedAt === null || row.revoker === null || row.revocationInput === null) return null;
  return { revoked_at: row.revokedAt, revoker: row.revoker, reason: row.revocationReason ?? "", superseded_by: row.supersededBy, input_index: row.revocationInput };
}

export function attestationView(row: AttestationRead, clock: ValidityClock): AttestationView {
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
    attester: row.attester,
    expires_at: row.expiresAt,
    revocation: revocationView(row),
    status: statusAt(row, clock.at),
    freshness: freshnessAt(row.timestamp, clock.halfLife, clock.at),
    at: clock.at,
  };
}

export function attestationListItem(row: AttestationRead, clock: ValidityClock): AttestationListItem {
  return { ...attestationView(row, clock), block_number: row.blockNumber };
}

export function grantView(row: GrantRow): GrantView {
  return {
    grant_id: bytesToHex(row.grantId),
    requester: bytesToHex(row.requester),
    schema_id: bytesToHex(row.schemaId),
    created_at: row.createdAt,
    expires_at: row.expiresAt,
    consent: row.consent,
  };
}

export function tlsAttestorView(row: TlsAttestorRow): TlsAttestorView {
  return { address: bytesToHex(row.address), name: row.name, added_at: row.addedAt };
}
