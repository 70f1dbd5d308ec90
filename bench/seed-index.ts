/**
 * Builds the index for a store of N seeded attestations (bench/seed.ts) without N inputs through a node:
 * the notices the dapp writes for each seeded row (`attestation:created`, and the schema's registration)
 * go through the indexer's own writer (api/index/apply.ts, `applyInputs`), thousands of inputs a
 * transaction. The rows are those the indexer writes for the same notices; `checkIndexSeedEquivalence`
 * proves on every run that the notice made here is the one the real dispatcher emits for that row.
 */
import type { Address, Hex } from "viem";
import { applyInputs, type IndexedInput } from "../api/index/apply.ts";
import type { OpenIndex } from "../api/index/db.ts";
import { Indexer } from "../api/index/indexer.ts";
import { indexState } from "../api/index/schema.ts";
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
/** Inputs applied per transaction. */
const CHUNK = 2_000;
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

/** Writes the schema and `count` attestations into `index` as the indexer would from their notices. */
export async function seedIndex(index: OpenIndex, count: number, application: string, cacheDir: string): Promise<{ seconds: number }> {
  const started = performance.now();
  const ids = await idsOf(count, cacheDir);
  await new Indexer(index, NO_NODE, { application, pageSize: 1, log: () => undefined }).prepare();
  await applyInputs(index.db, [indexedInput(INDEX_BASE - 1, T0 - 1, { event: "schema:registered", data: { schema_id: BENCH_SCHEMA_ID } }, jsonToHex(registration()))], null, -1);
  const progress = startProgress({ label: `index rows seeded (${count.toLocaleString("en-US")})`, total: count });
  for (let start = 0; start < count; start += CHUNK) {
    const chunk: IndexedInput[] = [];
    for (let i = start; i < Math.min(count, start + CHUNK); i++) chunk.push(indexedInput(INDEX_BASE + i, T0 + i, seededNotice(i, count, ids)));
    await applyInputs(index.db, chunk, null, -1);
    progress.tick(chunk.length);
  }
  progress.done();
  // The rows stand for inputs the bench's node never had: the indexer's progress stays at the start, so it
  // neither looks for them on the node nor empties the index for their absence.
  await index.db.update(indexState).set({ cursor: null, lastInput: -1 });
  return { seconds: (performance.now() - started) / 1000 };
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
