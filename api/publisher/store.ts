/**
 * What the publisher remembers across restarts (SQLite, DATA_DIR/publisher.sqlite): where it is in the
 * notice feed, every attestation and revocation notice it has seen with its proof once claimed and whether
 * each target (the registry, the gate) has it, every transaction it signed (its raw bytes, kept before it
 * is broadcast, so a restart sends the same transaction again rather than a second one), and the gas of the
 * last hour (the budget).
 */
import Database from "better-sqlite3";
import type { Hex } from "viem";

export type ItemKind = "attestation" | "revocation";
export type Target = "registry" | "gate";

export interface PublishItem {
  uid: Hex;
  kind: ItemKind;
  inputIndex: number;
  /** The notice's JSON text, from which the contracts' fields are parsed. */
  notice: string;
  /** The proof as JSON (the node's shape for the version), null until its epoch is claimed. */
  proof: string | null;
  /** Why it can never be published (its notice cannot be rebuilt on chain), or null. */
  unpublishable: string | null;
  registryDone: boolean;
  gateDone: boolean;
}

export interface SentTx {
  hash: Hex;
  raw: Hex;
  nonce: number;
  target: Target;
  kind: ItemKind;
  uids: Hex[];
  gasLimit: number;
  sentAt: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  uid TEXT NOT NULL, kind TEXT NOT NULL, input_index INTEGER NOT NULL, notice TEXT NOT NULL, proof TEXT,
  unpublishable TEXT, registry_done INTEGER NOT NULL DEFAULT 0, gate_done INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (uid, kind));
CREATE INDEX IF NOT EXISTS items_open ON items (registry_done, gate_done, input_index);
CREATE TABLE IF NOT EXISTS txs (
  hash TEXT PRIMARY KEY, raw TEXT NOT NULL, nonce INTEGER NOT NULL, target TEXT NOT NULL, kind TEXT NOT NULL,
  uids TEXT NOT NULL, gas_limit INTEGER NOT NULL, sent_at INTEGER NOT NULL, state TEXT NOT NULL, gas_used INTEGER);
`;

interface ItemRow {
  uid: string;
  kind: string;
  input_index: number;
  notice: string;
  proof: string | null;
  unpublishable: string | null;
  registry_done: number;
  gate_done: number;
}

interface TxRow {
  hash: string;
  raw: string;
  nonce: number;
  target: string;
  kind: string;
  uids: string;
  gas_limit: number;
  sent_at: number;
}

function item(row: ItemRow): PublishItem {
  return {
    uid: row.uid as Hex,
    kind: row.kind as ItemKind,
    inputIndex: row.input_index,
    notice: row.notice,
    proof: row.proof,
    unpublishable: row.unpublishable,
    registryDone: row.registry_done === 1,
    gateDone: row.gate_done === 1,
  };
}

function sent(row: TxRow): SentTx {
  return { hash: row.hash as Hex, raw: row.raw as Hex, nonce: row.nonce, target: row.target as Target, kind: row.kind as ItemKind, uids: JSON.parse(row.uids) as Hex[], gasLimit: row.gas_limit, sentAt: row.sent_at };
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

  /** The state belongs to one application's registry and gate; another needs another DATA_DIR. */
  claimOwner(owner: string): string | undefined {
    const row = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'owner'").get();
    if (row === undefined) this.db.prepare("INSERT INTO meta (key, value) VALUES ('owner', ?)").run(owner);
    return row?.value;
  }

  get cursor(): string | null {
    return this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'cursor'").get()?.value ?? null;
  }

  /** Notices read up to `cursor`: their items and the cursor move together. */
  addNotices(items: Omit<PublishItem, "proof" | "registryDone" | "gateDone">[], cursor: string | null): void {
    const insert = this.db.prepare("INSERT OR IGNORE INTO items (uid, kind, input_index, notice, unpublishable) VALUES (?, ?, ?, ?, ?)");
    this.db.transaction(() => {
      for (const i of items) insert.run(i.uid, i.kind, i.inputIndex, i.notice, i.unpublishable);
      if (cursor !== null) this.db.prepare("INSERT INTO meta (key, value) VALUES ('cursor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(cursor);
    })();
  }

  /** Items some target still lacks, oldest input first: revocations and attestations alike. */
  open(): PublishItem[] {
    return this.db
      .prepare<[], ItemRow>("SELECT * FROM items WHERE unpublishable IS NULL AND (registry_done = 0 OR gate_done = 0) ORDER BY input_index, kind")
      .all()
      .map(item);
  }

  setProof(uid: Hex, kind: ItemKind, proof: string): void {
    this.db.prepare("UPDATE items SET proof = ? WHERE uid = ? AND kind = ?").run(proof, uid, kind);
  }

  markDone(target: Target, kind: ItemKind, uids: readonly Hex[]): void {
    const column = target === "registry" ? "registry_done" : "gate_done";
    const update = this.db.prepare(`UPDATE items SET ${column} = 1 WHERE uid = ? AND kind = ?`);
    this.db.transaction(() => {
      for (const uid of uids) update.run(uid, kind);
    })();
  }

  counts(): { pending: Record<ItemKind, number>; published: Record<ItemKind, number>; unpublishable: number } {
    const rows = this.db
      .prepare<[], { kind: string; open: number; done: number }>(
        "SELECT kind, SUM(CASE WHEN unpublishable IS NULL AND (registry_done = 0 OR gate_done = 0) THEN 1 ELSE 0 END) AS open, SUM(registry_done * gate_done) AS done FROM items GROUP BY kind",
      )
      .all();
    const pending: Record<ItemKind, number> = { attestation: 0, revocation: 0 };
    const published: Record<ItemKind, number> = { attestation: 0, revocation: 0 };
    for (const r of rows) {
      pending[r.kind as ItemKind] = r.open;
      published[r.kind as ItemKind] = r.done;
    }
    const unpublishable = this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM items WHERE unpublishable IS NOT NULL").get()?.n ?? 0;
    return { pending, published, unpublishable };
  }

  /** Keeps a signed transaction before it is broadcast. */
  addTx(tx: SentTx): void {
    this.db
      .prepare("INSERT INTO txs (hash, raw, nonce, target, kind, uids, gas_limit, sent_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'sent')")
      .run(tx.hash, tx.raw, tx.nonce, tx.target, tx.kind, JSON.stringify(tx.uids), tx.gasLimit, tx.sentAt);
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
