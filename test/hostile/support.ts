/**
 * Shared pieces of the hostile-input, fault and restart suites: how many cases to run (scaled by
 * `HOSTILE_SCALE` for the soak script), fast-check settings, the dapp's state digest, report decoding,
 * and generators of addresses and valid inputs.
 */
import { isBatchNotice } from "../../common/attestation-batch.ts";
import Database from "better-sqlite3";
import fc from "fast-check";
import type { Address, Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { openDatabase, type DappDatabase } from "../../dapp/db/open.ts";
import { createDispatcher } from "../../dapp/dispatch.ts";
import { encodeCursor } from "../../devnode/v1/graphql.ts";
import { schemaIdOf } from "../../common/ids.ts";

/** Multiplies every case count; `npm run soak -- --count N` sets it. Default 1 (the CI size). */
export const SCALE = Math.max(1, Number(process.env.HOSTILE_SCALE ?? "1") || 1);

/** `n` cases at CI size, scaled for the soak. */
export function runs(n: number): number {
  return Math.max(1, Math.round(n * SCALE));
}

/**
 * fast-check settings: a random seed each run (printed with the counterexample on failure), or the one in
 * `FUZZ_SEED` to reproduce a failure.
 */
export function fcOptions(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FUZZ_SEED;
  return { numRuns: runs(numRuns), ...(seed === undefined || seed === "" ? {} : { seed: Number(seed) }) };
}

/** The digest of what the dapp's tables hold, bookkeeping (`meta`: last input index) left out. */
export function stateDigest(sqlite: Database.Database): string {
  return databaseDigest(sqlite, { includeMeta: false });
}

/** The state digest of a dapp database file that another process writes (WAL: a reader sees the last commit). */
export function fileStateDigest(path: string, includeMeta = false): string {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return databaseDigest(sqlite, { includeMeta });
  } finally {
    sqlite.close();
  }
}

export interface DecodedError {
  code: string;
  message: string;
}

/** The dapp's `{"error": {code, message}}` report, or undefined when the payload is something else. */
export function errorOf(report: Hex | undefined): DecodedError | undefined {
  if (report === undefined) return undefined;
  try {
    const value = JSON.parse(hexToUtf8(report)) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = value.error ?? {};
    return typeof code === "string" && typeof message === "string" ? { code, message } : undefined;
  } catch {
    return undefined;
  }
}

export const hexByte = (n: number): string => n.toString(16).padStart(2, "0");

/** A random 20-byte address, lower-case. */
export const addressArb: fc.Arbitrary<Address> = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((bytes) => `0x${Buffer.from(bytes).toString("hex")}` as Address);

/** A random 32-byte id, lower-case. */
export const bytes32Arb: fc.Arbitrary<Hex> = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => `0x${Buffer.from(bytes).toString("hex")}` as Hex);

/** JSON arrays nested `depth` deep around `inner`: `[[[...]]]`. */
export function nested(depth: number, inner = "0"): string {
  return `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
}

/** Seconds since `start`, for the figures in the logs. */
export function elapsed(start: number): string {
  return `${((Date.now() - start) / 1000).toFixed(1)} s`;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Prints one figure line that scripts/soak.ts and docs/reliability.md collect ("[hostile] ..."). */
export function figure(line: string): void {
  console.log(`[hostile] ${line}`);
}

// ---- the dapp's dispatcher without the HTTP loop, for volume ----

export interface DirectOutcome {
  index: number;
  status: "accept" | "reject";
  /** The JSON notices; the batch notice after them is `batch` (as test/dapp/rollup-server.ts splits them). */
  notices: Hex[];
  batch: Hex | null;
  reports: Hex[];
}

export interface DirectDapp {
  db: DappDatabase;
  /** One advance through the real dispatcher (decode, kinds, transaction, outputs), without HTTP. */
  advance(payload: string, sender: string, timestamp: number, index: number, blockNumber?: number): Promise<DirectOutcome>;
  /** One inspect: the result, or the rejection message. */
  inspect(payload: Hex): Promise<{ reports: Hex[]; exception: Hex | null }>;
  close(): void;
}

/**
 * The real dispatcher (dapp/dispatch.ts) on a real migrated SQLite database, its outputs captured in
 * memory. The HTTP loop around it (@deroll/app) costs milliseconds per request on this sandbox's
 * loopback; the suites run their volume here and a share of every family through the real loop.
 */
export function directDapp(options: { dbPath?: string; admins: readonly Address[] }): DirectDapp {
  const db = openDatabase({ path: options.dbPath ?? ":memory:" });
  let notices: Hex[] = [];
  let reports: Hex[] = [];
  let exception: Hex | null = null;
  const dispatcher = createDispatcher({
    db,
    admins: options.admins,
    outputs: {
      notice: async (payload) => notices.push(payload),
      report: async (payload) => reports.push(payload),
      exception: async (payload) => {
        exception = payload;
      },
    },
  });
  return {
    db,
    async advance(payload, sender, timestamp, index, blockNumber = 100 + index) {
      notices = [];
      reports = [];
      const status = await dispatcher.advance({
        metadata: { msg_sender: sender, input_index: index, block_number: blockNumber, timestamp },
        payload,
      });
      const last = notices.at(-1);
      const batch = last !== undefined && isBatchNotice(last) ? last : null;
      return { index, status, notices: batch === null ? notices : notices.slice(0, -1), batch, reports };
    },
    async inspect(payload) {
      reports = [];
      exception = null;
      await dispatcher.inspect({ payload });
      return { reports, exception };
    },
    close: () => db.$client.close(),
  };
}

// ---- what the node recorded, and a clean replay of it ----

export interface RecordedInput {
  index: number;
  status: string;
  msgSender: string;
  timestamp: number;
  blockNumber: number;
  payload: Hex;
  notices: Hex[];
  reports: Hex[];
}

interface InputsPage {
  inputs: {
    totalCount: number;
    edges: {
      node: {
        index: number;
        status: string;
        msgSender: string;
        /** v1 BigInt values: decimal strings. */
        timestamp: string;
        blockNumber: string;
        payload: Hex;
        notices: { edges: { node: { payload: Hex } }[] };
        reports: { edges: { node: { payload: Hex } }[] };
      };
    }[];
  };
}

/** Every input the node recorded, with its verdict and outputs, read through GraphQL page by page. */
export async function recordedInputs(graphql: <T>(query: string, variables?: Record<string, unknown>) => Promise<T>): Promise<RecordedInput[]> {
  const out: RecordedInput[] = [];
  for (;;) {
    const after = out.length === 0 ? null : encodeCursor(out.length - 1);
    const page = await graphql<InputsPage>(
      `query Page($after: String) { inputs(first: 500, after: $after) { totalCount edges { node {
        index status msgSender timestamp blockNumber payload
        notices { edges { node { payload } } }
        reports { edges { node { payload } } }
      } } } }`,
      { after },
    );
    for (const { node } of page.inputs.edges) {
      out.push({
        ...node,
        timestamp: Number(node.timestamp),
        blockNumber: Number(node.blockNumber),
        notices: node.notices.edges.map((e) => e.node.payload),
        reports: node.reports.edges.map((e) => e.node.payload),
      });
    }
    if (page.inputs.edges.length === 0 || out.length >= page.inputs.totalCount) return out;
  }
}

/** Replays recorded inputs into a fresh database with the real dispatcher: its full digest and outcomes. */
export async function cleanReplay(inputs: readonly RecordedInput[], admins: readonly Address[]): Promise<{ digest: string; outcomes: DirectOutcome[] }> {
  const dapp = directDapp({ admins });
  try {
    const outcomes: DirectOutcome[] = [];
    for (const input of inputs) {
      outcomes.push(await dapp.advance(input.payload, input.msgSender, input.timestamp, input.index, input.blockNumber));
    }
    return { digest: databaseDigest(dapp.db.$client), outcomes };
  } finally {
    dapp.close();
  }
}

/** A per-test timeout that grows with the soak's scale (vitest's default is 60 s). */
export function scaledTimeout(baseMs: number): number {
  return Math.round(baseMs * SCALE);
}

/** The provider schema the api suites register: the local provider answers on `localhost`. */
export const LOCAL_SCHEMA = {
  provider: "http",
  flowType: "balance",
  domain: "localhost",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000], labels: ["low", "mid"] } },
  dataKeys: [],
  freshnessHalfLife: 60,
};
export const LOCAL_SCHEMA_ID = schemaIdOf(LOCAL_SCHEMA);
