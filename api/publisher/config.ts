/**
 * The publisher's configuration (`npm run publish`, `npm start -- --publish`): read from the environment and
 * validated once at start; a bad value stops it with the variable named. On the local stack everything has a
 * default (its node, chain, contracts and the publisher's own wallet, hardhat account #17).
 */
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { configAddressSchema, portSchema } from "../../common/env.ts";
import { presentEnv, rollupEndpoints, rollupEnvShape, type RollupEndpoints } from "../config.ts";

/** Hardhat account #17: the publisher's own wallet on the local stack (nothing else there sends from it). */
export const LOCAL_PUBLISHER_KEY: Hex = "0x689af8efa8c651a91ad287602527f3af2fe9f6501a7ac4b061667b5a93e037fd";

/** How often the publisher looks for new notices and proofs, unless PUBLISH_POLL_MS says otherwise. */
export const DEFAULT_PUBLISH_POLL_MS = 500;

const envSchema = z.object({
  ...rollupEnvShape,
  REGISTRY_ADDRESS: configAddressSchema,
  GATE_ADDRESS: configAddressSchema,
  PUBLISHER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key").default(LOCAL_PUBLISHER_KEY),
  PUBLISH_BATCH_MAX: z.coerce.number().int().min(1).max(256).default(32),
  PUBLISH_GAS_PER_HOUR: z.coerce.number().int().min(100_000).default(100_000_000),
  // EIP-7825's per-transaction cap (2^24), which hardhat enforces and Ethereum adopted.
  PUBLISH_TX_GAS_MAX: z.coerce.number().int().min(100_000).max(1_000_000_000).default(16_777_216),
  PUBLISH_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(DEFAULT_PUBLISH_POLL_MS),
  PUBLISHER_PORT: portSchema.default(8005),
  PUBLISHER_HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default(".data"),
});

export interface PublisherConfig extends RollupEndpoints {
  contracts: { registry: Address; gate: Address };
  privateKey: Hex;
  wallet: Address;
  batchMax: number;
  gasPerHour: number;
  txGasMax: number;
  pollMs: number;
  port: number;
  host: string;
  statePath: string;
}

export class PublisherConfigError extends Error {
  override readonly name = "PublisherConfigError";
}

export function loadPublisherConfig(env: NodeJS.ProcessEnv): PublisherConfig {
  const parsed = envSchema.safeParse(presentEnv(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    const hint = variable === "REGISTRY_ADDRESS" || variable === "GATE_ADDRESS" ? " (npm start prints them; npm run deploy-contracts deploys them)" : "";
    throw new PublisherConfigError(`invalid publisher configuration: ${variable}: ${issue?.message ?? "invalid"}${hint}`);
  }
  const e = parsed.data;
  return {
    ...rollupEndpoints(e),
    contracts: { registry: e.REGISTRY_ADDRESS as Address, gate: e.GATE_ADDRESS as Address },
    privateKey: e.PUBLISHER_PRIVATE_KEY as Hex,
    wallet: privateKeyToAccount(e.PUBLISHER_PRIVATE_KEY as Hex).address,
    batchMax: e.PUBLISH_BATCH_MAX,
    gasPerHour: e.PUBLISH_GAS_PER_HOUR,
    txGasMax: e.PUBLISH_TX_GAS_MAX,
    pollMs: e.PUBLISH_POLL_MS,
    port: e.PUBLISHER_PORT,
    host: e.PUBLISHER_HOST,
    // Not publisher.sqlite: that held the per-notice state of the registry before issue 44, which this one does not read.
    statePath: join(e.DATA_DIR, "publisher-batches.sqlite"),
  };
}
