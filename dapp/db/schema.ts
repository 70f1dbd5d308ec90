/**
 * The dapp's tables: the one source of the database schema (migrations/ is generated from it with
 * `npx drizzle-kit generate`). Every object table is keyed by `id`, the rowid in creation order (SQLite
 * gives a new row the largest id + 1, the same on every replay), so lists need no extra sort. Each row
 * names the input that created it and, inside a `batch` input, the item (`item_index`, null for a lone
 * input). Hashes, addresses, keys and ciphertexts are BLOBs and times are integer seconds: the benchmark
 * keeps a million attestations.
 */
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const schemas = sqliteTable(
  "schemas",
  {
    id: integer("id").primaryKey(),
    inputIndex: integer("input_index").notNull(),
    itemIndex: integer("item_index"),
    schemaId: blob("schema_id", { mode: "buffer" }).notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    providerType: text("provider_type").notNull(),
    flowType: text("flow_type").notNull(),
    domain: text("domain").notNull(),
    /** Canonical JSON of the map field → {boundaries, labels}. */
    bucketDefinitions: text("bucket_definitions").notNull(),
    /** JSON array of strings. */
    dataKeys: text("data_keys").notNull(),
    freshnessHalfLife: real("freshness_half_life").notNull(),
    createdAt: integer("created_at").notNull(),
    /** "attestor": every attestation must carry a TLS attestor's signed claim (dapp/proof.ts). */
    proof: text("proof", { enum: ["none", "attestor"] }).notNull().default("none"),
    /** How many distinct registered attestors must sign each attestation's claim (proven schemas). */
    attestorQuorum: integer("attestor_quorum").notNull().default(1),
    /** Seconds an attestation stays valid after its time; null: it never expires. */
    validityPeriod: integer("validity_period"),
    /** Grants and revokes of its data need the owner's own consent (signed, or sent from its wallet). */
    requireSignedConsent: integer("require_signed_consent", { mode: "boolean" }).notNull().default(false),
    /**
     * Whose keys open its attestations' data: "admin" (the registered encryption key, the specification's
     * way), "owner" (the owner's own key, common/owner-sealed.ts) or "owner+admin" (both).
     */
    sealing: text("sealing", { enum: ["admin", "owner", "owner+admin"] }).notNull().default("admin"),
    /**
     * The JSON path of the provider's account id, for a schema unique per account (its claims carry
     * nullifiers, docs/nullifiers.md); null for every other. A path, never an account's value.
     */
    accountIdField: text("account_id_field"),
  },
  (t) => [uniqueIndex("schemas_schema_id_uq").on(t.schemaId)],
);

export const encryptionKeys = sqliteTable(
  "encryption_keys",
  {
    id: integer("id").primaryKey(),
    inputIndex: integer("input_index").notNull(),
    itemIndex: integer("item_index"),
    keyId: blob("key_id", { mode: "buffer" }).notNull(),
    publicKey: blob("public_key", { mode: "buffer" }).notNull(),
    algorithm: text("algorithm").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("encryption_keys_key_id_uq").on(t.keyId)],
);

export const attestations = sqliteTable(
  "attestations",
  {
    id: integer("id").primaryKey(),
    inputIndex: integer("input_index").notNull(),
    itemIndex: integer("item_index"),
    attestationId: blob("attestation_id", { mode: "buffer" }).notNull(),
    schemaId: blob("schema_id", { mode: "buffer" }).notNull(),
    owner: blob("owner", { mode: "buffer" }).notNull(),
    encryptedData: blob("encrypted_data", { mode: "buffer" }).notNull(),
    /** JSON object field → label. */
    bucketValues: text("bucket_values").notNull(),
    timestamp: integer("timestamp").notNull(),
    blockNumber: integer("block_number").notNull(),
    /** The (first) TLS attestor whose claim proved the bucket; null when unproven (no index: a million rows stay lean). */
    attestor: blob("attestor", { mode: "buffer" }),
    /** JSON array of every attestor whose claim proved the bucket, when a quorum of more than one signed; else null. */
    attestors: text("attestors"),
    /** The account that sent it (EAS's attester; may revoke it); null for rows made before it was kept. */
    attester: blob("attester", { mode: "buffer" }),
    /** Its time plus the schema's validity period; null: it never expires. */
    expiresAt: integer("expires_at"),
  },
  (t) => [
    uniqueIndex("attestations_attestation_id_uq").on(t.attestationId),
    index("attestations_owner_idx").on(t.owner, t.id),
  ],
);

export const grants = sqliteTable(
  "grants",
  {
    id: integer("id").primaryKey(),
    inputIndex: integer("input_index").notNull(),
    itemIndex: integer("item_index"),
    grantId: blob("grant_id", { mode: "buffer" }).notNull(),
    owner: blob("owner", { mode: "buffer" }).notNull(),
    requester: blob("requester", { mode: "buffer" }).notNull(),
    schemaId: blob("schema_id", { mode: "buffer" }).notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** Timestamp of the revoking input; null while the grant stands. */
    revokedAt: integer("revoked_at"),
    /**
     * Whose word made it: "signed" (the owner's EIP-712 signature), "owner" (sent from the owner's own
     * wallet) or "relayed" (an operator naming the owner). Grants made before this was kept are "relayed".
     */
    consent: text("consent", { enum: ["signed", "owner", "relayed"] }).notNull().default("relayed"),
  },
  (t) => [
    uniqueIndex("grants_grant_id_uq").on(t.grantId),
    index("grants_owner_idx").on(t.owner, t.id),
    index("grants_owner_requester_idx").on(t.owner, t.requester, t.id),
  ],
);

/**
 * Revoked attestations, one row each (revoke_attestation). A table of its own: the attestations that
 * stand, nearly all of them, pay nothing for the columns a revocation needs.
 */
export const revocations = sqliteTable("revocations", {
  attestationId: blob("attestation_id", { mode: "buffer" }).primaryKey(),
  inputIndex: integer("input_index").notNull(),
  itemIndex: integer("item_index"),
  revokedAt: integer("revoked_at").notNull(),
  revoker: blob("revoker", { mode: "buffer" }).notNull(),
  /** "" when none was given. */
  reason: text("reason").notNull(),
  supersededBy: blob("superseded_by", { mode: "buffer" }),
});

/** Owners' own NaCl keys (register_owner_key), newest last: data of an owner-sealing schema is sealed to the newest. */
export const ownerKeys = sqliteTable(
  "owner_keys",
  {
    id: integer("id").primaryKey(),
    inputIndex: integer("input_index").notNull(),
    itemIndex: integer("item_index"),
    owner: blob("owner", { mode: "buffer" }).notNull(),
    keyId: blob("key_id", { mode: "buffer" }).notNull(),
    publicKey: blob("public_key", { mode: "buffer" }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("owner_keys_owner_idx").on(t.owner, t.id)],
);

/** Content keys an owner shared with a grant's requester, each sealed to the requester's key. */
export const grantKeys = sqliteTable(
  "grant_keys",
  {
    grantId: blob("grant_id", { mode: "buffer" }).notNull(),
    attestationId: blob("attestation_id", { mode: "buffer" }).notNull(),
    /** The requester's key it is sealed to (its newest when shared). */
    keyId: blob("key_id", { mode: "buffer" }).notNull(),
    sealedKey: blob("sealed_key", { mode: "buffer" }).notNull(),
    inputIndex: integer("input_index").notNull(),
  },
  (t) => [primaryKey({ columns: [t.grantId, t.attestationId] }), index("grant_keys_attestation_idx").on(t.attestationId)],
);

/** Nonces of the owners' signed consents, each used once: a signature is never applied twice. */
export const consentNonces = sqliteTable(
  "consent_nonces",
  {
    owner: blob("owner", { mode: "buffer" }).notNull(),
    nonce: blob("nonce", { mode: "buffer" }).notNull(),
    inputIndex: integer("input_index").notNull(),
  },
  (t) => [primaryKey({ columns: [t.owner, t.nonce] })],
);

/**
 * Every attestor claim an attestation has used, by the digest its signature covers: a claim proves one
 * attestation, never a second (a replay). A table of its own so unproven attestations pay nothing.
 */
export const usedClaims = sqliteTable("used_claims", {
  digest: blob("digest", { mode: "buffer" }).primaryKey(),
  attestationId: blob("attestation_id", { mode: "buffer" }).notNull(),
});

/** TLS attestors admins trust (set_tls_attestor), in registration order. */
export const tlsAttestors = sqliteTable(
  "tls_attestors",
  {
    id: integer("id").primaryKey(),
    address: blob("address", { mode: "buffer" }).notNull(),
    name: text("name").notNull(),
    addedAt: integer("added_at").notNull(),
  },
  (t) => [uniqueIndex("tls_attestors_address_uq").on(t.address)],
);

/**
 * The registered nullifier key set (set_nullifier_keys), one row (id 1): its threshold t and group key K.
 * A new key set replaces it only with the same K, so the nullifiers already bound keep matching.
 */
export const nullifierKeySet = sqliteTable("nullifier_key_set", {
  id: integer("id").primaryKey(),
  inputIndex: integer("input_index").notNull(),
  itemIndex: integer("item_index"),
  threshold: integer("threshold").notNull(),
  groupKey: blob("group_key", { mode: "buffer" }).notNull(),
  registeredAt: integer("registered_at").notNull(),
});

/** The key set's shares: each index's commitment K_i and the registered TLS attestor that holds it. */
export const nullifierKeyShares = sqliteTable(
  "nullifier_key_shares",
  {
    shareIndex: integer("share_index").primaryKey(),
    commitment: blob("commitment", { mode: "buffer" }).notNull(),
    attestor: blob("attestor", { mode: "buffer" }).notNull(),
  },
  // One share per attestor: an attestor holding two would count twice towards t.
  (t) => [uniqueIndex("nullifier_key_shares_attestor_uq").on(t.attestor)],
);

/**
 * Each nullifier of a schema unique per account and the owner it is bound to: one provider account backs
 * one owner. A row is never deleted: a revocation leaves its account bound (docs/nullifiers.md), else an
 * account could back owners in turn. `attestation_id` is the attestation that bound it first.
 */
export const nullifiers = sqliteTable(
  "nullifiers",
  {
    schemaId: blob("schema_id", { mode: "buffer" }).notNull(),
    nullifier: blob("nullifier", { mode: "buffer" }).notNull(),
    owner: blob("owner", { mode: "buffer" }).notNull(),
    attestationId: blob("attestation_id", { mode: "buffer" }).notNull(),
    inputIndex: integer("input_index").notNull(),
  },
  (t) => [primaryKey({ columns: [t.schemaId, t.nullifier] })],
);

/** Roles granted with set_role. DAPP_ADMINS admins are configuration, not rows: they cannot be removed. */
export const roles = sqliteTable(
  "roles",
  {
    address: blob("address", { mode: "buffer" }).notNull(),
    role: text("role", { enum: ["admin", "attestor", "operator"] }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.address, t.role] })],
);

/** Bookkeeping, one row (id 1): what the advance loop has applied, for restart safety and health. */
export const meta = sqliteTable("meta", {
  id: integer("id").primaryKey(),
  lastInputIndex: integer("last_input_index").notNull(),
  lastStatus: text("last_status", { enum: ["accept", "reject"] }).notNull(),
  processedInputs: integer("processed_inputs").notNull(),
  latestTimestamp: integer("latest_timestamp").notNull(),
  /**
   * JSON array of the last input's output payloads (its notices, or its report when rejected): a dapp
   * that dies after commit and before /finish gets the input again and must send the same outputs.
   */
  lastOutputs: text("last_outputs").notNull().default("[]"),
});

