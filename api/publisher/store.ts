/**
 * What the publisher remembers across restarts (SQLite, DATA_DIR/publisher-batches.sqlite): where it is in
 * the notice feed, every batch notice it has seen (one per input that made or revoked attestations:
 * common/attestation-batch.ts) with its proof once claimed and whether the registry holds it, every
 * transaction it signed (its raw bytes, kept before it is broadcast, so a restart sends the same transaction
 * again rather than a second one), and the gas of the last hour (the budget).
 */
import Database from "better-sqlite3";
import type { Hex } from "viem";

export type ItemKind = "attestation" | "revocation";

export interface PublishBatch {
  inputIndex: number;
  /** The batch notice's bytes, as the registry takes them. */
  notice: Hex;
  attestations: number;
  revocations: number;
  /** The proof as JSON (the node's shape for the version), null until its epoch is claimed. */
  proof: string | null;
  done: boolean;
}

export interface SentTx {
  hash: Hex;
  raw: Hex;
  nonce: number;
  /** The inputs whose batches it carries. */
  inputs: number[];
  gasLimit: number;
  sentAt: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
  input_index INTEGER PRIMARY KEY, notice TEXT NOT NULL, attestations INTEGER NOT NULL, revocations INTEGER NOT NULL,
  proof TEXT, done INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS batches_open ON batches (done, input_index);
CREATE TABLE IF NOT EXISTS txs (
  hash TEXT PRIMARY KEY, raw TEXT NOT NULL, nonce INTEGER NOT NULL, inputs TEXT NOT NULL, gas_limit INTEGER NOT NULL,
  sent_at INTEGER NOT NULL, state TEXT NOT NULL, gas_used INTEGER);
`;

interface BatchRow {
  input_index: number;
  notice: string;
  attestations: number;
  revocations: number;
  proof: string | null;
  done: number;
}

interface TxRow {
  hash: string;
  raw: string;
  nonce: number;
  inputs: string;
  gas_limit: number;
  sent_at: number;
}

function batchOf(row: BatchRow): PublishBatch {
  return { inputIndex: row.input_index, notice: row.notice as Hex, attestations: row.attestations, revocations: row.revocations, proof: row.proof, done: row.done === 1 };
}

function sent(row: TxRow): SentTx {
  return { hash: row.hash as Hex, raw: row.raw as Hex, nonce: row.nonce, inputs: JSON.parse(row.inputs) as number[], gasLimit: row.gas_limit, sentAt: row.sent_at };
}

export class PublisherStore {
  private readonly db: Database.Database;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    // Every row is what a restart relies on to send nothing twice: written through before the broadcast.
    this.db.pragma("synchronous = FULL");
    this.db.exec(SCHEMA);
  }

  close(): void {
    this.db.close();
  }

  /** The state belongs to one application's registry; another needs another DATA_DIR. */
  claimOwner(owner: string): string | undefined {
    const row = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'owner'").get();
    if (row === undefined) this.db.prepare("INSERT INTO meta (key, value) VALUES ('owner', ?)").run(owner);
    return row?.value;
  }

  get cursor(): string | null {
    return this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'cursor'").get()?.value ?? null;
  }

  /** Batch notices read up to `cursor`: they and the cursor move together. */
  addBatches(batches: Omit<PublishBatch, "proof" | "done">[], cursor: string | null): void {
    const insert = this.db.prepare("INSERT OR IGNORE INTO batches (input_index, notice, attestations, revocations) VALUES (?, ?, ?, ?)");
    this.db.transaction(() => {
      for (const b of batches) insert.run(b.inputIndex, b.notice, b.attestations, b.revocations);
      if (cursor !== null) this.db.prepare("INSERT INTO meta (key, value) VALUES ('cursor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(cursor);
    })();
  }

  /** Batches the registry does not hold yet, oldest input first. */
  open(): PublishBatch[] {
    return this.db.prepare<[], BatchRow>("SELECT * FROM batches WHERE done = 0 ORDER BY input_index").all().map(batchOf);
  }

  /** What the batches of these inputs carry (what a mined transaction recorded). */
  carried(inputs: readonly number[]): { attestations: number; revocations: number; batches: number } {
    const row = this.db
      .prepare<[string], { attestations: number | null; revocations: number | null; n: number }>(
        "SELECT SUM(attestations) AS attestations, SUM(revocations) AS revocations, COUNT(*) AS n FROM batches WHERE input_index IN (SELECT value FROM json_each(?))",
      )
      .get(JSON.stringify(inputs));
    return { attestations: row?.attestations ?? 0, revocations: row?.revocations ?? 0, batches: row?.n ?? 0 };
  }

  setProof(inputIndex: number, proof: string): void {
    this.db.prepare("UPDATE batches SET proof = ? WHERE input_index = ?").run(proof, inputIndex);
  }

  markDone(inputs: readonly number[]): void {
    const update = this.db.prepare("UPDATE batches SET done = 1 WHERE input_index = ?");
    this.db.transaction(() => {
      for (const input of inputs) update.run(input);
    })();
  }

  /**
   * Attestations and revocations the registry holds through this publisher's state (`published`), those in
   * notices still waiting for their epoch's claim (`waitingForProof`) and those proven and ready to send.
   */
  counts(): { pending: Record<ItemKind, number>; waitingForProof: Record<ItemKind, number>; ready: Record<ItemKind, number>; published: Record<ItemKind, number>; batches: { pending: number; published: number } } {
    const rows = this.db
      .prepare<[], { stage: string; attestations: number; revocations: number; n: number }>(
        "SELECT CASE WHEN done = 1 THEN 'published' WHEN proof IS NULL THEN 'proof' ELSE 'ready' END AS stage, SUM(attestations) AS attestations, SUM(revocations) AS revocations, COUNT(*) AS n FROM batches GROUP BY stage",
      )
      .all();
    const of = (stage: string): Record<ItemKind, number> => {
      const row = rows.find((r) => r.stage === stage);
      return { attestation: row?.attestations ?? 0, revocation: row?.revocations ?? 0 };
    };
    const waitingForProof = of("proof");
    const ready = of("ready");
    const count = (stage: string): number => rows.find((r) => r.stage === stage)?.n ?? 0;
    return {
      pending: { attestation: waitingForProof.attestation + ready.attestation, revocation: waitingForProof.revocation + ready.revocation },
      waitingForProof,
      ready,
      published: of("published"),
      batches: { pending: count("proof") + count("ready"), published: count("published") },
    };
  }

  /** Keeps a signed transaction before it is broadcast. */
  addTx(tx: SentTx): void {
    this.db
      .prepare("INSERT INTO txs (hash, raw, nonce, inputs, gas_limit, sent_at, state) VALUES (?, ?, ?, ?, ?, ?, 'sent')")
      .run(tx.hash, tx.raw, tx.nonce, JSON.stringify(tx.inputs), tx.gasLimit, tx.sentAt);
  }

  /** Signed transactions without a receipt yet (a restart finds them here). */
  inFlight(): SentTx[] {
    return this.db.prepare<[], TxRow>("SELECT * FROM txs WHERE state = 'sent' ORDER BY nonce").all().map(sent);
  }

  settleTx(hash: Hex, state: "mined" | "failed", gasUsed: number): void {
    this.db.prepare("UPDATE txs SET state = ?, gas_used = ? WHERE hash = ?").run(state, gasUsed, hash);
  }

  /** Gas of the last hour: what mined transactions used, and the limit of those still in flight. */
  gasSince(sinceMs: number): number {
    const row = this.db
      .prepare<[number], { gas: number | null }>("SELECT SUM(CASE WHEN state = 'sent' THEN gas_limit ELSE COALESCE(gas_used, 0) END) AS gas FROM txs WHERE sent_at >= ?")
      .get(sinceMs);
    return row?.gas ?? 0;
  }

  gasSpent(): number {
    return this.db.prepare<[], { gas: number | null }>("SELECT SUM(gas_used) AS gas FROM txs WHERE state IN ('mined', 'failed')").get()?.gas ?? 0;
  }

  /** When the oldest transaction of the window started: the budget frees up an hour after it. */
  oldestSince(sinceMs: number): number | undefined {
    return this.db.prepare<[number], { at: number | null }>("SELECT MIN(sent_at) AS at FROM txs WHERE sent_at >= ?").get(sinceMs)?.at ?? undefined;
  }
}
