/**
 * Opens the index (docs/index.md): PostgreSQL in process (PGlite, a directory under DATA_DIR) by default, or
 * a PostgreSQL server given a `postgres://` URL; the same tables and migrations (`migrations/index/`) either
 * way, through drizzle. Readers get a statement timeout, so no query holds the database longer than it.
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import pg from "pg";
import { INDEX_CHANGED, type IndexLocation } from "./location.ts";
import { indexTables } from "./schema.ts";

export type { IndexLocation };

/** The installed PGlite's package.json (its exports hide it from import): a template is per version. */
function pgliteVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.resolve("@electric-sql/pglite"))); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (name === "@electric-sql/pglite") return version ?? "";
    }
  }
  return "";
}

export type IndexDb = PgDatabase<PgQueryResultHKT, typeof indexTables>;

export const INDEX_MIGRATIONS = resolve(fileURLToPath(new URL("../../migrations/index", import.meta.url)));

export interface OpenIndex {
  db: IndexDb;
  location: IndexLocation;
  /**
   * Runs `read` with the reads' statement timeout: a query past it fails with PostgreSQL's own
   * "canceling statement due to statement timeout" and holds nothing.
   */
  read<T>(read: (db: IndexDb) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Apply the migrations (the indexer does; the api's readers leave that to it). */
  migrate: boolean;
  /** Statement timeout of reads, ms. */
  readTimeoutMs: number;
  /** Most connections a PostgreSQL pool opens. */
  poolSize?: number;
}

/**
 * Makes a new PGlite directory from a migrated template kept in the system's temporary directory (one per
 * PGlite version and migrations): PGlite's initdb costs seconds of CPU, a copy milliseconds. The template is
 * made once, in a directory of its own, and renamed into place whole.
 */
async function newCluster(dir: string): Promise<void> {
  if (existsSync(join(dir, "PG_VERSION"))) return;
  const migrations = readFileSync(join(INDEX_MIGRATIONS, "meta", "_journal.json"));
  const key = createHash("sha256").update(pgliteVersion()).update(migrations).digest("hex").slice(0, 16);
  const template = join(tmpdir(), `attestation-index-pglite-${key}`);
  if (!existsSync(join(template, "PG_VERSION"))) {
    const making = mkdtempSync(`${template}-making-`);
    const client = await PGlite.create(making);
    await migratePglite(drizzlePglite(client), { migrationsFolder: INDEX_MIGRATIONS });
    await client.close();
    try {
      renameSync(making, template);
    } catch {
      // Another process made it first: theirs is as good.
      rmSync(making, { recursive: true, force: true });
    }
  }
  mkdirSync(dirname(dir), { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  cpSync(template, dir, { recursive: true });
}

export async function openIndex(location: IndexLocation, options: OpenOptions): Promise<OpenIndex> {
  if (location.kind === "pglite") {
    // "memory://" is PGlite's in-memory database (the tests'): there is no directory to make.
    if (!location.dir.startsWith("memory://")) await newCluster(location.dir);
    const client = await PGlite.create(location.dir);
    const db = drizzlePglite(client, { schema: indexTables }) as unknown as IndexDb;
    if (options.migrate) await migratePglite(drizzlePglite(client), { migrationsFolder: INDEX_MIGRATIONS });
    return {
      db,
      location,
      // One connection in process: the timeout is set for the read's own transaction only.
      read: (read) =>
        db.transaction(async (tx) => {
          await tx.execute(sql.raw(`SET LOCAL statement_timeout = ${Math.trunc(options.readTimeoutMs)}`));
          return read(tx as unknown as IndexDb);
        }),
      close: () => client.close(),
    };
  }
  const schema = location.schema;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
  const pool = new pg.Pool({ connectionString: location.url, max: options.poolSize ?? 10, options: `-c search_path=${schema}` });
  // An idle connection the server drops is the pool's to replace, never the process's to die of.
  pool.on("error", () => undefined);
  const db = drizzlePg(pool, { schema: indexTables }) as unknown as IndexDb;
  if (options.migrate) {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await migratePg(drizzlePg(pool), { migrationsFolder: INDEX_MIGRATIONS, migrationsSchema: `${schema}_drizzle` });
  }
  const readPool = new pg.Pool({
    connectionString: location.url,
    max: options.poolSize ?? 10,
    options: `-c search_path=${schema} -c statement_timeout=${Math.trunc(options.readTimeoutMs)} -c default_transaction_read_only=on`,
  });
  readPool.on("error", () => undefined);
  const readDb = drizzlePg(readPool, { schema: indexTables }) as unknown as IndexDb;
  return {
    db,
    location,
    read: (read) => read(readDb),
    close: async () => {
      await Promise.all([pool.end(), readPool.end()]);
    },
  };
}

/**
 * The version of a PostgreSQL index as an api that reads it itself knows it (api/graphql/answers.ts): a
 * count of the indexer's commits it has heard of (LISTEN on the channel `announceChange` notifies). While
 * its connection is down the version is unknown (no answer is kept), and on reconnecting it moves on,
 * since anything may have changed meanwhile.
 */
export function changeListener(location: Extract<IndexLocation, { kind: "postgres" }>, retryMs = 1_000): { version: () => string | undefined; close: () => Promise<void> } {
  let heard = 0;
  let connected = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = (): void => {
    const next = new pg.Client({ connectionString: location.url });
    client = next;
    const lost = (): void => {
      if (client !== next) return;
      connected = false;
      client = undefined;
      next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(connect, retryMs);
    };
    next.on("error", lost);
    next.on("end", lost);
    next.on("notification", (message) => {
      if (message.channel === INDEX_CHANGED && message.payload === location.schema) heard += 1;
    });
    next
      .connect()
      .then(() => next.query(`LISTEN ${INDEX_CHANGED}`))
      .then(() => {
        if (client !== next) return;
        heard += 1;
        connected = true;
      }, lost);
  };
  connect();
  return {
    version: () => (connected ? String(heard) : undefined),
    close: async () => {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const open = client;
      client = undefined;
      connected = false;
      await open?.end().catch(() => undefined);
    },
  };
}
