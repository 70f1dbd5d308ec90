/**
 * Every read and write the dapp makes, as statements prepared once per database: better-sqlite3 is
 * synchronous, so the advance path is parse → a few prepared calls → commit, with no per-input SQL
 * compilation.
 */
import { and, asc, desc, eq, gt, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Hex } from "viem";
import type { Role } from "../../common/wire.ts";
import type { DappDatabase } from "./open.ts";
import { createNullifierStore } from "./nullifier-store.ts";
import { attestations, consentNonces, encryptionKeys, grantKeys, grants, meta, ownerKeys, revocations, roles, schemas, tlsAttestors, usedClaims } from "./schema.ts";

export type SchemaRow = typeof schemas.$inferSelect;
export type AttestationRow = typeof attestations.$inferSelect;
/** An attestation as the queries read it: the byte columns already as 0x-hex (see `attestationRead`). */
export type AttestationRead = Omit<AttestationRow, "attestationId" | "schemaId" | "owner" | "encryptedData" | "attestor" | "attester"> & {
  attestationId: Hex;
  schemaId: Hex;
  owner: Hex;
  encryptedData: Hex;
  attestor: Hex | null;
  attester: Hex | null;
  /** Its revocation (left-joined), all null while it stands. */
  revokedAt: number | null;
  revoker: Hex | null;
  revocationReason: string | null;
  supersededBy: Hex | null;
  revocationInput: number | null;
};
export type RevocationRow = typeof revocations.$inferSelect;
export type OwnerKeyRow = typeof ownerKeys.$inferSelect;
export type GrantKeyRow = typeof grantKeys.$inferSelect;
export type TlsAttestorRow = typeof tlsAttestors.$inferSelect;
export type GrantRow = typeof grants.$inferSelect;
export type KeyRow = typeof encryptionKeys.$inferSelect;
export type MetaRow = typeof meta.$inferSelect;

const META_ID = 1;

/** A row as an input writes it: SQLite assigns `id` (the next in creation order). */
export type NewRow<Row extends { id: number }> = Omit<Row, "id">;

function hexOf(column: AnySQLiteColumn): SQL<Hex> {
  return sql<Hex>`'0x' || lower(hex(${column}))`;
}

function hexOrNull(column: AnySQLiteColumn): SQL<Hex | null> {
  return sql<Hex | null>`case when ${column} is null then null else '0x' || lower(hex(${column})) end`;
}

/**
 * The attestation columns the queries answer with, the byte ones hex-encoded by SQLite: the queries send
 * them as hex anyway, and SQLite's hex() of a blob is cheaper than a Buffer per column and a JS encoding
 * of each (an owner's page of 10 costs 40 Buffers otherwise: half the dapp's time for the query).
 */
const attestationRead = {
  id: attestations.id,
  inputIndex: attestations.inputIndex,
  itemIndex: attestations.itemIndex,
  attestationId: hexOf(attestations.attestationId),
  schemaId: hexOf(attestations.schemaId),
  owner: hexOf(attestations.owner),
  encryptedData: hexOf(attestations.encryptedData),
  bucketValues: attestations.bucketValues,
  timestamp: attestations.timestamp,
  blockNumber: attestations.blockNumber,
  attestor: hexOrNull(attestations.attestor),
  attestors: attestations.attestors,
  attester: hexOrNull(attestations.attester),
  expiresAt: attestations.expiresAt,
  revokedAt: revocations.revokedAt,
  revoker: hexOrNull(revocations.revoker),
  revocationReason: revocations.reason,
  supersededBy: hexOrNull(revocations.supersededBy),
  revocationInput: revocations.inputIndex,
};
const revocationOf = eq(revocations.attestationId, attestations.attestationId);
const SCHEMA_CACHE_MAX = 1024;

/** Rows found by `load`, kept by key (at most SCHEMA_CACHE_MAX); what is not found is asked again. */
class FoundRows<K, V> {
  private readonly rows = new Map<K, V>();

  constructor(private readonly load: (key: K) => V | undefined) {}

  get(key: K): V | undefined {
    const cached = this.rows.get(key);
    if (cached !== undefined) return cached;
    const row = this.load(key);
    if (row !== undefined) {
      if (this.rows.size >= SCHEMA_CACHE_MAX) this.rows.clear();
      this.rows.set(key, row);
    }
    return row;
  }

  clear(): void {
    this.rows.clear();
  }
}

export function createStore(db: DappDatabase) {
  const ph = sql.placeholder;
  const sqlite = db.$client;

  const q = {
    meta: db.select().from(meta).where(eq(meta.id, META_ID)).prepare(),
    recordInput: db
      .insert(meta)
      .values({
        id: META_ID,
        lastInputIndex: ph("index"),
        lastStatus: ph("status"),
        processedInputs: 1,
        latestTimestamp: ph("timestamp"),
        lastOutputs: ph("outputs"),
      })
      .onConflictDoUpdate({
        target: meta.id,
        set: {
          lastInputIndex: sql`excluded.last_input_index`,
          lastStatus: sql`excluded.last_status`,
          processedInputs: sql`${meta.processedInputs} + 1`,
          latestTimestamp: sql`excluded.latest_timestamp`,
          lastOutputs: sql`excluded.last_outputs`,
        },
      })
      .prepare(),

    schemaById: db.select().from(schemas).where(eq(schemas.schemaId, ph("id"))).prepare(),
    schemaByIndex: db.select().from(schemas).where(eq(schemas.id, ph("index"))).prepare(),
    schemaPage: db
      .select()
      .from(schemas)
      .orderBy(asc(schemas.id))
      .limit(ph("limit"))
      .offset(ph("offset"))
      .prepare(),
    insertSchema: db.insert(schemas).values({
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      schemaId: ph("schemaId"),
      name: ph("name"),
      description: ph("description"),
      providerType: ph("providerType"),
      flowType: ph("flowType"),
      domain: ph("domain"),
      bucketDefinitions: ph("bucketDefinitions"),
      dataKeys: ph("dataKeys"),
      freshnessHalfLife: ph("freshnessHalfLife"),
      createdAt: ph("createdAt"),
      proof: ph("proof"),
      attestorQuorum: ph("attestorQuorum"),
      validityPeriod: ph("validityPeriod"),
      requireSignedConsent: ph("requireSignedConsent"),
      sealing: ph("sealing"),
      accountIdField: ph("accountIdField"),
    }).prepare(),
    ownerKey: db.select().from(ownerKeys).where(eq(ownerKeys.owner, ph("owner"))).orderBy(desc(ownerKeys.id)).limit(1).prepare(),
    insertOwnerKey: db.insert(ownerKeys).values({
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      owner: ph("owner"),
      keyId: ph("keyId"),
      publicKey: ph("publicKey"),
      createdAt: ph("createdAt"),
    }).prepare(),
    grantKey: db.select().from(grantKeys).where(and(eq(grantKeys.grantId, ph("grantId")), eq(grantKeys.attestationId, ph("attestationId")))).prepare(),
    insertGrantKey: db.insert(grantKeys).values({
      grantId: ph("grantId"),
      attestationId: ph("attestationId"),
      keyId: ph("keyId"),
      sealedKey: ph("sealedKey"),
      inputIndex: ph("inputIndex"),
    }).onConflictDoUpdate({ target: [grantKeys.grantId, grantKeys.attestationId], set: { keyId: sql`excluded.key_id`, sealedKey: sql`excluded.sealed_key`, inputIndex: sql`excluded.input_index` } }).prepare(),

    keyById: db.select({ id: encryptionKeys.id }).from(encryptionKeys).where(eq(encryptionKeys.keyId, ph("id"))).prepare(),
    latestKey: db.select().from(encryptionKeys).orderBy(desc(encryptionKeys.id)).limit(1).prepare(),
    insertKey: db.insert(encryptionKeys).values({
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      keyId: ph("keyId"),
      publicKey: ph("publicKey"),
      algorithm: ph("algorithm"),
      createdAt: ph("createdAt"),
    }).prepare(),

    attestationById: db.select(attestationRead).from(attestations).leftJoin(revocations, revocationOf).where(eq(attestations.attestationId, ph("id"))).prepare(),
    attestationsByOwner: db
      .select(attestationRead)
      .from(attestations)
      .leftJoin(revocations, revocationOf)
      .where(eq(attestations.owner, ph("owner")))
      .orderBy(asc(attestations.id))
      .limit(ph("limit"))
      .offset(ph("offset"))
      .prepare(),
    insertAttestation: db.insert(attestations).values({
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      attestationId: ph("attestationId"),
      schemaId: ph("schemaId"),
      owner: ph("owner"),
      encryptedData: ph("encryptedData"),
      bucketValues: ph("bucketValues"),
      timestamp: ph("timestamp"),
      blockNumber: ph("blockNumber"),
      attestor: ph("attestor"),
      attestors: ph("attestors"),
      attester: ph("attester"),
      expiresAt: ph("expiresAt"),
    }).prepare(),
    /** An owner's attestations of a schema made at or before `at`, newest first (query `verify`). */
    attestationsOfSchema: db
      .select(attestationRead)
      .from(attestations)
      .leftJoin(revocations, revocationOf)
      .where(and(eq(attestations.owner, ph("owner")), eq(attestations.schemaId, ph("schemaId")), lte(attestations.timestamp, ph("at"))))
      .orderBy(desc(attestations.id))
      .limit(ph("limit"))
      .prepare(),
    insertRevocation: db.insert(revocations).values({
      attestationId: ph("attestationId"),
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      revokedAt: ph("revokedAt"),
      revoker: ph("revoker"),
      reason: ph("reason"),
      supersededBy: ph("supersededBy"),
    }).prepare(),
    claimUse: db.select({ attestationId: usedClaims.attestationId }).from(usedClaims).where(eq(usedClaims.digest, ph("digest"))).prepare(),
    useClaim: db.insert(usedClaims).values({ digest: ph("digest"), attestationId: ph("attestationId") }).prepare(),

    grantById: db.select().from(grants).where(eq(grants.grantId, ph("id"))).prepare(),
    grantsByOwner: db
      .select()
      .from(grants)
      .where(and(eq(grants.owner, ph("owner")), isNull(grants.revokedAt)))
      .orderBy(asc(grants.id))
      .limit(ph("limit"))
      .offset(ph("offset"))
      .prepare(),
    activeGrants: db
      .select()
      .from(grants)
      .where(
        and(
          eq(grants.owner, ph("owner")),
          eq(grants.requester, ph("requester")),
          isNull(grants.revokedAt),
          gt(grants.expiresAt, ph("now")),
        ),
      )
      .orderBy(asc(grants.id))
      .prepare(),
    insertGrant: db.insert(grants).values({
      inputIndex: ph("inputIndex"),
      itemIndex: ph("itemIndex"),
      grantId: ph("grantId"),
      owner: ph("owner"),
      requester: ph("requester"),
      schemaId: ph("schemaId"),
      createdAt: ph("createdAt"),
      expiresAt: ph("expiresAt"),
      consent: ph("consent"),
    }).prepare(),
    nonceUse: db.select({ inputIndex: consentNonces.inputIndex }).from(consentNonces).where(and(eq(consentNonces.owner, ph("owner")), eq(consentNonces.nonce, ph("nonce")))).prepare(),
    useNonce: db.insert(consentNonces).values({ owner: ph("owner"), nonce: ph("nonce"), inputIndex: ph("inputIndex") }).prepare(),
    revokeGrant: db.update(grants).set({ revokedAt: sql`${ph("revokedAt")}` }).where(eq(grants.id, ph("id"))).prepare(),

    hasRole: db
      .select({ role: roles.role })
      .from(roles)
      .where(and(eq(roles.address, ph("address")), sql`${roles.role} in ('admin', ${ph("role")})`))
      .limit(1)
      .prepare(),
    addRole: db.insert(roles).values({ address: ph("address"), role: ph("role") }).onConflictDoNothing().prepare(),
    removeRole: db.delete(roles).where(and(eq(roles.address, ph("address")), eq(roles.role, ph("role")))).prepare(),
    admins: db.select({ address: roles.address }).from(roles).where(eq(roles.role, "admin")).prepare(),

    tlsAttestor: db.select({ id: tlsAttestors.id }).from(tlsAttestors).where(eq(tlsAttestors.address, ph("address"))).prepare(),
    tlsAttestors: db.select().from(tlsAttestors).orderBy(asc(tlsAttestors.id)).prepare(),
    addTlsAttestor: db
      .insert(tlsAttestors)
      .values({ address: ph("address"), name: ph("name"), addedAt: ph("addedAt") })
      .onConflictDoUpdate({ target: tlsAttestors.address, set: { name: sql`excluded.name` } })
      .prepare(),
    removeTlsAttestor: db.delete(tlsAttestors).where(eq(tlsAttestors.address, ph("address"))).prepare(),
  };

  const schemasById = new FoundRows<string, SchemaRow>((key) => q.schemaById.get({ id: Buffer.from(key, "hex") }));
  const schemasByIndex = new FoundRows<number, SchemaRow>((index) => q.schemaByIndex.get({ index }));
  const inTransaction = sqlite.transaction((run: () => void) => run());

  return {
    /**
     * Runs `work` in one transaction: all of it commits, or a throw rolls all of it back. Inside another
     * transaction it is a savepoint (better-sqlite3 nests them): a batch item that throws is undone alone.
     */
    transaction<T>(work: () => T): T {
      let result: { value: T } | undefined;
      try {
        inTransaction(() => {
          result = { value: work() };
        });
      } catch (error) {
        // A schema read inside the undone work may be one the work itself inserted (a batch registers a
        // schema, then attests under it): forget what was cached rather than keep a row that is gone.
        schemasById.clear();
        schemasByIndex.clear();
        throw error;
      }
      if (!result) throw new Error("transaction finished without a result");
      return result.value;
    },

    meta(): MetaRow | undefined {
      return q.meta.get();
    },
    /** Counts the input and keeps its status and output payloads (JSON array) for a re-delivery. */
    recordInput(index: number, timestamp: number, status: "accept" | "reject", outputs: readonly (string | { report: string })[]): void {
      q.recordInput.run({ index, timestamp, status, outputs: JSON.stringify(outputs) });
    },

    /**
     * Schemas never change once committed, and every attestation reads its schema: keep the few
     * there are in memory. Only found rows are cached, and register_schema reads before it inserts,
     * so an uncommitted row never enters the cache.
     */
    schemaById: (id: Buffer): SchemaRow | undefined => schemasById.get(id.toString("hex")),
    /**
     * The schema whose short index (its row id: assigned at registration in creation order, never reused,
     * since schemas are never deleted) is `index`: how a compact batch names a schema. Cached as above.
     */
    schemaByIndex: (index: number): SchemaRow | undefined => schemasByIndex.get(index),
    schemaPage: (limit: number, offset: number): SchemaRow[] => q.schemaPage.all({ limit, offset }),
    insertSchema: (row: NewRow<SchemaRow>): void => void q.insertSchema.run(row),

    keyExists: (id: Buffer): boolean => q.keyById.get({ id }) !== undefined,
    /** The key registered last: the one claims are sealed to (DECISIONS.md section 5). */
    latestKey: (): KeyRow | undefined => q.latestKey.get(),
    insertKey: (row: NewRow<KeyRow>): void => void q.insertKey.run(row),

    attestationById: (id: Buffer): AttestationRead | undefined => q.attestationById.get({ id }),
    attestationsByOwner: (owner: Buffer, limit: number, offset: number): AttestationRead[] =>
      q.attestationsByOwner.all({ owner, limit, offset }),
    insertAttestation: (row: NewRow<AttestationRow>): void => void q.insertAttestation.run(row),
    attestationsOfSchema: (owner: Buffer, schemaId: Buffer, at: number, limit: number): AttestationRead[] =>
      q.attestationsOfSchema.all({ owner, schemaId, at, limit }),
    insertRevocation: (row: RevocationRow): void => void q.insertRevocation.run(row),
    /** The attestation that already used the attestor claim with this signed digest, if any. */
    claimUsedBy: (digest: Buffer): Buffer | undefined => q.claimUse.get({ digest })?.attestationId,
    useClaim: (digest: Buffer, attestationId: Buffer): void => void q.useClaim.run({ digest, attestationId }),

    grantById: (id: Buffer): GrantRow | undefined => q.grantById.get({ id }),
    grantsByOwner: (owner: Buffer, limit: number, offset: number): GrantRow[] => q.grantsByOwner.all({ owner, limit, offset }),
    /** Grants neither revoked nor expired at `now` (a grant expires at its expires_at second). */
    activeGrants: (owner: Buffer, requester: Buffer, now: number): GrantRow[] => q.activeGrants.all({ owner, requester, now }),
    insertGrant: (row: NewRow<Omit<GrantRow, "revokedAt">>): void => void q.insertGrant.run(row),
    /** The owner's newest key (register_owner_key), or undefined when it registered none. */
    ownerKey: (owner: Buffer): OwnerKeyRow | undefined => q.ownerKey.get({ owner }),
    insertOwnerKey: (row: NewRow<OwnerKeyRow>): void => void q.insertOwnerKey.run(row),
    grantKey: (grantId: Buffer, attestationId: Buffer): GrantKeyRow | undefined => q.grantKey.get({ grantId, attestationId }),
    /** Shares (or shares again, for the requester's newer key) one content key with a grant's requester. */
    putGrantKey: (row: GrantKeyRow): void => void q.insertGrantKey.run(row),
    /** The input that used this nonce of `owner`'s signed consent, if one did. */
    nonceUsedBy: (owner: Buffer, nonce: Buffer): number | undefined => q.nonceUse.get({ owner, nonce })?.inputIndex,
    useNonce: (owner: Buffer, nonce: Buffer, inputIndex: number): void => void q.useNonce.run({ owner, nonce, inputIndex }),
    revokeGrant: (id: number, revokedAt: number): void => void q.revokeGrant.run({ id, revokedAt }),

    /** Whether `address` holds `role` through a row (an admin row holds every role). */
    hasRoleRow: (address: Buffer, role: Role): boolean => q.hasRole.get({ address, role }) !== undefined,
    addRole: (address: Buffer, role: Role): void => void q.addRole.run({ address, role }),
    removeRole: (address: Buffer, role: Role): void => void q.removeRole.run({ address, role }),
    adminRows: (): Buffer[] => q.admins.all().map((r) => r.address),

    isTlsAttestor: (address: Buffer): boolean => q.tlsAttestor.get({ address }) !== undefined,
    tlsAttestors: (): TlsAttestorRow[] => q.tlsAttestors.all(),
    /** Registers an attestor, or renames one already registered (its place in the order stays). */
    addTlsAttestor: (address: Buffer, name: string, addedAt: number): void => void q.addTlsAttestor.run({ address, name, addedAt }),
    /** True when there was one to remove. */
    removeTlsAttestor: (address: Buffer): boolean => q.removeTlsAttestor.run({ address }).changes > 0,

    ...createNullifierStore(db),

    /** A trivial read that fails when the database is unusable (health). */
    ping(): boolean {
      return sqlite.prepare("select 1 as ok").get() !== undefined;
    },
  };
}

export type Store = ReturnType<typeof createStore>;
