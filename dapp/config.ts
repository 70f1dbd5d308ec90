import path from "node:path";
import type { Address } from "viem";
import { z } from "zod";
import { addressSchema } from "../common/address.ts";

/**
 * How the dapp reaches the rollup: the rollup HTTP server (machine-guest-tools' server, through
 * @deroll/app: the v1 image and the devnode), or libcmt itself (@cartesi/rollup: the v2 image, where
 * it talks to the machine's device, and on a host its mock driver, which reads inputs from files).
 */
export type DappTransport =
  | { kind: "http"; rollupUrl: string }
  | {
      kind: "libcmt";
      /**
       * DAPP_OUTPUTS_TREE_FILE: where the outputs Merkle tree is loaded from at start and saved after each
       * accepted input, so that host sessions of libcmt's mock (one process per session) carry it on as
       * the machine's memory does. Unset in the machine, whose memory is the tree's home.
       */
      outputsTreeFile: string | undefined;
    };

export interface DappConfig {
  transport: DappTransport;
  admins: Address[];
  dbPath: string;
  migrationsDir: string | undefined;
  /** The chain and application owners' signed consents are bound to under Rollups v1 (v2 inputs say it). */
  application: { chainId: number; address: Address } | undefined;
}

const adminList = z
  .string()
  .transform((text) => text.split(",").map((s) => s.trim()).filter((s) => s.length > 0))
  .pipe(z.array(addressSchema));

const envSchema = z.object({
  DAPP_TRANSPORT: z.enum(["http", "libcmt"], { error: 'expected "http" (the rollup HTTP server) or "libcmt"' }).default("http"),
  ROLLUP_HTTP_SERVER_URL: z.url({ protocol: /^https?$/ }).optional(),
  DAPP_OUTPUTS_TREE_FILE: z.string().min(1).optional(),
  DAPP_ADMINS: adminList.default([]),
  DATA_DIR: z.string().min(1).default(".data"),
  DAPP_DB_PATH: z.string().min(1).optional(),
  DAPP_MIGRATIONS_DIR: z.string().min(1).optional(),
  DAPP_CHAIN_ID: z.coerce.number().int().positive().optional(),
  DAPP_ADDRESS: addressSchema.optional(),
});

const DEFAULT_ROLLUP_URL = "http://127.0.0.1:5004";

/** Reads the dapp's configuration; a bad value throws an Error whose message names the variable. */
export function readConfig(env: NodeJS.ProcessEnv): DappConfig {
  // An empty variable means "unset", as shells and compose files commonly produce.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid dapp configuration: ${lines.join("; ")}`);
  }
  const c = parsed.data;
  if ((c.DAPP_CHAIN_ID === undefined) !== (c.DAPP_ADDRESS === undefined)) {
    throw new Error("invalid dapp configuration: DAPP_CHAIN_ID and DAPP_ADDRESS go together (the domain owners sign consent in)");
  }
  return {
    transport: transportOf(c),
    admins: [...new Set(c.DAPP_ADMINS)],
    dbPath: c.DAPP_DB_PATH ?? path.join(c.DATA_DIR, "dapp.sqlite"),
    migrationsDir: c.DAPP_MIGRATIONS_DIR,
    application: c.DAPP_CHAIN_ID === undefined || c.DAPP_ADDRESS === undefined ? undefined : { chainId: c.DAPP_CHAIN_ID, address: c.DAPP_ADDRESS },
  };
}

/** A setting of the other transport is refused rather than ignored: it says the image was put together wrong. */
function transportOf(c: z.infer<typeof envSchema>): DappTransport {
  if (c.DAPP_TRANSPORT === "http") {
    if (c.DAPP_OUTPUTS_TREE_FILE !== undefined) {
      throw new Error('invalid dapp configuration: DAPP_OUTPUTS_TREE_FILE is for DAPP_TRANSPORT=libcmt (the rollup HTTP server keeps the outputs tree itself)');
    }
    return { kind: "http", rollupUrl: c.ROLLUP_HTTP_SERVER_URL ?? DEFAULT_ROLLUP_URL };
  }
  if (c.ROLLUP_HTTP_SERVER_URL !== undefined) {
    throw new Error("invalid dapp configuration: ROLLUP_HTTP_SERVER_URL is for DAPP_TRANSPORT=http (with libcmt there is no rollup HTTP server)");
  }
  return { kind: "libcmt", outputsTreeFile: c.DAPP_OUTPUTS_TREE_FILE };
}
