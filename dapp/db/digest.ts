/**
 * A digest of the database's contents: sha256 over every table's rows in primary-key order, each
 * value tagged with its SQLite type. Two databases that applied the same inputs digest the same.
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";

/** Tables that are bookkeeping, not state: drizzle's migration log and the dapp's input counter. */
const BOOKKEEPING = new Set(["__drizzle_migrations", "meta"]);

export interface DigestOptions {
  /** Include the `meta` bookkeeping row (last input, counters). Default true. */
  includeMeta?: boolean;
}

export interface TableDigest {
  table: string;
  rows: number;
  sha256: string;
}

export function tableDigests(sqlite: Database.Database, options: DigestOptions = {}): TableDigest[] {
  const includeMeta = options.includeMeta ?? true;
  const tables = sqlite
    .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
    .pluck()
    .all() as string[];
  const out: TableDigest[] = [];
  for (const table of tables) {
    if (BOOKKEEPING.has(table) && !(includeMeta && table === "meta")) continue;
    const columns = sqlite.prepare(`pragma table_info(${quote(table)})`).all() as { name: string; pk: number }[];
    const keys = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => quote(c.name));
    const order = keys.length > 0 ? keys.join(", ") : "rowid";
    const hash = createHash("sha256");
    let rows = 0;
    for (const row of sqlite.prepare(`select * from ${quote(table)} order by ${order}`).raw().iterate()) {
      hash.update(encodeRow(row as unknown[]));
      rows++;
    }
    out.push({ table, rows, sha256: hash.digest("hex") });
  }
  return out;
}

/** One hex sha256 over all tables (by name), for "these two databases hold the same state". */
export function databaseDigest(sqlite: Database.Database, options: DigestOptions = {}): string {
  const hash = createHash("sha256");
  for (const t of tableDigests(sqlite, options)) hash.update(`${t.table}:${t.rows}:${t.sha256}\n`);
  return hash.digest("hex");
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function encodeRow(row: unknown[]): string {
  return `${row.map(encodeValue).join("|")}\n`;
}

function encodeValue(value: unknown): string {
  if (value === null) return "n";
  if (typeof value === "number" || typeof value === "bigint") return `i${String(value)}`;
  if (typeof value === "string") return `s${JSON.stringify(value)}`;
  if (Buffer.isBuffer(value)) return `b${value.toString("hex")}`;
  throw new TypeError(`unexpected SQLite value of type ${typeof value}`);
}
