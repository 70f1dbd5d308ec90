/**
 * The index's tables (DECISIONS.md section 22, docs/index.md): what the rollup's notices say, in EAS's
 * indexer's shape (its `Attestation` and `Schema` models) plus where each row came from (input and notice)
 * and whether its epoch is proven. The one source of the index's SQL: drizzle-kit writes `migrations/index/`
 * from it (`npm run db:generate:index`), for PGlite and PostgreSQL alike. Nothing sealed is ever stored.
 */
import { bigint, boolean, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";

/** One row per attestation the rollup made, with its revocation once one is noticed. */
export const attestations = pgTable(
  "attestation",
  {
    /** The rollup's attestation id (EAS's uid), lower-case 0x hex. */
    id: text("id").primaryKey(),
    schemaId: text("schema_id").notNull(),
    /** Checksummed, as EAS's indexer stores addresses. */
    attester: text("attester").notNull(),
    recipient: text("recipient").notNull(),
    refUID: text("ref_uid").notNull(),
    revocable: boolean("revocable").notNull(),
    revoked: boolean("revoked").notNull(),
    revocationTime: integer("revocation_time").notNull(),
    expirationTime: integer("expiration_time").notNull(),
    time: integer("time").notNull(),
    timeCreated: integer("time_created").notNull(),
    txid: text("txid").notNull(),
    /** AttestationStore's DATA_SCHEMA encoding (the bucket, never the value), "0x" when it has none. */
    data: text("data").notNull(),
    decodedDataJson: text("decoded_data_json").notNull(),
    ipfsHash: text("ipfs_hash").notNull(),
    isOffchain: boolean("is_offchain").notNull(),
    provider: text("provider").notNull(),
    bucketValues: jsonb("bucket_values").$type<Record<string, string>>().notNull(),
    attestors: jsonb("attestors").$type<string[]>().notNull(),
    freshnessHalfLife: integer("freshness_half_life").notNull(),
    revoker: text("revoker"),
    revocationReason: text("revocation_reason"),
    supersededBy: text("superseded_by"),
    revocationInput: integer("revocation_input"),
    inputIndex: integer("input_index").notNull(),
    /** The node's index of its notice (v1: within its input; v2: among all the application's outputs). */
    noticeIndex: integer("notice_index").notNull(),
    /** Creation order: input index * 2^20 + the notice's place in its input; the last key of every ordering. */
    position: bigint("position", { mode: "number" }).notNull().unique(),
    /** Whether the epoch of its input is claimed (its notice provable on the base layer). */
    proven: boolean("proven").notNull(),
  },
  (t) => [
    index("attestation_time").on(t.time, t.position),
    index("attestation_recipient_time").on(t.recipient, t.time, t.position),
    index("attestation_attester_time").on(t.attester, t.time, t.position),
    index("attestation_schema_time").on(t.schemaId, t.time, t.position),
    index("attestation_input").on(t.inputIndex),
  ],
);

/** One row per schema the rollup registered, with its attestations counted as they are indexed. */
export const schemata = pgTable(
  "schema",
  {
    id: text("id").primaryKey(),
    /** EAS's schema string of its attestations' data (AttestationStore's DATA_SCHEMA). */
    schema: text("schema").notNull(),
    /** The account that sent its registration. */
    creator: text("creator").notNull(),
    resolver: text("resolver").notNull(),
    revocable: boolean("revocable").notNull(),
    /** The rollup's short index of the schema (its registration order, from 1), as EAS's `index` string. */
    index: text("index").notNull(),
    txid: text("txid").notNull(),
    time: integer("time").notNull(),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    description: text("description").notNull(),
    attestationCount: integer("attestation_count").notNull(),
    inputIndex: integer("input_index").notNull(),
    proven: boolean("proven").notNull(),
  },
  (t) => [index("schema_time").on(t.time), index("schema_input").on(t.inputIndex)],
);

/** One row per input whose notices are indexed: where its rows came from, and the node's record of it. */
export const inputs = pgTable("input", {
  index: integer("index").primaryKey(),
  sender: text("sender").notNull(),
  blockNumber: bigint("block_number", { mode: "number" }).notNull(),
  time: integer("time").notNull(),
  txid: text("txid").notNull(),
  notices: integer("notices").notNull(),
  /** keccak256 of its notices' payloads in order: how a replayed or replaced node is told apart. */
  noticesHash: text("notices_hash").notNull(),
  proven: boolean("proven").notNull(),
});

/** The one row of the index's progress: where it reads next, and what it counts. */
export const indexState = pgTable("index_state", {
  id: integer("id").primaryKey(),
  /** The application (DAPP_ADDRESS) and chain the rows are of: another one empties the index first. */
  application: text("application").notNull(),
  /** The node's cursor after the last notice applied, null before any. */
  cursor: text("cursor"),
  /** The last input whose notices are applied, -1 before any. */
  lastInput: integer("last_input").notNull(),
  attestationCount: bigint("attestation_count", { mode: "number" }).notNull(),
  /** Highest input index known to be in a claimed epoch, -1 before any. */
  provenThrough: integer("proven_through").notNull(),
});

export const indexTables = { attestations, schemata, inputs, indexState };
