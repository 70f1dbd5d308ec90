import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import * as schema from "./schema.ts";

export type DappDatabase = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** The migrations folder of the source tree (tests, scripts); main.ts resolves its own so a bundle finds them too. */
export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

export interface OpenDatabaseOptions {
  /** A file path, or ":memory:" for tests. */
  path: string;
  migrationsFolder?: string;
}

/** Opens the database, applies the pending migrations and returns the drizzle handle (the raw one is `$client`). */
export function openDatabase(options: OpenDatabaseOptions): DappDatabase {
  const sqlite = new Database(options.path);
  sqlite.pragma("journal_mode = WAL");
  // WAL + NORMAL stays consistent after a crash; only the last commits may be lost, and the
  // rollup re-sends an input whose /finish it did not receive.
  sqlite.pragma("synchronous = NORMAL");
  // Checkpoints are where WAL mode fsyncs; at the default 1,000 pages they halved the advance
  // throughput. 10,000 pages bounds the WAL file near 40 MiB on disk (not in memory).
  sqlite.pragma("wal_autocheckpoint = 10000");
  sqlite.pragma("foreign_keys = ON");
  const db = drizzle(sqlite, { schema });
  migrate(db, { migrationsFolder: options.migrationsFolder ?? DEFAULT_MIGRATIONS_DIR });
  return db;
}
