/**
 * The devnode's record in SQLite: every input seen on the chain with the metadata the dapp was given,
 * its completion status, its outputs, and the last block scanned. Plain better-sqlite3 statements
 * (no ORM): a handful of fixed tables, prepared once, used from synchronous code paths. The outputs and
 * epochs tables are in v1's shapes (notices and vouchers per input, epochs over inputs); a v2 record
 * extends this one with its own (devnode/v2/record.ts), and a validator's verdicts are in validations.ts.
 */
import Database from "better-sqlite3";
import type { Address, Hex } from "viem";
import type { CompletionStatus } from "../common/wire.ts";
import { ValidationTable, type ValidationRecord } from "./validations.ts";

export type { CompletionStatus };


export interface InputRecord {
  index: number;
  status: CompletionStatus;
  msgSender: Address;
  payload: Hex;
  blockNumber: number;
  /** Block timestamp in seconds, as the v1 node hands it to the dapp. */
  timestamp: number;
  /** v2 only: the block's prevrandao (0x and 64 hex digits), from the input's EvmAdvance. */
  prevRandao?: Hex;
}

export type OutputKind = "notice" | "voucher" | "report";

export interface OutputRecord {
  kind: OutputKind;
  inputIndex: number;
  index: number;
  payload: Hex;
  /** Vouchers only. */
  destination: Address | null;
}

/** Outputs of one advance, collected in memory until the dapp finishes it. */
export interface AdvanceOutputs {
  notices: Hex[];
  vouchers: { destination: Address; payload: Hex }[];
  reports: Hex[];
  /** v2: the notices and vouchers as v2 outputs (`Notice(bytes)`...), in the order the dapp emitted them. */
  outputs: Hex[];
}

/** A closed epoch: the inputs it holds, its epoch hash, and the transaction that claimed it (once claimed). */
export interface EpochRecord {
  /** Also the claim's index in the History: only epochs with inputs are closed and claimed. */
  index: number;
  firstInput: number;
  lastInput: number;
  epochHash: Hex;
  claimTx: Hex | null;
}

interface EpochRow {
  epoch_index: number;
  first_input: number;
  last_input: number;
  epoch_hash: string;
  claim_tx: string | null;
}

function toEpoch(row: EpochRow): EpochRecord {
  return {
    index: row.epoch_index,
    firstInput: row.first_input,
    lastInput: row.last_input,
    epochHash: row.epoch_hash as Hex,
    claimTx: row.claim_tx as Hex | null,
  };
}

export interface InputFilter {
  indexGreaterThan?: number | null;
  indexLowerThan?: number | null;
}

export interface InputRow {
  input_index: number;
  status: string;
  msg_sender: string;
  payload: string;
  block_number: number;
  block_timestamp: number;
}

interface OutputRow {
  kind: string;
  input_index: number;
  output_index: number;
  payload: string;
  destination: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inputs (
  input_index     INTEGER PRIMARY KEY,
  status          TEXT    NOT NULL,
  msg_sender      TEXT    NOT NULL,
  payload         TEXT    NOT NULL,
  block_number    INTEGER NOT NULL,
  block_timestamp INTEGER NOT NULL,
  exception_payload TEXT
);
CREATE TABLE IF NOT EXISTS outputs (
  kind         TEXT    NOT NULL,
  input_index  INTEGER NOT NULL,
  output_index INTEGER NOT NULL,
  payload      TEXT    NOT NULL,
  destination  TEXT,
  PRIMARY KEY (kind, input_index, output_index)
);
CREATE TABLE IF NOT EXISTS epochs (
  epoch_index INTEGER PRIMARY KEY,
  first_input INTEGER NOT NULL,
  last_input  INTEGER NOT NULL,
  epoch_hash  TEXT    NOT NULL,
  claim_tx    TEXT
);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

export function toInput(row: InputRow): InputRecord {
  return {
    index: row.input_index,
    status: row.status as CompletionStatus,
    msgSender: row.msg_sender as Address,
    payload: row.payload as Hex,
    blockNumber: row.block_number,
    timestamp: row.block_timestamp,
  };
}

function toOutput(row: OutputRow): OutputRecord {
  return {
    kind: row.kind as OutputKind,
    inputIndex: row.input_index,
    index: row.output_index,
    payload: row.payload as Hex,
    destination: row.destination as Address | null,
  };
}

function filterBounds(filter: InputFilter | undefined): [number, number] {
  const low = filter?.indexGreaterThan ?? -1;
  const high = filter?.indexLowerThan ?? Number.MAX_SAFE_INTEGER;
  return [low, high];
}

/**
 * Who a record belongs to: one dapp on one InputBox, of one Rollups version. v1 records carry the bare
 * pair (they came first); the version is named from v2 on.
 */
export function recordOwner(rollups: "v1" | "v2", inputBox: Address, dapp: Address): string {
  const pair = `${inputBox.toLowerCase()}/${dapp.toLowerCase()}`;
  return rollups === "v1" ? pair : `${rollups}:${pair}`;
}

/** What a record file holds, read from a connection of its own (a snapshot's copy is not opened as a store). */
export interface RecordSummary {
  processed: number;
  /** The block of the last processed input (blocks never go down as indices go up), or null. */
  lastProcessedBlock: number | null;
  /** The next block to scan, or null before the first scan. */
  nextBlock: number | null;
  /** The meta rows (owner, scan position, the snapshot it was installed from...). */
  meta: ReadonlyMap<string, string>;
}

export function summarizeRecord(db: Database.Database): RecordSummary {
  const processed = db.prepare<[], { n: number; block: number | null }>("SELECT COUNT(*) AS n, MAX(block_number) AS block FROM inputs WHERE status <> 'UNPROCESSED'").get();
  const meta = new Map(db.prepare<[], { key: string; value: string }>("SELECT key, value FROM meta").all().map((row) => [row.key, row.value]));
  const next = meta.get("next_block");
  return { processed: processed?.n ?? 0, lastProcessedBlock: processed?.block ?? null, nextBlock: next === undefined ? null : Number(next), meta };
}

export class DevnodeStore {
  protected readonly db: Database.Database;
  private readonly stmt;
  /** A validator's verdicts (validations.ts). */
  private readonly verdicts: ValidationTable;
  /** completeOne in a transaction, made once: it runs once per input, between two inputs. */
  private readonly completeInTransaction: (index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null) => void;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    // WAL with NORMAL sync survives a crash of the process (only a power loss may drop the latest commits).
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(SCHEMA);
    this.verdicts = new ValidationTable(this.db);
    const db = this.db;
    this.stmt = {
      getMeta: db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE key = ?"),
      setMeta: db.prepare<[string, string]>(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ),
      insertInput: db.prepare<[number, string, string, string, number, number]>(
        "INSERT INTO inputs (input_index, status, msg_sender, payload, block_number, block_timestamp) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      completeInput: db.prepare<[string, string | null, number]>(
        "UPDATE inputs SET status = ?, exception_payload = ? WHERE input_index = ? AND status = 'UNPROCESSED'",
      ),
      insertOutput: db.prepare<[string, number, number, string, string | null]>(
        "INSERT INTO outputs (kind, input_index, output_index, payload, destination) VALUES (?, ?, ?, ?, ?)",
      ),
      inputCount: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM inputs"),
      processedCount: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM inputs WHERE status <> 'UNPROCESSED'"),
      countsByStatus: db.prepare<[], { status: string; n: number }>("SELECT status, COUNT(*) AS n FROM inputs GROUP BY status"),
      unprocessed: db.prepare<[], InputRow>(
        "SELECT * FROM inputs WHERE status = 'UNPROCESSED' ORDER BY input_index",
      ),
      getInput: db.prepare<[number], InputRow>("SELECT * FROM inputs WHERE input_index = ?"),
      inputsFrom: db.prepare<[number], InputRow>("SELECT * FROM inputs WHERE input_index >= ? ORDER BY input_index"),
      countInputs: db.prepare<[number, number], { n: number }>(
        "SELECT COUNT(*) AS n FROM inputs WHERE input_index > ? AND input_index < ?",
      ),
      pageInputs: db.prepare<[number, number, number, number], InputRow>(
        "SELECT * FROM inputs WHERE input_index > ? AND input_index < ? ORDER BY input_index LIMIT ? OFFSET ?",
      ),
      countOutputs: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM outputs WHERE kind = ?"),
      pageOutputs: db.prepare<[string, number, number], OutputRow>(
        "SELECT * FROM outputs WHERE kind = ? ORDER BY input_index, output_index LIMIT ? OFFSET ?",
      ),
      countInputOutputs: db.prepare<[string, number], { n: number }>(
        "SELECT COUNT(*) AS n FROM outputs WHERE kind = ? AND input_index = ?",
      ),
      pageInputOutputs: db.prepare<[string, number, number, number], OutputRow>(
        "SELECT * FROM outputs WHERE kind = ? AND input_index = ? ORDER BY output_index LIMIT ? OFFSET ?",
      ),
      getOutput: db.prepare<[string, number, number], OutputRow>(
        "SELECT * FROM outputs WHERE kind = ? AND input_index = ? AND output_index = ?",
      ),
      rangeInputs: db.prepare<[number, number], InputRow>(
        "SELECT * FROM inputs WHERE input_index >= ? AND input_index <= ? ORDER BY input_index",
      ),
      rangeOutputs: db.prepare<[number, number], OutputRow>(
        "SELECT * FROM outputs WHERE kind <> 'report' AND input_index >= ? AND input_index <= ? ORDER BY kind, input_index, output_index",
      ),
      insertEpoch: db.prepare<[number, number, number, string]>(
        "INSERT INTO epochs (epoch_index, first_input, last_input, epoch_hash) VALUES (?, ?, ?, ?)",
      ),
      claimEpoch: db.prepare<[string, number]>("UPDATE epochs SET claim_tx = ? WHERE epoch_index = ?"),
      lastEpoch: db.prepare<[], EpochRow>("SELECT * FROM epochs ORDER BY epoch_index DESC LIMIT 1"),
      epochs: db.prepare<[], EpochRow>("SELECT * FROM epochs ORDER BY epoch_index"),
      epochOfInput: db.prepare<[number, number], EpochRow>(
        "SELECT * FROM epochs WHERE first_input <= ? AND last_input >= ?",
      ),
    };
    this.completeInTransaction = db.transaction((...args: Parameters<DevnodeStore["completeOne"]>) => this.completeOne(...args));
  }

  close(): void {
    this.db.close();
  }

  /** A consistent copy of the whole record at `destination`, by SQLite's online backup (a snapshot). */
  async backup(destination: string): Promise<void> {
    await this.db.backup(destination);
  }

  getMeta(key: string): string | undefined {
    return this.stmt.getMeta.get(key)?.value;
  }

  setMeta(key: string, value: string): void {
    this.stmt.setMeta.run(key, value);
  }

  /** The next block to scan, or undefined when nothing was scanned yet. */
  nextBlock(): bigint | undefined {
    const value = this.getMeta("next_block");
    return value === undefined ? undefined : BigInt(value);
  }

  setNextBlock(block: bigint): void {
    this.setMeta("next_block", block.toString());
  }

  /** Records new inputs (unprocessed) and the scan position in one transaction, so neither runs ahead. */
  addInputs(inputs: readonly InputRecord[], nextBlock: bigint): void {
    this.db.transaction(() => {
      for (const input of inputs) this.insertInput(input);
      this.setNextBlock(nextBlock);
    })();
  }

  protected insertInput(input: InputRecord): void {
    this.stmt.insertInput.run(input.index, "UNPROCESSED", input.msgSender, input.payload, input.blockNumber, input.timestamp);
  }

  /**
   * Stores an input's verdict and its outputs in one transaction. A rejected input or an exception keeps
   * only its reports (the v1 node discards the notices and vouchers of an input that did not succeed).
   */
  completeInput(index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null): void {
    this.completeInTransaction(index, status, outputs, exceptionPayload);
  }

  protected completeOne(index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null): void {
    this.markComplete(index, status, exceptionPayload);
    if (status === "ACCEPTED") {
      outputs.notices.forEach((payload, i) => this.stmt.insertOutput.run("notice", index, i, payload, null));
      outputs.vouchers.forEach((v, i) => this.stmt.insertOutput.run("voucher", index, i, v.payload, v.destination));
    }
    outputs.reports.forEach((payload, i) => this.stmt.insertOutput.run("report", index, i, payload, null));
  }


  protected markComplete(index: number, status: CompletionStatus, exceptionPayload: Hex | null): void {
    const changed = this.stmt.completeInput.run(status, exceptionPayload, index).changes;
    if (changed !== 1) throw new Error(`input ${index} is not recorded as unprocessed`);
  }

  inputCount(): number {
    return this.stmt.inputCount.get()?.n ?? 0;
  }

  processedCount(): number {
    return this.stmt.processedCount.get()?.n ?? 0;
  }

  /** Inputs by completion status (UNPROCESSED, ACCEPTED, REJECTED, ...): the devnode's metrics. */
  inputCountsByStatus(): { status: string; n: number }[] {
    return this.stmt.countsByStatus.all();
  }

  unprocessedInputs(): InputRecord[] {
    return this.stmt.unprocessed.all().map(toInput);
  }

  getInput(index: number): InputRecord | undefined {
    const row = this.stmt.getInput.get(index);
    return row === undefined ? undefined : toInput(row);
  }

  /** Recorded inputs from `index` on, in order (for re-submission to a fresh chain). */
  inputsFrom(index: number): InputRecord[] {
    return this.stmt.inputsFrom.all(index).map(toInput);
  }

  countInputs(filter?: InputFilter): number {
    const [low, high] = filterBounds(filter);
    return this.stmt.countInputs.get(low, high)?.n ?? 0;
  }

  pageInputs(offset: number, limit: number, filter?: InputFilter): InputRecord[] {
    const [low, high] = filterBounds(filter);
    return this.stmt.pageInputs.all(low, high, limit, offset).map(toInput);
  }

  countOutputs(kind: OutputKind, inputIndex?: number): number {
    const row =
      inputIndex === undefined ? this.stmt.countOutputs.get(kind) : this.stmt.countInputOutputs.get(kind, inputIndex);
    return row?.n ?? 0;
  }

  pageOutputs(kind: OutputKind, offset: number, limit: number, inputIndex?: number): OutputRecord[] {
    const rows =
      inputIndex === undefined
        ? this.stmt.pageOutputs.all(kind, limit, offset)
        : this.stmt.pageInputOutputs.all(kind, inputIndex, limit, offset);
    return rows.map(toOutput);
  }

  /** Inputs first..last with their notices and vouchers (what an epoch over them commits to). */
  epochContents(first: number, last: number): { inputs: InputRecord[]; outputs: OutputRecord[] } {
    return {
      inputs: this.stmt.rangeInputs.all(first, last).map(toInput),
      outputs: this.stmt.rangeOutputs.all(first, last).map(toOutput),
    };
  }

  addEpoch(epoch: Omit<EpochRecord, "claimTx">): void {
    this.stmt.insertEpoch.run(epoch.index, epoch.firstInput, epoch.lastInput, epoch.epochHash);
  }

  setEpochClaimed(index: number, claimTx: Hex): void {
    this.stmt.claimEpoch.run(claimTx, index);
  }

  lastEpoch(): EpochRecord | undefined {
    const row = this.stmt.lastEpoch.get();
    return row === undefined ? undefined : toEpoch(row);
  }

  epochs(): EpochRecord[] {
    return this.stmt.epochs.all().map(toEpoch);
  }

  epochOfInput(inputIndex: number): EpochRecord | undefined {
    const row = this.stmt.epochOfInput.get(inputIndex, inputIndex);
    return row === undefined ? undefined : toEpoch(row);
  }

  getOutput(kind: OutputKind, inputIndex: number, index: number): OutputRecord | undefined {
    const row = this.stmt.getOutput.get(kind, inputIndex, index);
    return row === undefined ? undefined : toOutput(row);
  }

  addValidation(v: Omit<ValidationRecord, "matches" | "problem">): void {
    this.verdicts.add(v);
  }

  validations(): ValidationRecord[] {
    return this.verdicts.all();
  }
}
