/**
 * Where the index is (docs/index.md): PGlite under DATA_DIR by default, or the PostgreSQL server of
 * DATABASE_URL. The variables the indexer (which writes it) and the api (which may read it) share.
 */
import { join } from "node:path";
import { z } from "zod";

/** The indexer's own port: `/graphql`, `/health`, `/ready`, `/metrics`. */
export const DEFAULT_INDEX_PORT = 8002;

/** Where the index lives: a PGlite directory, or a PostgreSQL server (and the PostgreSQL schema its tables go in). */
export type IndexLocation = { kind: "pglite"; dir: string } | { kind: "postgres"; url: string; schema: string };

/** The PGlite directory of a DATA_DIR. */
export function pgliteDir(dataDir: string): string {
  return join(dataDir, "index");
}

const postgresUrl = z.url({ protocol: /^postgres(ql)?$/, error: "expected a postgres:// URL" });

/** The variables that say where the index is: the indexer writes it, the api reads it. */
export const indexLocationShape = {
  /** A PostgreSQL server (postgres://user:password@host:port/database); without it, PGlite under DATA_DIR. */
  DATABASE_URL: postgresUrl.optional(),
  /** The PostgreSQL schema the index's tables live in: one per instance sharing a database. */
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, "expected a lower-case SQL name").default("public"),
  /** Statement timeout of the index's reads, ms: a query past it is cancelled. */
  INDEX_READ_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(2_000),
  DATA_DIR: z.string().min(1).default(".data"),
};

/** Where the index is, from the validated location variables. */
export function indexLocationOf(e: { DATABASE_URL?: string | undefined; DATABASE_SCHEMA: string; DATA_DIR: string }): IndexLocation {
  return e.DATABASE_URL === undefined ? { kind: "pglite", dir: pgliteDir(e.DATA_DIR) } : { kind: "postgres", url: e.DATABASE_URL, schema: e.DATABASE_SCHEMA };
}


/**
 * The channel every commit that changes the index notifies, its payload the index's schema: an api reading
 * the index itself then knows its kept answers are stale (api/graphql/answers.ts, api/index/db.ts).
 */
export const INDEX_CHANGED = "eas_index_changed";
