/**
 * Builds the index for a store of N seeded attestations (bench/seed.ts) without N inputs through a node:
 * the notices the dapp writes for each seeded row (`attestation:created`, and the schema's registration)
 * become the rows the indexer makes of them (api/index/apply.ts: `attestationRow`, `inputRow`), written
 * in bulk, thousands a statement (PostgreSQL's `unnest` of one array per column), which 1,000,000 rows
 * need: the indexer's own writer does about a thousand a second here. `checkIndexSeedEquivalence` proves
 * on every run that the notice made here is the one the real dispatcher emits for that row, and
 * `checkBulkEquivalence` that the bulk rows are those the indexer's writer (`applyInputs`) makes.
 */
import { getTableColumns, sql, type Table } from "drizzle-orm";
import type { Address, Hex } from "viem";
import { applyInputs, attestationRow, inputRow, type Created, type IndexedInput } from "../api/index/apply.ts";
import { openIndex, type IndexDb, type OpenIndex } from "../api/index/db.ts";
import { Indexer } from "../api/index/indexer.ts";
import { attestations, indexState, inputs, schemata } from "../api/index/schema.ts";
import type { IndexSource } from "../api/index/source.ts";
import { jsonToHex } from "../common/hex.ts";
import type { NoticeEvent } from "../common/wire.ts";
import { openDatabase } from "../dapp/db/open.ts";
import { createDispatcher } from "../dapp/dispatch.ts";
import { startProgress } from "../toolkit/progress.ts";
import { idsOf } from "./ids.ts";
import { attestationParams, BENCH_ADMIN, BENCH_SCHEMA, BENCH_SCHEMA_ID, SEED_INDEX_BASE } from "./inputs.ts";
import { seededRow } from "./seed.ts";

/**
 * Where the seeded rows' inputs are numbered in the index: the dapp's seeded rows name inputs from 10^12
 * (bench/inputs.ts), past what the index's 32-bit input columns and GraphQL's Int hold (2^31 inputs, far
 * beyond any rollup's); only `inputIndex` and the creation order differ, by this offset, from the rows of
 * those inputs.
 */
const INDEX_BASE = 1_000_000;
/** The seeded inputs are all in claimed epochs (`provenThrough` past the last). */
const ALL_PROVEN = 2 ** 31 - 1;
/** Rows a bulk statement inserts. */
const CHUNK = 5_000;
const T0 = 1_700_000_000;

/** The bench's stack has none of these inputs: the indexer is never asked to read them. */
const NO_NODE: IndexSource = {
  url: "none",
  noticesAfter: () => Promise.reject(new Error("the seeded index reads no node")),
  inputOrigin: () => Promise.reject(new Error("the seeded index reads no node")),
  inputPayload: () => Promise.reject(new Error("the seeded index reads no node")),
  inputNotices: () => Promise.reject(new Error("the seeded index reads no node")),
  transactionOf: () => Promise.reject(new Error("the seeded index reads no node")),
};

function registration() {
  const { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife, name, description } = BENCH_SCHEMA;
  return { type: "register_schema", params: { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife, name, description } };
}

/** The `attestation:created` notice the dapp writes for seeded row `i` of a store of `count`. */
export function seededNotice(i: number, count: number, ids?: Buffer): NoticeEvent {
  const row = seededRow(i, count, ids);
  return {
    event: "attestation:created",
    data: {
      claimId: `0x${row.attestationId.toString("hex")}`,
      owner: `0x${row.owner.toString("hex")}`,
      provider: BENCH_SCHEMA.provider,
      schema_id: BENCH_SCHEMA_ID,
      bucket_values: JSON.parse(row.bucketValues) as Record<string, string>,
      attester: BENCH_ADMIN,
      timestamp: row.timestamp,
      expires_at: null,
      freshness_half_life: BENCH_SCHEMA.freshnessHalfLife,
    },
  };
}

function indexedInput(index: number, timestamp: number, notice: NoticeEvent, payload?: Hex): IndexedInput {
  return {
    index,
    origin: { sender: BENCH_ADMIN as Address, blockNumber: 1 + index - INDEX_BASE, timestamp, txid: null },
    txid: "",
    notices: [{ cursor: "", index: 0, inputIndex: index, payload: jsonToHex(notice) }],
    ...(payload === undefined ? {} : { payload }),
  };
}

/**
 * Inserts `rows` into `table` in one statement: one array parameter per column, `unnest`ed into rows (a
 * statement of 5,000 rows has 31 parameters, not 155,000; drizzle's per-value work is skipped too).
 */
async function insertMany(db: IndexDb, table: Table, rows: readonly Record<string, unknown>[]): Promise<void> {
  const columns = Object.entries(getTableColumns(table));
  const names = columns.map(([, column]) => sql.identifier(column.name));
  const arrays = columns.map(([key, column]) => {
    const type = column.getSQLType();
    const values = rows.map((row) => (row[key] === undefined || row[key] === null ? null : type === "jsonb" ? JSON.stringify(row[key]) : row[key]));
    return sql`${sql.param(values)}::${sql.raw(type)}[]`;
  });
  await db.execute(sql`insert into ${table} (${sql.join(names, sql`, `)}) select * from unnest(${sql.join(arrays, sql`, `)})`);
}

/**
 * The rows of seeded inputs `from`..`to` - 1, as the indexer makes them from their notices, proven: a
 * store of a million attestations is of epochs long claimed (and the indexer then has none of them to
 * look for on the node).
 */
function seededRows(from: number, to: number, count: number, ids: Buffer | undefined): { made: Record<string, unknown>[]; read: Record<string, unknown>[] } {
  const made: Record<string, unknown>[] = [];
  const read: Record<string, unknown>[] = [];
  for (let i = from; i < to; i++) {
    const notice = seededNotice(i, count, ids);
    const input = indexedInput(INDEX_BASE + i, T0 + i, notice);
    const record = input.notices[0];
    if (record === undefined) throw new Error("a seeded input has its notice");
    made.push(attestationRow(notice.data as Created, input, record, 0, true));
    read.push(inputRow(input, true));
  }
  return { made, read };
}

/** Writes the schema and `count` attestations into `index` as the indexer would from their notices. */
export async function seedIndex(index: OpenIndex, count: number, application: string, cacheDir: string | undefined): Promise<{ seconds: number }> {
  const started = performance.now();
  const ids = cacheDir === undefined ? undefined : await idsOf(count, cacheDir);
  await new Indexer(index, NO_NODE, { application, pageSize: 1, log: () => undefined }).prepare();
  await applyInputs(index.db, [indexedInput(INDEX_BASE - 1, T0 - 1, { event: "schema:registered", data: { schema_id: BENCH_SCHEMA_ID } }, jsonToHex(registration()))], null, ALL_PROVEN);
  const progress = startProgress({ label: `index rows seeded (${count.toLocaleString("en-US")})`, total: count });
  for (let start = 0; start < count; start += CHUNK) {
    const end = Math.min(count, start + CHUNK);
    const { made, read } = seededRows(start, end, count, ids);
    await index.db.transaction(async (tx) => {
      await insertMany(tx as unknown as IndexDb, attestations, made);
      await insertMany(tx as unknown as IndexDb, inputs, read);
    });
    progress.tick(end - start);
  }
  progress.done();
  await index.db.update(schemata).set({ attestationCount: count }).where(sql`${schemata.id} = ${BENCH_SCHEMA_ID.toLowerCase()}`);
  // The rows stand for inputs the bench's node never had: the indexer's progress stays at the start, so it
  // neither looks for them on the node nor empties the index for their absence.
  await index.db.update(indexState).set({ cursor: null, lastInput: -1, attestationCount: count });
  // A bulk load leaves PostgreSQL work to do (autovacuum's analyze and the visibility map of every page, a
  // checkpoint's writes) that would otherwise run during the timed reads: done here, as a server that has
  // been up a while would have done it.
  await index.db.execute(sql`VACUUM ANALYZE`);
  await index.db.execute(sql`CHECKPOINT`);
  return { seconds: (performance.now() - started) / 1000 };
}

/**
 * Seeds `count` rows twice, in PGlite in memory: in bulk (`seedIndex`), and through the indexer's writer
 * (`applyInputs`, each input as the indexer applies it); every row of every table must be the same. The
 * differences, by table and row (empty when none).
 */
export async function checkBulkEquivalence(count: number): Promise<string[]> {
  const bulk = await openIndex({ kind: "pglite", dir: "memory://" }, { migrate: true, readTimeoutMs: 60_000 });
  const applied = await openIndex({ kind: "pglite", dir: "memory://" }, { migrate: true, readTimeoutMs: 60_000 });
  try {
    const application = BENCH_ADMIN.toLowerCase();
    await seedIndex(bulk, count, application, undefined);
    await new Indexer(applied, NO_NODE, { application, pageSize: 1, log: () => undefined }).prepare();
    await applyInputs(applied.db, [indexedInput(INDEX_BASE - 1, T0 - 1, { event: "schema:registered", data: { schema_id: BENCH_SCHEMA_ID } }, jsonToHex(registration()))], null, ALL_PROVEN);
    for (let i = 0; i < count; i++) await applyInputs(applied.db, [indexedInput(INDEX_BASE + i, T0 + i, seededNotice(i, count))], null, ALL_PROVEN);
    await applied.db.update(indexState).set({ cursor: null, lastInput: -1 });
    const problems: string[] = [];
    for (const [name, table, order] of [["attestation", attestations, attestations.position], ["input", inputs, inputs.index], ["schema", schemata, schemata.id], ["index_state", indexState, indexState.id]] as const) {
      const [a, b] = await Promise.all([bulk.db.select().from(table).orderBy(order), applied.db.select().from(table).orderBy(order)]);
      if (a.length !== b.length) problems.push(`${name}: ${a.length} rows in bulk, ${b.length} applied`);
      for (let k = 0; k < Math.min(a.length, b.length); k++) {
        if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) problems.push(`${name} row ${k}: bulk ${JSON.stringify(a[k])}, applied ${JSON.stringify(b[k])}`);
      }
    }
    return problems;
  } finally {
    await Promise.all([bulk.close(), applied.close()]);
  }
}

/**
 * Runs seeded row `i`'s inputs (the registration, then its create_attestation) through the real dispatcher
 * and compares the attestation notice it emits with `seededNotice`: the differing fields (empty when equal).
 */
export async function checkIndexSeedEquivalence(i: number, count: number): Promise<string[]> {
  const db = openDatabase({ path: ":memory:" });
  const notices: Hex[] = [];
  const ignore = async (): Promise<void> => {};
  const dispatcher = createDispatcher({ db, admins: [BENCH_ADMIN], outputs: { notice: async (payload: Hex) => void notices.push(payload), report: ignore, exception: ignore } });
  const expected = seededNotice(i, count);
  const row = seededRow(i, count);
  const metadata = (index: number, timestamp: number, block: number) => ({ msg_sender: BENCH_ADMIN, input_index: index, timestamp, block_number: block });
  await dispatcher.advance({ metadata: metadata(SEED_INDEX_BASE - 1, T0 - 1, 0), payload: jsonToHex(registration()) });
  notices.length = 0;
  const owner = `0x${row.owner.toString("hex")}` as Address;
  await dispatcher.advance({ metadata: metadata(row.inputIndex, row.timestamp, row.blockNumber), payload: jsonToHex({ type: "create_attestation", params: attestationParams(i, owner) }) });
  db.$client.close();
  const emitted = notices.map((p) => {
    try {
      return JSON.parse(Buffer.from(p.slice(2), "hex").toString("utf8")) as NoticeEvent;
    } catch {
      return undefined;
    }
  });
  const actual = emitted.find((n) => n?.event === "attestation:created");
  if (actual === undefined) return ["no attestation:created notice"];
  const problems: string[] = [];
  const a = actual.data as Record<string, unknown>;
  const e = expected.data as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(e)])) {
    if (JSON.stringify(a[key]) !== JSON.stringify(e[key])) problems.push(`notice.${key}: dapp ${JSON.stringify(a[key])}, seeded ${JSON.stringify(e[key])}`);
  }
  return problems;
}
