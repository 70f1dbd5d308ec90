/**
 * The contract between the dapp and everything that talks to it (devnode, api, scripts, tests):
 * input kinds, query types, notice events, result shapes and rejection codes. Payloads travel as hex
 * of UTF-8 JSON; both advance inputs and inspect queries are `{type, params}`.
 */
import type { Address, Hex } from "viem";
import type { BucketDefinition } from "./buckets.ts";
import type { NullifierKeySetJson, NullifierKeysView, NullifierKeysWire, PublishedNullifier } from "./nullifier.ts";
import type { ProofKind, TlsProof } from "./tls-claim.ts";

export const INPUT_KINDS = [
  "register_schema",
  "register_encryption_key",
  "create_attestation",
  "grant_access",
  "revoke_grant",
  "set_role",
  "set_tls_attestor",
  "revoke_attestation",
  "register_owner_key",
  "share_keys",
  "set_nullifier_keys",
] as const;
export type InputKind = (typeof INPUT_KINDS)[number];

export const QUERY_TYPES = [
  "all_provider_schemas",
  "provider_schema",
  "attestations_by_owner",
  "attestation",
  "check_access",
  "grants_by_owner",
  "health",
  "tls_attestors",
  "encryption_key",
  "verify",
  "owner_key",
  "content_key",
  "nullifier_keys",
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export const ROLES = ["admin", "attestor", "operator"] as const;
export type Role = (typeof ROLES)[number];

export interface Envelope<T extends string = string> {
  type: T;
  params: Record<string, unknown>;
}

/** Parameters of each advance input kind, as a sender writes them (DECISIONS.md section 2). */
export interface InputParams {
  register_schema: {
    provider: string;
    flowType: string;
    domain: string;
    bucketDefinitions: Record<string, BucketDefinition>;
    dataKeys: string[];
    freshnessHalfLife: number;
    name?: string;
    description?: string;
    /** Extension: "attestor" makes the schema take only attestations with TLS attestors' signed claims. */
    proof?: ProofKind;
    /** Extension, with proof "attestor": how many distinct registered attestors must sign (1 to 16, default 1). */
    attestorQuorum?: number;
    /** Extension: seconds an attestation of the schema stays valid; each gets `expires_at` = its time + this. */
    validityPeriod?: number;
    /** Extension: grants and revokes of the schema's data need the owner's own consent (signed, or from its wallet). */
    requireSignedConsent?: boolean;
    /** Extension: whose keys open its attestations' data (default "admin", the specification's; docs/consent.md). */
    sealing?: Sealing;
    /** Extension, with proof "attestor": the account id's JSON path; the schema is then unique per account (docs/nullifiers.md). */
    accountIdField?: string;
  };
  register_encryption_key: { publicKey: string; algorithm: "nacl-box" };
  create_attestation: {
    schema_id: Hex;
    owner: Address;
    provider: string;
    encrypted_data: Hex;
    bucket_values: Record<string, string>;
    /**
     * Signed claims that the bucketed value lies in the bucket's range, one per attestor of the schema's
     * quorum (required by a schema with proof "attestor"). With them the owner may send the input itself.
     */
    proofs?: TlsProof[];
    /** Extension, required by a schema unique per account: its nullifier's parts, B and R bound in each signed context. */
    nullifier?: PublishedNullifier;
  };
  /** Extension: `consent`, the owner's EIP-712 signature (common/consent.ts); then anyone may send it, naming `owner`. */
  grant_access: { requester: Address; schema_id: Hex; expires_at: number; owner?: Address; consent?: SignedConsent; keys?: SharedKey[] };
  /** Extension: an owner's own NaCl key, sent from its wallet or with its signature (an operator's word is not enough). */
  register_owner_key: { public_key: string; algorithm: "nacl-box"; owner?: Address; consent?: SignedConsent };
  /** Extension: more content keys for a standing grant (attestations made after it); none for a revoked one. */
  share_keys: { grant_id: Hex; keys: SharedKey[]; owner?: Address };
  revoke_grant: { grant_id: Hex; owner?: Address; consent?: SignedConsent };
  set_role: { address: Address; role: Role; enabled: boolean };
  /** Trusts (or with enabled: false, stops trusting) a TLS attestor's signing address. */
  set_tls_attestor: { address: Address; enabled: boolean; name?: string };
  /** Extension: the nullifier key set and each share's registered holder; a later one keeps the group key (a re-sharing). */
  set_nullifier_keys: { keySet: NullifierKeySetJson; attestors: { index: number; address: Address }[] };
  /**
   * Extension: revokes an attestation (its attester, one of the TLS attestors that proved it, or an admin)
   * or withdraws it (its owner). It stays readable, marked; a notice records the revocation.
   */
  revoke_attestation: { attestation_id: Hex; reason?: string; superseded_by?: Hex };
}

/** The owner's signature of a grant or a revoke (EIP-712, common/consent.ts), its nonce and deadline. */
export interface SignedConsent {
  nonce: Hex;
  /** Unix seconds; judged by the input's block time. */
  deadline: number;
  signature: Hex;
}

/** Whose keys open an attestation's data: the admin's registered key, the owner's own key, or both. */
export const SEALINGS = ["admin", "owner", "owner+admin"] as const;
export type Sealing = (typeof SEALINGS)[number];

/** A content key an owner shares with a grant's requester, sealed to the requester's key (common/content-seal.ts). */
export interface SharedKey {
  attestation_id: Hex;
  /** 0x hex of the 104-byte sealed content key. */
  sealed_key: Hex;
}

/** Whose word made a grant: the owner's signature, the owner's own wallet, or an operator naming the owner. */
export type ConsentKind = "signed" | "owner" | "relayed";

/**
 * The `batch` kind (DECISIONS.md section 2): 1 to 256 inputs of the kinds above, each applied on its own
 * as if its sender had sent it alone. Not an InputKind: a batch cannot hold a batch.
 */
export const BATCH_KIND = "batch";
export const BATCH_MAX_ITEMS = 256;
/**
 * The compact batch (common/compact-batch.ts): the same items in a versioned binary layout, recognised by
 * its first byte (0xC1, which no UTF-8 text holds), not by a JSON `type`. The name is what logs call it.
 */
export const COMPACT_BATCH_KIND = "compact_batch";
export interface BatchParams {
  items: { type: InputKind; params: InputParams[InputKind] }[];
}

/** The report of a batch item that failed: its position (0-based) and why; the item left no trace. */
export interface BatchItemErrorReport {
  item: number;
  error: { code: DappErrorCode; message: string };
}

/** The specification's WebSocket `attestation:created` data: the notice's record without schema and bucket. */
export interface AttestationCreatedEvent {
  event: "attestation:created";
  /** `attestor` (an extension) only when TLS attestors proved the bucket: the first of them. */
  data: { claimId: Hex; owner: Address; provider: string; attestor?: Address };
}

/** Notices the dapp emits for accepted inputs: `{event, data}`; the api relays them on its WebSocket. */
export type NoticeEvent =
  | {
      event: "attestation:created";
      /** schema_id and bucket_values make the notice a record a contract can check; the WebSocket relays the first three. */
      data: {
        claimId: Hex;
        owner: Address;
        provider: string;
        schema_id: Hex;
        bucket_values: Record<string, string>;
        /** The (first) attestor, when the bucket was proven. */
        attestor?: Address;
        /** Every attestor, only when a quorum of more than one signed. */
        attestors?: Address[];
        /** The account that sent the attestation (EAS's `attester`). */
        attester: Address;
        /** Its input's block time: when it was made, and where its freshness starts. */
        timestamp: number;
        /** When it stops being valid (its schema's validity period after `timestamp`), or null: never. */
        expires_at: number | null;
        /** The schema's half-life (seconds), so a contract can weigh freshness from the notice alone. */
        freshness_half_life: number;
      };
    }
  | {
      event: "attestation:revoked";
      data: {
        claimId: Hex;
        owner: Address;
        schema_id: Hex;
        /** The account that sent the revocation. */
        revoker: Address;
        revoked_at: number;
        /** "" when none was given. */
        reason: string;
        superseded_by: Hex | null;
      };
    }
  | { event: "grant:created"; data: { grantId: Hex; owner: Address; requester: Address } }
  | { event: "grant:revoked"; data: { grantId: Hex; owner: Address } }
  | { event: "schema:registered"; data: { schema_id: Hex } }
  | { event: "key:registered"; data: { keyId: Hex } }
  | { event: "attestor:registered"; data: { address: Address; name: string } }
  | { event: "attestor:removed"; data: { address: Address } }
  | { event: "nullifier_keys:registered"; data: NullifierKeysView }
  | { event: "owner_key:registered"; data: { owner: Address; keyId: Hex } }
  | { event: "keys:shared"; data: { grantId: Hex; owner: Address; requester: Address; attestations: Hex[] } };

/** Codes of a rejected advance input, reported as `{"error": {"code", "message"}}`. */
export const DAPP_ERROR_CODES = [
  "INVALID_PAYLOAD", // not hex, not UTF-8, not JSON, or not a {type, params} object
  "UNKNOWN_KIND",
  "INVALID_PARAMS",
  "UNAUTHORIZED_SENDER", // the sender lacks the role the kind needs
  "NOT_OWNER", // acting on a grant of another owner
  "SCHEMA_NOT_FOUND",
  "GRANT_NOT_FOUND",
  "DUPLICATE",
  "PROOF_REJECTED", // an attestor's claim that does not check out (dapp/proof.ts)
  "ATTESTATION_NOT_FOUND",
  "ALREADY_REVOKED",
  "CONSENT_REJECTED", // a signed consent that does not check out, or a relayed one a schema refuses
  "NULLIFIER_REJECTED", // a claim's nullifier that does not check out, or is missing where the schema needs one (dapp/nullifier.ts)
  "ACCOUNT_ALREADY_BOUND", // the claim's provider account already backs another owner of the schema
  "INTERNAL_ERROR",
] as const;
export type DappErrorCode = (typeof DAPP_ERROR_CODES)[number];

export interface DappErrorReport {
  error: { code: DappErrorCode; message: string };
}

// ---- Query results (rollup view, snake_case as the specification names them) ----

export interface SchemaSummary {
  schema_id: Hex;
  name: string;
  provider_type: string;
  bucket_definitions: Record<string, BucketDefinition>;
  /** Only when the query asks `include_description: true` (the api's views need it). */
  description?: string;
  /**
   * Extension, only when the query asks `include_index: true`: the short index the rollup gave the schema
   * at registration (its row id, in creation order, never reused), by which a compact batch names it.
   */
  schema_index?: number;
}

export interface SchemaDetail extends SchemaSummary {
  data_keys: string[];
  freshness_half_life: number;
  /** Extension: the provider's host name, which a proven claim's URL must name. */
  domain: string;
  /** Extension: whether the schema's attestations must be proven by TLS attestors. */
  proof: ProofKind;
  /** Extension: how many distinct registered attestors must sign each attestation's claim. */
  attestor_quorum: number;
  /** Extension: seconds an attestation stays valid after its time, or null: it never expires. */
  validity_period: number | null;
  /** Extension: grants and revokes need the owner's own consent (relayed ones are refused). */
  require_signed_consent: boolean;
  /** Extension: whose keys open its attestations' data. */
  sealing: Sealing;
  /** Extension: one provider account backs one owner (its claims carry nullifiers; docs/nullifiers.md). */
  unique_per_account: boolean;
  /** Extension: the JSON path of the provider's account id in a schema unique per account, else null (never an account's value). */
  account_id_field: string | null;
}

export interface AttestationView {
  attestation_id: Hex;
  schema_id: Hex;
  owner: Address;
  encrypted_data: Hex;
  bucket_values: Record<string, string>;
  timestamp: number;
  /**
   * Extension: the index of the input that created it, so a client can find its notice (and the notice's
   * proof) in the node's reader without trusting anyone.
   */
  input_index: number;
  /** Extension: its position inside a `batch` input, or null when its input was not a batch. */
  item_index: number | null;
  /** Extension: the (first) TLS attestor whose signed claim the dapp checked, or null when the bucket was not proven. */
  attestor: Address | null;
  /** Extension: every attestor whose signed claim the dapp checked, in the order sent ([] when not proven). */
  attestors: Address[];
  /** Extension: the account that sent it (null for attestations recorded before attesters were kept). */
  attester: Address | null;
  /** Extension: when it stops being valid, or null: never. */
  expires_at: number | null;
  /** Extension: its revocation, or null while it stands. */
  revocation: RevocationView | null;
  /** Extension: its state at `at` (the query's, else the rollup's latest input time). */
  status: AttestationStatus;
  /** Extension: 2^(-(at - timestamp) / freshness_half_life), 1 for a time at or before its own. */
  freshness: number;
  /** Extension: the time status and freshness are computed at (unix seconds). */
  at: number;
}

export type AttestationStatus = "valid" | "revoked" | "expired";

export interface RevocationView {
  revoked_at: number;
  revoker: Address;
  reason: string;
  superseded_by: Hex | null;
  input_index: number;
}

export interface AttestationListItem extends AttestationView {
  block_number: number;
}

export interface GrantView {
  grant_id: Hex;
  requester: Address;
  schema_id: Hex;
  created_at: number;
  expires_at: number;
  /** Extension: whose word made it. */
  consent: ConsentKind;
}

export interface AccessCheck {
  has_access: boolean;
  grants: { grant_id: Hex; schema_id: Hex; expires_at: number; consent: ConsentKind }[];
}

export type HealthStatus = "ok" | "degraded" | "down";

export interface RollupHealth {
  status: HealthStatus;
  database: "ok" | "error";
  processed_inputs: number;
}

/** A TLS attestor the rollup trusts (query `tls_attestors`, an extension). */
export interface TlsAttestorView {
  address: Address;
  name: string;
  added_at: number;
}

export interface QueryResults {
  all_provider_schemas: SchemaSummary[];
  provider_schema: SchemaDetail;
  attestations_by_owner: AttestationListItem[];
  attestation: AttestationView;
  check_access: AccessCheck;
  grants_by_owner: GrantView[];
  health: RollupHealth;
  tls_attestors: TlsAttestorView[];
  encryption_key: EncryptionKeyView;
  verify: VerifyResult;
  owner_key: OwnerKeyView;
  content_key: ContentKeyView;
  nullifier_keys: NullifierKeysWire;
}

/** An owner's newest own key (query `owner_key`, an extension). */
export interface OwnerKeyView {
  owner: Address;
  key_id: Hex;
  /** Base64 of the 32-byte NaCl public key. */
  public_key: string;
  algorithm: "nacl-box";
  created_at: number;
}

/**
 * The content key of an owner-sealed attestation that its owner shared with `requester` (query
 * `content_key`): only while a grant of the attestation's schema from its owner stands at `at`.
 */
export interface ContentKeyView {
  attestation_id: Hex;
  requester: Address;
  grant_id: Hex;
  /** The requester's key it is sealed to. */
  key_id: Hex;
  sealed_key: Hex;
}

/** Why `verify` found no attestation that qualifies (about the owner's newest one of the schema). */
export const VERIFY_REASONS = ["NO_ATTESTATION", "REVOKED", "EXPIRED", "BUCKET_BELOW_MINIMUM", "NOT_FRESH", "ATTESTOR_MISSING"] as const;
export type VerifyReasonCode = (typeof VERIFY_REASONS)[number];

/**
 * Query `verify` (an extension, DECISIONS.md section 17): whether the owner holds an attestation of the
 * schema that is valid at `at` and meets the minimum bucket, freshness and attestors asked for.
 */
export interface VerifyResult {
  valid: boolean;
  /** Empty when valid; else why the owner's newest attestation of the schema does not qualify. */
  reasons: { code: VerifyReasonCode; message: string }[];
  /** The attestation relied on (the newest that qualifies), or when none does the newest there is. */
  attestation: AttestationView | null;
  freshness: number | null;
  at: number;
  /** How many of the owner's attestations of the schema were looked at. */
  checked: number;
}

/**
 * The most recently registered encryption key (query `encryption_key`, an extension): what `encrypted_data`
 * is sealed to, so a user who seals on its own machine needs nothing but the rollup to learn it.
 */
export interface EncryptionKeyView {
  key_id: Hex;
  /** Base64 of the 32-byte NaCl public key, as registered. */
  public_key: string;
  algorithm: "nacl-box";
  created_at: number;
}

/** An input's completion status as the Cartesi Rollups Node v1 names it (GraphQL `CompletionStatus`). */
export const COMPLETION_STATUSES = [
  "UNPROCESSED",
  "ACCEPTED",
  "REJECTED",
  "EXCEPTION",
  "MACHINE_HALTED",
  "CYCLE_LIMIT_EXCEEDED",
  "TIME_LIMIT_EXCEEDED",
  "PAYLOAD_LENGTH_LIMIT_EXCEEDED",
] as const;
export type CompletionStatus = (typeof COMPLETION_STATUSES)[number];

/** The rollup query interface's answer (specification part B). */
export interface InspectEnvelope {
  status: "Accepted" | "Rejected" | "Exception";
  exception_payload: Hex | null;
  reports: { payload: Hex }[];
  processed_input_count: number;
}

/**
 * v1 `OutputValidityProof` (rollups-contracts 1.4 `LibOutputValidation`), with the field names of the
 * contracts and of the v1 GraphQL reader; a `Proof` is it plus `context` (abi.encode(uint256 claim index)).
 */
export interface OutputValidityProof {
  inputIndexWithinEpoch: number;
  outputIndexWithinInput: number;
  outputHashesRootHash: Hex;
  vouchersEpochRootHash: Hex;
  noticesEpochRootHash: Hex;
  machineStateHash: Hex;
  outputHashInOutputHashesSiblings: Hex[];
  outputHashesInEpochSiblings: Hex[];
}
