/**
 * The indexer's configuration (`npm run index`, a piece of `npm start`; docs/index.md): read from the
 * environment and validated once at start; a bad value stops it with the variable named. Everything has a
 * default on the local stack: its node and chain, and PGlite under DATA_DIR when no DATABASE_URL is given.
 */
import type { Address } from "viem";
import { z } from "zod";
import { configAddressSchema, portSchema } from "../../common/env.ts";
import { LOCAL_ADDRESSES, presentEnv, rollupEndpoints, rollupEnvShape, type RollupEndpoints } from "../config.ts";
import { DEFAULT_INDEX_PORT, indexLocationOf, indexLocationShape, type IndexLocation } from "./location.ts";

const envSchema = z.object({
  ...rollupEnvShape,
  ...indexLocationShape,
  INPUTBOX_ADDRESS: configAddressSchema.optional(),
  INDEX_PORT: portSchema.default(DEFAULT_INDEX_PORT),
  INDEX_HOST: z.string().min(1).default("127.0.0.1"),
  /** How often the indexer asks the node for new notices when it has caught up. */
  INDEX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  /** Notices asked per page. */
  INDEX_PAGE_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
});

export interface IndexerConfig extends RollupEndpoints {
  inputBoxAddress: Address;
  location: IndexLocation;
  readTimeoutMs: number;
  port: number;
  host: string;
  pollMs: number;
  pageSize: number;
}

export class IndexConfigError extends Error {
  override readonly name = "IndexConfigError";
}

export function loadIndexerConfig(env: NodeJS.ProcessEnv): IndexerConfig {
  const parsed = envSchema.safeParse(presentEnv(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IndexConfigError(`invalid indexer configuration: ${String(issue?.path[0] ?? "environment")}: ${issue?.message ?? "invalid"}`);
  }
  const e = parsed.data;
  return {
    ...rollupEndpoints(e),
    inputBoxAddress: (e.INPUTBOX_ADDRESS ?? LOCAL_ADDRESSES[e.ROLLUPS].inputBox) as Address,
    location: indexLocationOf(e),
    readTimeoutMs: e.INDEX_READ_TIMEOUT_MS,
    port: e.INDEX_PORT,
    host: e.INDEX_HOST,
    pollMs: e.INDEX_POLL_MS,
    pageSize: e.INDEX_PAGE_SIZE,
  };
}
