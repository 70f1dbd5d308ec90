import path from "node:path";
import type { Address } from "viem";
import { z } from "zod";
import { addressSchema } from "../common/address.ts";

export interface DappConfig {
  rollupUrl: string;
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
  ROLLUP_HTTP_SERVER_URL: z.url({ protocol: /^https?$/ }).default("http://127.0.0.1:5004"),
  DAPP_ADMINS: adminList.default([]),
  DATA_DIR: z.string().min(1).default(".data"),
  DAPP_DB_PATH: z.string().min(1).optional(),
  DAPP_MIGRATIONS_DIR: z.string().min(1).optional(),
  DAPP_CHAIN_ID: z.coerce.number().int().positive().optional(),
  DAPP_ADDRESS: addressSchema.optional(),
});

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
    rollupUrl: c.ROLLUP_HTTP_SERVER_URL,
    admins: [...new Set(c.DAPP_ADMINS)],
    dbPath: c.DAPP_DB_PATH ?? path.join(c.DATA_DIR, "dapp.sqlite"),
    migrationsDir: c.DAPP_MIGRATIONS_DIR,
    application: c.DAPP_CHAIN_ID === undefined || c.DAPP_ADDRESS === undefined ? undefined : { chainId: c.DAPP_CHAIN_ID, address: c.DAPP_ADDRESS },
  };
}
