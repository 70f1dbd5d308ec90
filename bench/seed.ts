/**
 * Builds the dapp's database for N attestations without N chain transactions: the dapp's own migrations
 * (openDatabase) and its own prepared inserts (createStore: insertSchema, insertAttestation), all rows in
 * one transaction. Rows are exactly what `create_attestation` would have written for the same input
 * (`checkSeedEquivalence` proves it on every run by applying one real input through the dispatcher).
 */
import { rmSync, statSync } from "node:fs";
import type { Address, Hex } from "viem";
import { canonicalJson } from "../common/canonical.ts";
import { inputIdOf } from "../common/ids.ts";
import { jsonToHex } from "../common/hex.ts";
import { hexToBuffer } from "../dapp/db/bytes.ts";
import { openDatabase } from "../dapp/db/open.ts";
import { startProgress } from "../toolkit/progress.ts";
import { createStore, type AttestationRow, type NewRow, type SchemaRow } from "../dapp/db/store.ts";
import { createDispatcher } from "../dapp/dispatch.ts";
import {
  ATTESTATIONS_PER_OWNER,
  attestationParams,
  BENCH_ADMIN,
  BENCH_SCHEMA,
  BENCH_SCHEMA_ID,
  bucketLabel,
  ownerAddress,
  ownerBytes,
  SEED_INDEX_BASE,
  sealedBytes,
  TARGET_OWNER,
  TARGET_OWNER_COUNT,
} from "./inputs.ts";
import { idsOf } from "./ids.ts";

const BENCH_ADMIN_BYTES = hexToBuffer(BENCH_ADMIN);

const T0 = 1_700_000_000;
/** A prime, coprime with every owner count used: walks owners evenly, so each gets ~10 spread rows. */
const OWNER_STRIDE = 7919;

export interface SeedResult {
  path: string;
  count: number;
  seconds: number;
  /** Size of the database file after a WAL checkpoint. */
  fileBytes: number;
  /** Bytes of one row's values as the dapp binds them (ids, owner, sealed data, JSON, integers). */
  rawRowBytes: number;
  targetOwner: Address;
  /** Owners with ~10 attestations each (the inspect figures rotate through them). */
  sampleOwners: Address[];
  /** Attestation ids spread through the store (the inspect figures rotate through them). */
  sampleAttestationIds: Hex[];
}

function regularOwnerCount(count: number): number {
  return Math.max(1, Math.floor(count / ATTESTATIONS_PER_OWNER));
}

function targetStep(count: number): number {
  return Math.max(1, Math.floor(count / TARGET_OWNER_COUNT));
}

/** The owner of seeded row `i`: the target owner on 100 evenly spaced rows, else a regular owner. */
function seededOwnerNumber(i: number, count: number): number | "target" {
  const step = targetStep(count);
  if (i % step === 0 && i / step < TARGET_OWNER_COUNT) return "target";
  return (i * OWNER_STRIDE) % regularOwnerCount(count);
}

/** Row `i` of a store of `count`; `ids` from idsOf (else the id is computed here, slowly). */
export function seededRow(i: number, count: number, ids?: Buffer): NewRow<AttestationRow> {
  const index = SEED_INDEX_BASE + i;
  const owner = seededOwnerNumber(i, count);
  return {
    inputIndex: index,
    itemIndex: null,
    attestationId: ids === undefined ? hexToBuffer(inputIdOf("create_attestation", index)) : ids.subarray(i * 32, i * 32 + 32),
    schemaId: hexToBuffer(BENCH_SCHEMA_ID),
    owner: owner === "target" ? hexToBuffer(TARGET_OWNER) : ownerBytes(owner),
    encryptedData: sealedBytes(i),
    bucketValues: JSON.stringify({ "data.balance": bucketLabel(i) }),
    timestamp: T0 + i,
    blockNumber: 1 + i,
    attestor: null,
    attestors: null,
    // What create_attestation writes: its sender (the bench's admin sends every seeded input).
    attester: BENCH_ADMIN_BYTES,
    expiresAt: null,
  };
}

/** The bench schema's row, as register_schema writes it. */
export function schemaRow(): NewRow<SchemaRow> {
  return {
    inputIndex: SEED_INDEX_BASE - 1,
    itemIndex: null,
    schemaId: hexToBuffer(BENCH_SCHEMA_ID),
    name: BENCH_SCHEMA.name,
    description: BENCH_SCHEMA.description,
    providerType: BENCH_SCHEMA.provider,
    flowType: BENCH_SCHEMA.flowType,
    domain: BENCH_SCHEMA.domain,
    bucketDefinitions: canonicalJson(BENCH_SCHEMA.bucketDefinitions),
    dataKeys: JSON.stringify(BENCH_SCHEMA.dataKeys),
    freshnessHalfLife: BENCH_SCHEMA.freshnessHalfLife,
    validityPeriod: null,
    requireSignedConsent: false,
    sealing: "admin",
    createdAt: T0 - 1,
    proof: "none",
    attestorQuorum: 1,
    accountIdField: null,
  };
}

function rowBytes(row: NewRow<AttestationRow>): number {
  return (
    row.attestationId.length +
    row.schemaId.length +
    row.owner.length +
    row.encryptedData.length +
    Buffer.byteLength(row.bucketValues) +
    3 * 8
  );
}

/** Creates (or replaces) the database at `path` holding the bench schema and `count` attestations. */
export async function seedStore(path: string, count: number, cacheDir: string): Promise<SeedResult> {
  const ids = await idsOf(count, cacheDir);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  const started = performance.now();
  const db = openDatabase({ path });
  // The seeding connection is the bench's, not the dapp's: a large cache keeps one big transaction in memory.
  db.$client.pragma("cache_size = -262144");
  const store = createStore(db);
  const progress = startProgress({ label: `attestations seeded (${count.toLocaleString("en-US")})`, total: count });
  store.transaction(() => {
    store.insertSchema(schemaRow());
    for (let i = 0; i < count; i++) {
      store.insertAttestation(seededRow(i, count, ids));
      if ((i + 1) % 1000 === 0) progress.tick(1000);
    }
  });
  progress.tick(count % 1000);
  progress.done();
  db.$client.pragma("wal_checkpoint(TRUNCATE)");
  db.$client.close();
  const seconds = (performance.now() - started) / 1000;

  const owners = regularOwnerCount(count);
  const sampleOwners = Array.from({ length: Math.min(256, owners) }, (_, j) =>
    ownerAddress(Math.floor((j * owners) / Math.min(256, owners))),
  );
  const samples = Math.min(1000, count);
  const sampleAttestationIds = Array.from({ length: samples }, (_, j) =>
    inputIdOf("create_attestation", SEED_INDEX_BASE + Math.floor((j * count) / samples)),
  );
  return {
    path,
    count,
    seconds,
    fileBytes: statSync(path).size,
    rawRowBytes: rowBytes(seededRow(0, count)),
    targetOwner: TARGET_OWNER,
    sampleOwners,
    sampleAttestationIds,
  };
}

/**
 * Applies seeded row `i`'s input through the real dispatcher (an in-memory database, the admin as sender)
 * and compares the row it writes with `seededRow`: the seeded store is the store real inputs produce.
 * Returns the differing columns (empty when identical).
 */
export async function checkSeedEquivalence(i: number, count: number): Promise<string[]> {
  const db = openDatabase({ path: ":memory:" });
  const ignore = async (): Promise<void> => {};
  const dispatcher = createDispatcher({ db, admins: [BENCH_ADMIN], outputs: { notice: ignore, report: ignore, exception: ignore } });
  const expected = seededRow(i, count);
  const owner = `0x${expected.owner.toString("hex")}` as Address;
  const { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife, name, description } = BENCH_SCHEMA;
  const schemaInput = { type: "register_schema", params: { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife, name, description } };
  const metadata = (index: number, timestamp: number, block: number) => ({
    msg_sender: BENCH_ADMIN,
    input_index: index,
    timestamp,
    block_number: block,
  });
  const problems: string[] = [];
  if ((await dispatcher.advance({ metadata: metadata(SEED_INDEX_BASE - 1, T0 - 1, 0), payload: jsonToHex(schemaInput) })) !== "accept") {
    problems.push("register_schema was rejected");
  }
  const input = { type: "create_attestation", params: attestationParams(i, owner) };
  const status = await dispatcher.advance({
    metadata: metadata(expected.inputIndex, expected.timestamp, expected.blockNumber),
    payload: jsonToHex(input),
  });
  if (status !== "accept") problems.push("create_attestation was rejected");
  const actual = dispatcher.store.attestationById(expected.attestationId);
  const schema = dispatcher.store.schemaById(hexToBuffer(BENCH_SCHEMA_ID));
  db.$client.close();
  if (actual === undefined) return [...problems, "no row written"];
  for (const key of Object.keys(expected) as (keyof NewRow<AttestationRow>)[]) {
    const a = actual[key];
    const e = expected[key];
    // The store reads byte columns back as 0x-hex (AttestationRead).
    const same = Buffer.isBuffer(e) ? a === `0x${e.toString("hex")}` : a === e;
    if (!same) problems.push(`attestations.${key}`);
  }
  const expectedSchema = schemaRow();
  for (const key of Object.keys(expectedSchema) as (keyof NewRow<SchemaRow>)[]) {
    if (key === "inputIndex" || key === "createdAt") continue;
    const a = schema?.[key];
    const e = expectedSchema[key];
    const same = Buffer.isBuffer(a) && Buffer.isBuffer(e) ? a.equals(e) : a === e;
    if (!same) problems.push(`schemas.${key}`);
  }
  return problems;
}
