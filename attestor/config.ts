// SPDX-License-Identifier: AGPL-3.0-only
/**
 * Configuration of the attestor process, validated once at start. Its signing key is ATTESTOR_PRIVATE_KEY,
 * or a key generated into DATA_DIR/attestor-key on first start and kept, so its address (which admins
 * register in the rollup) survives restarts.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { secretInDataDir } from "../common/data-secret.ts";
import { portSchema } from "../common/env.ts";
import type { KeyShare } from "../common/nullifier.ts";
import { shareFromFile } from "../common/nullifier-dealer.ts";

const KEY_RE = /^0x[0-9a-fA-F]{64}$/;

const envSchema = z.object({
  ATTESTOR_PORT: portSchema.default(8003),
  ATTESTOR_HOST: z.string().min(1).default("127.0.0.1"),
  ATTESTOR_PRIVATE_KEY: z.string().regex(KEY_RE, "expected a 0x-prefixed 32-byte hex private key").optional(),
  ATTESTOR_CA_FILES: z.string().default(""),
  DATA_DIR: z.string().min(1).default(".data"),
  /** The file in DATA_DIR the key is kept in (`npm start -- --attestors N` gives each attestor its own). */
  ATTESTOR_KEY_FILE: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected a file name").default("attestor-key"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("warn"),
  /** This attestor's share of the nullifier key (`npm run nullifier-keys -- deal`): without it, no claim binding a nullifier is signed. */
  NULLIFIER_SHARE_FILE: z.string().min(1).optional(),
});

export interface AttestorConfig {
  port: number;
  host: string;
  privateKey: `0x${string}`;
  caFiles: string;
  logLevel: string;
  /** The nullifier key share, checked against its own commitment; undefined without NULLIFIER_SHARE_FILE. */
  nullifierShare: KeyShare | undefined;
}

export function loadAttestorConfig(env: NodeJS.ProcessEnv = process.env): AttestorConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid configuration: ${String(issue?.path[0] ?? "environment")}: ${issue?.message ?? "invalid"}`);
  }
  const e = parsed.data;
  return {
    port: e.ATTESTOR_PORT,
    host: e.ATTESTOR_HOST,
    privateKey: (e.ATTESTOR_PRIVATE_KEY ?? keyInDataDir(e.DATA_DIR, e.ATTESTOR_KEY_FILE)) as `0x${string}`,
    caFiles: e.ATTESTOR_CA_FILES,
    logLevel: e.LOG_LEVEL,
    nullifierShare: e.NULLIFIER_SHARE_FILE === undefined ? undefined : shareIn(e.NULLIFIER_SHARE_FILE),
  };
}

/** The share a share file holds, or a configuration error naming the file and what is wrong with it. */
function shareIn(file: string): KeyShare {
  try {
    return shareFromFile(JSON.parse(readFileSync(file, "utf8")));
  } catch (error) {
    const why = error instanceof SyntaxError ? "not JSON" : error instanceof Error ? error.message : String(error);
    throw new Error(`invalid configuration: NULLIFIER_SHARE_FILE: ${file}: ${why}`);
  }
}

/** A private key kept in `dataDir/name`, made on first start. */
export function keyInDataDir(dataDir: string, name: string): string {
  const { value: key, file } = secretInDataDir(dataDir, name, () => `0x${randomBytes(32).toString("hex")}`);
  if (!KEY_RE.test(key)) throw new Error(`invalid configuration: ${file} does not hold a 0x-prefixed 32-byte hex key`);
  return key;
}
