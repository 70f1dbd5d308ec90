/**
 * A v2 node's record: the v1 record's inputs (same table, same statuses) plus what v2 adds — each input's
 * prevrandao, transaction, InputAdded log index and outputs root; the outputs as v2 encodes them, numbered
 * across the application's history; reports numbered the same way; and the claims made. Epochs are not
 * stored: an epoch is the inputs whose block falls in its range of blocks, derived when asked.
 */
import type { Statement } from "better-sqlite3";
import { hexToBytes, type Address, type Hex } from "viem";
import { nativeKeccak } from "../../common/native-keccak.ts";
import type { CompletionStatus } from "../../common/wire.ts";
import type { OutputEncoding } from "../model.ts";
import { DevnodeStore, toInput, type AdvanceOutputs, type InputRecord, type InputRow } from "../store.ts";
import { encodeDelegateCallVoucher, encodeNotice, encodeVoucher, GrowingOutputsTree } from "./outputs.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS v2_inputs (
  input_index  INTEGER PRIMARY KEY,
  prev_randao  TEXT NOT NULL,
  tx_hash      TEXT NOT NULL,
  outputs_hash TEXT,
  -- The InputAdded log's index in its block (the node's log_index).
  log_index    INTEGER
);
CREATE TABLE IF NOT EXISTS v2_outputs (
  output_index INTEGER PRIMARY KEY,
  input_index  INTEGER NOT NULL,
  -- The output's type, its 4-byte selector ("0xc258d6e5" for a notice): what clients list outputs by.
  selector     TEXT NOT NULL,
  raw          TEXT NOT NULL,
  hash         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS v2_outputs_by_input ON v2_outputs (input_index);
CREATE INDEX IF NOT EXISTS v2_outputs_by_selector ON v2_outputs (selector, output_index);
CREATE TABLE IF NOT EXISTS v2_reports (
  report_index INTEGER PRIMARY KEY,
  input_index  INTEGER NOT NULL,
  payload      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS v2_reports_by_input ON v2_reports (input_index);
CREATE TABLE IF NOT EXISTS v2_claims (
  epoch_index  INTEGER PRIMARY KEY,
  outputs_root TEXT NOT NULL,
  claim_tx     TEXT NOT NULL,
  claimed_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS inputs_by_block ON inputs (block_number);
`;

/** An input as a v2 node reports it. */
export interface V2Input extends InputRecord {
  prevRandao: Hex;
  txHash: Hex;
  /** The InputAdded log's index in its block; null only while a record written before it was kept is read again. */
  logIndex: number | null;
  /** The outputs root after this input; null until it is processed. */
  outputsHash: Hex | null;
  /** What the dapp handed `/exception` for an input that ended in EXCEPTION, null for any other (as read back from the record). */
  exceptionPayload?: Hex | null;
}

export interface V2Output {
  index: number;
  inputIndex: number;
  raw: Hex;
  hash: Hex;
}

export interface V2Report {
  index: number;
  inputIndex: number;
  payload: Hex;
}

export interface V2Claim {
  epochIndex: number;
  outputsRoot: Hex;
  claimTx: Hex;
  /** Unix milliseconds. */
  claimedAt: number;
}

/** An epoch that holds inputs: blocks [firstBlock, lastBlock], inputs [lower, upper). */
export interface V2EpochSpan {
  index: number;
  firstBlock: number;
  lastBlock: number;
  lower: number;
  upper: number;
  /** Inputs of the epoch the dapp has not finished. */
  pending: number;
  /** Position among the epochs that hold inputs (the node's `virtual_index`). */
  virtualIndex: number;
  /** The outputs root after the epoch's last input, once that input is processed. */
  rootAfter: Hex | null;
}

/** Filters of the JSON-RPC list methods; an epoch filter arrives as its input range. */
export interface RangeFilter {
  /** Inputs [lower, upper). */
  inputs?: { lower: number; upper: number };
  inputIndex?: number;
}

export interface Page {
  limit: number;
  offset: number;
  descending: boolean;
}

interface V2InputRow extends InputRow {
  prev_randao: string | null;
  tx_hash: string | null;
  log_index: number | null;
  outputs_hash: string | null;
  exception_payload: string | null;
}

const ZERO32: Hex = `0x${"00".repeat(32)}`;

function toV2Input(row: V2InputRow): V2Input {
  return {
    ...toInput(row),
    prevRandao: (row.prev_randao ?? ZERO32) as Hex,
    txHash: (row.tx_hash ?? ZERO32) as Hex,
    logIndex: row.log_index,
    outputsHash: row.outputs_hash as Hex | null,
    exceptionPayload: row.exception_payload as Hex | null,
  };
}

const INPUT_SELECT =
  "SELECT i.*, v.prev_randao, v.tx_hash, v.log_index, v.outputs_hash FROM inputs i LEFT JOIN v2_inputs v ON v.input_index = i.input_index";

export class V2Store extends DevnodeStore {
  /** Blocks per epoch; the application's Authority has the last word, so it is set once that is read. */
  epochLength = 1;
  /** What the dapp's notices and vouchers become, as this record keeps and proves them (the model asks). */
  readonly outputEncoding: OutputEncoding = { notice: encodeNotice, voucher: encodeVoucher, delegateCallVoucher: encodeDelegateCallVoucher };
  private readonly tree = new GrowingOutputsTree();
  private readonly statements = new Map<string, Statement>();
  /** outputsBefore() of processed prefixes. */
  private readonly sizes = new Map<number, number>();

  constructor(path: string) {
    super(path);
    this.db.exec(SCHEMA);
    this.addLogIndex();
    for (const row of this.db.prepare<[], { hash: string }>("SELECT hash FROM v2_outputs ORDER BY output_index").iterate()) {
      this.tree.append(hexToBytes(row.hash as Hex));
    }
  }

  /** Outputs of accepted inputs so far: the index the next one gets. */
  get outputCount(): number {
    return this.tree.size;
  }

  protected override insertInput(input: InputRecord): void {
    super.insertInput(input);
    const v2 = input as Partial<V2Input>;
    this.sql("INSERT INTO v2_inputs (input_index, prev_randao, tx_hash, log_index) VALUES (?, ?, ?, ?)").run(input.index, v2.prevRandao ?? ZERO32, v2.txHash ?? ZERO32, v2.logIndex ?? null);
  }

  /**
   * A record kept before the log index was: the column is added, and the chain is read again from the
   * first recorded input's block, so every recorded input gets its log index back (relocateInput).
   */
  private addLogIndex(): void {
    const columns = this.db.prepare<[], { name: string }>("PRAGMA table_info(v2_inputs)").all();
    if (columns.some((c) => c.name === "log_index")) return;
    this.db.exec("ALTER TABLE v2_inputs ADD COLUMN log_index INTEGER");
    const first = this.db.prepare<[], { b: number | null }>("SELECT MIN(block_number) AS b FROM inputs").get()?.b;
    if (first != null && this.nextBlock() !== undefined) this.setNextBlock(BigInt(first));
  }

  /**
   * A v2 input's verdict: an accepted input's outputs join the tree and get the next indices; a rejected
   * one's are discarded (the machine rolls back). Reports stay either way. The outputs root after the
   * input is recorded with it.
   */
  protected override completeOne(index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null): void {
    this.markComplete(index, status, exceptionPayload);
    const before = this.tree.size;
    try {
      if (status === "ACCEPTED") {
        const insert = this.sql("INSERT INTO v2_outputs (output_index, input_index, selector, raw, hash) VALUES (?, ?, ?, ?, ?)");
        for (const raw of outputs.outputs) {
          const hash = nativeKeccak(hexToBytes(raw));
          insert.run(this.tree.size, index, raw.slice(0, 10).toLowerCase(), raw, `0x${hash.toString("hex")}`);
          this.tree.append(hash);
        }
      }
      let reportIndex = this.count("SELECT COUNT(*) AS n FROM v2_reports", []);
      const report = this.sql("INSERT INTO v2_reports (report_index, input_index, payload) VALUES (?, ?, ?)");
      for (const payload of outputs.reports) report.run(reportIndex++, index, payload);
      this.sql("UPDATE v2_inputs SET outputs_hash = ? WHERE input_index = ?").run(this.tree.rootAt(this.tree.size), index);
    } catch (error) {
      // The transaction rolls back: so must the tree.
      this.tree.truncate(before);
      throw error;
    }
  }

  override unprocessedInputs(): V2Input[] {
    return this.rows<V2InputRow>(`${INPUT_SELECT} WHERE i.status = 'UNPROCESSED' ORDER BY i.input_index`, []).map(toV2Input);
  }

  /**
   * Where a recorded input sits on the chain, read again: a fresh chain took it again in another block and
   * transaction (its epoch follows it), or a record kept before the log index was learns it. True when
   * anything changed.
   */
  relocateInput(index: number, at: { blockNumber: number; txHash: Hex; logIndex: number }): boolean {
    const known = this.v2Input(index);
    if (known === undefined || (known.blockNumber === at.blockNumber && known.txHash === at.txHash && known.logIndex === at.logIndex)) return false;
    this.sql("UPDATE inputs SET block_number = ? WHERE input_index = ?").run(at.blockNumber, index);
    this.sql("UPDATE v2_inputs SET tx_hash = ?, log_index = ? WHERE input_index = ?").run(at.txHash, at.logIndex, index);
    return true;
  }

  // ---- inputs ----

  v2Input(index: number): V2Input | undefined {
    const row = this.sql(`${INPUT_SELECT} WHERE i.input_index = ?`).get(index) as V2InputRow | undefined;
    return row === undefined ? undefined : toV2Input(row);
  }

  listInputs(filter: RangeFilter & { sender?: Address }, page: Page): { items: V2Input[]; total: number } {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.inputs !== undefined) {
      where.push("i.input_index >= ? AND i.input_index < ?");
      params.push(filter.inputs.lower, filter.inputs.upper);
    }
    if (filter.sender !== undefined) {
      where.push("lower(i.msg_sender) = ?");
      params.push(filter.sender.toLowerCase());
    }
    const clause = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
    const total = this.count(`SELECT COUNT(*) AS n FROM inputs i${clause}`, params);
    const items = this.rows<V2InputRow>(`${INPUT_SELECT}${clause} ORDER BY i.input_index ${page.descending ? "DESC" : "ASC"} LIMIT ? OFFSET ?`, [
      ...params,
      page.limit,
      page.offset,
    ]).map(toV2Input);
    return { items, total };
  }

  // ---- outputs and reports ----

  getV2Output(index: number): V2Output | undefined {
    const row = this.sql("SELECT * FROM v2_outputs WHERE output_index = ?").get(index) as OutputRow | undefined;
    return row === undefined ? undefined : toOutput(row);
  }

  listOutputs(filter: RangeFilter & { selector?: string; destination?: Address }, page: Page): { items: V2Output[]; total: number } {
    const [clause, params] = this.rangeClause(filter);
    const where = clause === "" ? [] : [clause];
    if (filter.selector !== undefined) {
      where.push("selector = ?");
      params.push(`0x${filter.selector.toLowerCase()}`);
    }
    if (filter.destination !== undefined) {
      // A voucher's destination is its first argument: the 32-byte word after the selector.
      where.push("substr(raw, 35, 40) = ?");
      params.push(filter.destination.slice(2).toLowerCase());
    }
    const sqlWhere = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
    const total = this.count(`SELECT COUNT(*) AS n FROM v2_outputs${sqlWhere}`, params);
    const rows = this.rows<OutputRow>(`SELECT * FROM v2_outputs${sqlWhere} ORDER BY output_index ${page.descending ? "DESC" : "ASC"} LIMIT ? OFFSET ?`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { items: rows.map(toOutput), total };
  }

  getReport(index: number): V2Report | undefined {
    const row = this.sql("SELECT * FROM v2_reports WHERE report_index = ?").get(index) as ReportRow | undefined;
    return row === undefined ? undefined : toReport(row);
  }

  listReports(filter: RangeFilter, page: Page): { items: V2Report[]; total: number } {
    const [clause, params] = this.rangeClause(filter);
    const where = clause === "" ? "" : ` WHERE ${clause}`;
    const total = this.count(`SELECT COUNT(*) AS n FROM v2_reports${where}`, params);
    const rows = this.rows<ReportRow>(`SELECT * FROM v2_reports${where} ORDER BY report_index ${page.descending ? "DESC" : "ASC"} LIMIT ? OFFSET ?`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { items: rows.map(toReport), total };
  }

  /**
   * Outputs of the inputs before `upperInput`: the size of the tree an epoch ending there claims. Asked
   * for every output of a listed page, so the sizes of processed prefixes (which never change) are kept.
   */
  outputsBefore(upperInput: number): number {
    const known = this.sizes.get(upperInput);
    if (known !== undefined) return known;
    const size = this.count("SELECT COUNT(*) AS n FROM v2_outputs WHERE input_index < ?", [upperInput]);
    // Inputs are processed in order: the prefix is final once its last input is.
    const last = this.sql("SELECT status FROM inputs WHERE input_index = ?").get(upperInput - 1) as { status: string } | undefined;
    if (last !== undefined && last.status !== "UNPROCESSED") {
      if (this.sizes.size >= 4096) this.sizes.clear();
      this.sizes.set(upperInput, size);
    }
    return size;
  }

  outputsRootAt(size: number): Hex {
    return this.tree.rootAt(size);
  }

  siblingsAt(outputIndex: number, size: number): Hex[] {
    return this.tree.siblingsAt(outputIndex, size);
  }

  // ---- epochs and claims ----

  /** The epochs that hold inputs, in order (or only epoch `epochIndex`, found by its blocks). */
  epochSpans(epochIndex?: number): V2EpochSpan[] {
    const length = this.epochLength;
    const inner =
      epochIndex === undefined
        ? "SELECT block_number / ? AS e, MIN(input_index) AS lower, MAX(input_index) + 1 AS upper, SUM(status = 'UNPROCESSED') AS pending FROM inputs GROUP BY e"
        : "SELECT block_number / ? AS e, MIN(input_index) AS lower, MAX(input_index) + 1 AS upper, SUM(status = 'UNPROCESSED') AS pending FROM inputs " +
          "WHERE block_number >= ? AND block_number <= ? GROUP BY e";
    const params = epochIndex === undefined ? [length] : [length, epochIndex * length, epochIndex * length + length - 1];
    const rows = this.rows<{ e: number; lower: number; upper: number; pending: number; outputs_hash: string | null }>(
      `SELECT g.*, v.outputs_hash FROM (${inner}) g LEFT JOIN v2_inputs v ON v.input_index = g.upper - 1 ORDER BY g.e`,
      params,
    );
    const first = rows[0];
    // The position among epochs with inputs: counted for a single epoch, numbered along for all of them.
    const before =
      epochIndex === undefined || first === undefined
        ? 0
        : this.count("SELECT COUNT(DISTINCT block_number / ?) AS n FROM inputs WHERE block_number < ?", [length, first.e * length]);
    return rows.map((row, i) => ({
      index: row.e,
      firstBlock: row.e * length,
      lastBlock: row.e * length + length - 1,
      lower: row.lower,
      upper: row.upper,
      pending: row.pending,
      virtualIndex: before + i,
      rootAfter: row.pending === 0 ? (row.outputs_hash as Hex | null) : null,
    }));
  }

  /** The inputs [lower, upper) of epoch `epochIndex` (by its blocks, through the block index); null when it holds none. */
  epochInputs(epochIndex: number): { lower: number; upper: number } | null {
    const length = this.epochLength;
    const row = this.sql("SELECT MIN(input_index) AS lower, MAX(input_index) + 1 AS upper FROM inputs WHERE block_number >= ? AND block_number <= ?").get(
      epochIndex * length,
      epochIndex * length + length - 1,
    ) as { lower: number | null; upper: number | null } | undefined;
    return row?.lower == null || row.upper == null ? null : { lower: row.lower, upper: row.upper };
  }

  /** How many inputs were mined in blocks up to `block`: the inputs an epoch ending there is over. */
  inputsThroughBlock(block: number): number {
    return this.count("SELECT COUNT(*) AS n FROM inputs WHERE block_number <= ?", [block]);
  }

  /** The claim of epoch `epochIndex`, if it was made. */
  claimOf(epochIndex: number): V2Claim | undefined {
    const row = this.sql("SELECT * FROM v2_claims WHERE epoch_index = ?").get(epochIndex) as
      | { epoch_index: number; outputs_root: string; claim_tx: string; claimed_at: number }
      | undefined;
    return row === undefined ? undefined : { epochIndex: row.epoch_index, outputsRoot: row.outputs_root as Hex, claimTx: row.claim_tx as Hex, claimedAt: row.claimed_at };
  }

  claims(): Map<number, V2Claim> {
    const claims = new Map<number, V2Claim>();
    for (const row of this.rows<{ epoch_index: number; outputs_root: string; claim_tx: string; claimed_at: number }>("SELECT * FROM v2_claims", [])) {
      claims.set(row.epoch_index, { epochIndex: row.epoch_index, outputsRoot: row.outputs_root as Hex, claimTx: row.claim_tx as Hex, claimedAt: row.claimed_at });
    }
    return claims;
  }

  addClaim(claim: V2Claim): void {
    this.sql("INSERT INTO v2_claims (epoch_index, outputs_root, claim_tx, claimed_at) VALUES (?, ?, ?, ?)").run(
      claim.epochIndex,
      claim.outputsRoot,
      claim.claimTx,
      claim.claimedAt,
    );
  }

  /** A fresh chain has none of the claims: they are made again, over the epochs the inputs fall in now. */
  forgetClaims(): number {
    return this.sql("DELETE FROM v2_claims").run().changes;
  }

  // ---- helpers ----

  private rangeClause(filter: RangeFilter): [string, (string | number)[]] {
    if (filter.inputIndex !== undefined) return ["input_index = ?", [filter.inputIndex]];
    if (filter.inputs !== undefined) return ["input_index >= ? AND input_index < ?", [filter.inputs.lower, filter.inputs.upper]];
    return ["", []];
  }

  /** Statements are prepared once per distinct text (the list methods build a few variants each). */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  private rows<T>(text: string, params: readonly (string | number)[]): T[] {
    return this.sql(text).all(...params) as T[];
  }

  private count(text: string, params: readonly (string | number)[]): number {
    return (this.sql(text).get(...params) as { n: number } | undefined)?.n ?? 0;
  }
}

interface OutputRow {
  output_index: number;
  input_index: number;
  raw: string;
  hash: string;
}

function toOutput(row: OutputRow): V2Output {
  return { index: row.output_index, inputIndex: row.input_index, raw: row.raw as Hex, hash: row.hash as Hex };
}

interface ReportRow {
  report_index: number;
  input_index: number;
  payload: string;
}

function toReport(row: ReportRow): V2Report {
  return { index: row.report_index, inputIndex: row.input_index, payload: row.payload as Hex };
}
