/**
 * The devnode's configuration (DECISIONS.md section 10): read from the environment and the command line
 * once at start and validated with zod; a bad value stops the start with a message naming the variable.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Address, Hex } from "viem";
import { DEV_MNEMONIC, hardhatPrivateKey } from "./hardhat-keys.ts";
import { z } from "zod";
import { configAddressSchema, flagSchema, portSchema } from "../common/env.ts";
import { DEFAULT_LOG_LABEL, LOG_FORMATS, type LogFormat } from "./log.ts";

export const ROLLUPS_VERSIONS = ["v1", "v2"] as const;
export type RollupsVersion = (typeof ROLLUPS_VERSIONS)[number];

/** Fixed facts of the local stack (docs/devnode.md): the same on every local chain. */
export const DEFAULTS = {
  chainId: 31337,
  chainPort: 8545,
  nodePort: 10000,
  rollupHttpPort: 5004,
  apiPort: 8001,
  dataDir: ".data",
  /** Canonical address of the Cartesi Rollups v1 InputBox. */
  inputBoxAddress: "0x59b22D57D4f067708AB0c00552767405926dc768" as Address,
  dappAddress: "0xab7528bb862fB57E8A2BCd567a2e929a0Be56a5e" as Address,
  /** Hardhat account #0: the api's wallet and the dapp's initial admin. */
  privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  adminAddress: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as Address,
  /** The mnemonic hardhat derives its funded accounts from; `--sender N` picks account N. */
  mnemonic: DEV_MNEMONIC,
  /**
   * The devnode's own wallet (hardhat account #19, which nothing else in the stack or its tests uses): it
   * deploys the v1 application contracts and owns the Authority that claims epochs. A separate account keeps
   * its claims out of the api's nonce sequence.
   */
  claimerAccountIndex: 19,
  /** Hardhat account #20 upward (the local chain funds 30): member k of a Quorum (`--quorum N`) is #19 + k. */
  firstQuorumMemberAccount: 20,
  /** How often an epoch closes when inputs were processed since the last one. */
  epochIntervalMs: 5_000,
} as const;

/**
 * Where a v2 devnode puts the contracts on a fresh local chain (v2/application.ts): the InputBox at its
 * canonical (CREATE2) address of Rollups 2.2.0, the one @cartesi/viem sends inputs to; the Authority and
 * the Application deployed by the claimer (hardhat account #19) as its first two transactions, so at the
 * same addresses every time. Kept here, beside v1's, because the configuration's defaults follow ROLLUPS
 * and the configuration imports no version.
 */
export const V2_DEFAULTS = {
  inputBoxAddress: "0x1b51e2992A2755Ba4D6F7094032DF91991a0Cfac" as Address,
  authorityAddress: "0x73511669fd4dE447feD18BB79bAFeAC93aB7F31f" as Address,
  applicationAddress: "0xB581C9264f59BF0289fA76D61B2D0746dCE3C30D" as Address,
  /** One block per epoch: an epoch closes as soon as its block is mined, with no empty blocks to wait for. */
  epochLength: 1,
  /** How the node's JSON-RPC and inspect name the application besides its address. */
  applicationName: "attestation",
} as const;

const port = portSchema;
const positiveMs = z.coerce.number().int().positive();
const address = configAddressSchema;
const flag = flagSchema;
const logFormat = z.enum(LOG_FORMATS).default("plain");
const logLabel = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "expected 1 to 32 of a-z, 0-9 and -, not starting with - (a name such as member-2)")
  .default(DEFAULT_LOG_LABEL);

const envSchema = z.object({
  RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * The chain's WebSocket, to have new blocks pushed (eth_subscribe newHeads) instead of waiting for the
   * next poll; `off` polls only. Default: the managed chain's (hardhat serves it on its HTTP port); none
   * for an external chain unless given.
   */
  WS_RPC_URL: z.union([z.literal("off"), z.url({ protocol: /^wss?$/ })]).optional(),
  CHAIN_PORT: port.default(DEFAULTS.chainPort),
  /**
   * `managed`: a local hardhat chain the devnode may change (hardhat_setCode, re-submitting recorded inputs);
   * `external`: any other chain, where the InputBox must already be deployed and nothing is rewritten.
   */
  DEVNODE_CHAIN: z.enum(["managed", "external"]).optional(),
  NODE_PORT: port.default(DEFAULTS.nodePort),
  NODE_HOST: z.string().min(1).default("127.0.0.1"),
  ROLLUP_HTTP_PORT: port.default(DEFAULTS.rollupHttpPort),
  ROLLUP_HTTP_HOST: z.string().min(1).default("127.0.0.1"),
  /**
   * Which Cartesi Rollups the node stands in for: `v1` (GraphQL, v1 proofs) or `v2` (the v2 contracts,
   * JSON-RPC, outputs Merkle roots claimed through the v2 Authority). The addresses' defaults follow it.
   */
  ROLLUPS: z.enum(ROLLUPS_VERSIONS).default("v1"),
  INPUTBOX_ADDRESS: address.optional(),
  DAPP_ADDRESS: address.optional(),
  /** v2: blocks per epoch of the Authority the devnode deploys (an external chain's Authority says its own). */
  EPOCH_LENGTH: z.coerce.number().int().positive().max(1_000_000).default(V2_DEFAULTS.epochLength),
  /** v2: the application's name in JSON-RPC and inspect URLs (the node's rule: 3+ of a-z 0-9 _ -). */
  APPLICATION_NAME: z
    .string()
    .regex(/^[a-z0-9_-]{3,}$/, "expected 3 or more of a-z, 0-9, _ and -")
    .default(V2_DEFAULTS.applicationName),
  /** First block to scan for inputs (the InputBox deployment block on a long external chain). */
  INPUTBOX_BLOCK: z.coerce.number().int().min(0).default(0),
  DATA_DIR: z.string().min(1).default(DEFAULTS.dataDir),
  // How long a new input may wait on the chain before the devnode sees it: the largest share of a claim's
  // latency at 100 ms (npm run bench). 25 ms costs a local hardhat node ~7% of a core instead of ~3%.
  POLL_INTERVAL_MS: positiveMs.default(25),
  FINISH_TIMEOUT_MS: positiveMs.default(10_000),
  DAPP_WAIT_MS: positiveMs.default(3_000),
  INSPECT_TIMEOUT_MS: positiveMs.default(30_000),
  DEVNODE_RESET: flag.default(false),
  /** 0 closes epochs only on demand (POST /epoch/close, npm run epoch). */
  EPOCH_INTERVAL_MS: z.coerce.number().int().min(0).default(DEFAULTS.epochIntervalMs),
  /**
   * `claimer`: closes epochs and claims them (the default). `validator`: follows a chain someone else
   * claims on, claims nothing, and checks every claim against its own dapp (devnode/validator.ts).
   * `member`: a validator that also votes, with CLAIMER_PRIVATE_KEY, as a member of the application's
   * Quorum, for the outputs roots its own dapp computed (docs/quorum.md).
   */
  DEVNODE_ROLE: z.enum(["claimer", "validator", "member"]).default("claimer"),
  /**
   * v2, managed chain: the application is deployed under Cartesi's Quorum of these members (comma-separated
   * addresses) instead of the claimer's Authority. Its claimer then claims nothing: members vote.
   */
  QUORUM_MEMBERS: z
    .string()
    .transform((text, ctx) => {
      const members = text.split(",").map((m) => m.trim());
      for (const m of members) {
        if (!/^0x[0-9a-fA-F]{40}$/.test(m)) {
          ctx.addIssue({ code: "custom", message: `expected comma-separated 0x addresses, got "${m}"` });
          return z.NEVER;
        }
      }
      if (new Set(members.map((m) => m.toLowerCase())).size !== members.length) {
        ctx.addIssue({ code: "custom", message: "a member is named twice" });
        return z.NEVER;
      }
      return members as Address[];
    })
    .optional(),
  /** `plain` lines for a terminal, or `json` (pino) for a log collector (devnode/log.ts). */
  LOG_FORMAT: logFormat,
  /**
   * The name every log line of this node carries (`[member-2] ...`, or `node` in JSON): which node of a stack
   * said it. The stack names its node `devnode` and each reader after its piece, a Quorum member `member-k`.
   */
  DEVNODE_LOG_LABEL: logLabel,
  /** How often a validator looks for new claims. */
  VALIDATOR_INTERVAL_MS: positiveMs.default(1_000),
  /** A reader (a validator serving reads) is stale once its last successful read of the chain is older (devnode/reader.ts). */
  READER_STALE_MS: positiveMs.default(5_000),
  /** The dapp's database, which a snapshot backs up and installs: the dapp's own default (dapp/config.ts). */
  DAPP_DB_PATH: z.string().min(1).optional(),
  /** A validator starts from this snapshot's folder instead of from genesis (devnode/snapshot-install.ts). */
  DEVNODE_SNAPSHOT: z.string().min(1).optional(),
  /** devnode/v1/epoch-hasher-worker.ts compiled (toolkit/process-build.ts): the epoch hasher's worker starts without tsx. */
  EPOCH_HASHER_MODULE: z
    .string()
    .min(1)
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined && !existsSync(value)) ctx.addIssue({ code: "custom", message: `no such file: ${value}` });
    }),
  CLAIMER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key")
    .optional(),
});

export interface DevnodeConfig {
  rpcUrl: string;
  /** Where new blocks are pushed from, or undefined to poll only. */
  wsRpcUrl: string | undefined;
  chainMode: "managed" | "external";
  nodePort: number;
  nodeHost: string;
  rollupHttpPort: number;
  rollupHttpHost: string;
  rollups: RollupsVersion;
  inputBoxAddress: Address;
  dappAddress: Address;
  inputBoxBlock: number;
  /** v2 only. */
  epochLength: number;
  applicationName: string;
  dataDir: string;
  databasePath: string;
  pollIntervalMs: number;
  finishTimeoutMs: number;
  dappWaitMs: number;
  inspectTimeoutMs: number;
  reset: boolean;
  epochIntervalMs: number;
  /** Deploys the v1 contracts (managed chain) and submits claims as the Authority's owner. */
  claimerPrivateKey: Hex;
  /** A member is a validator that votes in the Quorum. */
  role: "claimer" | "validator" | "member";
  /** v2: deploy under a Quorum of these members (a managed chain), or undefined for the Authority. */
  quorumMembers: Address[] | undefined;
  validatorIntervalMs: number;
  readerStaleMs: number;
  /** The dapp's database file (DAPP_DB_PATH, default DATA_DIR/dapp.sqlite as the dapp computes it). */
  dappDbPath: string;
  /** The folder of the snapshot a validator starts from (DEVNODE_SNAPSHOT), or undefined. */
  snapshotPath: string | undefined;
  /** The epoch hasher's worker compiled (EPOCH_HASHER_MODULE), or undefined: its source through tsx. */
  epochHasherModule: string | undefined;
}

/**
 * The log's format and label, read before the rest of the configuration so that even a bad configuration is
 * reported as the operator's collector expects. A bad value of either is taken as its default here and named
 * by loadDevnodeConfig, which refuses it.
 */
export function loadLogSettings(env: NodeJS.ProcessEnv): { format: LogFormat; label: string } {
  return { format: logFormat.catch("plain").parse(env.LOG_FORMAT), label: logLabel.catch(DEFAULT_LOG_LABEL).parse(env.DEVNODE_LOG_LABEL) };
}

/** A configuration value that does not validate; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Formats zod issues as `NAME: problem` lines, so a bad value names its variable. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(config)"}: ${issue.message}`).join("; ");
}

export function loadDevnodeConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): DevnodeConfig {
  const unknownFlags = argv.filter((arg) => arg !== "--reset");
  if (unknownFlags.length > 0) throw new ConfigError(`unknown argument: ${unknownFlags.join(" ")} (only --reset)`);
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`invalid devnode configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  const chainMode = e.DEVNODE_CHAIN ?? (e.RPC_URL === undefined ? "managed" : "external");
  // A validator checks someone else's chain: it must never place contracts or re-submit inputs there.
  if (e.DEVNODE_ROLE !== "claimer" && chainMode !== "external") {
    throw new ConfigError(`invalid devnode configuration: DEVNODE_ROLE: a ${e.DEVNODE_ROLE} follows an external chain (set RPC_URL, and DEVNODE_CHAIN=external)`);
  }
  // A member votes with its own key: the claimer's default (hardhat #19) is nobody's member.
  if (e.DEVNODE_ROLE === "member" && (e.ROLLUPS !== "v2" || e.CLAIMER_PRIVATE_KEY === undefined)) {
    throw new ConfigError("invalid devnode configuration: DEVNODE_ROLE: a member votes in a v2 Quorum (ROLLUPS=v2) with its own key (set CLAIMER_PRIVATE_KEY)");
  }
  if (e.QUORUM_MEMBERS !== undefined && (e.ROLLUPS !== "v2" || chainMode !== "managed")) {
    throw new ConfigError("invalid devnode configuration: QUORUM_MEMBERS: a Quorum is deployed by a v2 devnode on the chain it manages (v1 keeps its Authority: docs/quorum.md)");
  }
  // A claimer's record is its own history of the chain it manages; only a reader takes someone else's.
  if (e.DEVNODE_SNAPSHOT !== undefined && e.DEVNODE_ROLE === "claimer") {
    throw new ConfigError("invalid devnode configuration: DEVNODE_SNAPSHOT: only a validator (DEVNODE_ROLE=validator) starts from a snapshot");
  }
  const v2 = e.ROLLUPS === "v2";
  const rpcUrl = e.RPC_URL ?? `http://127.0.0.1:${e.CHAIN_PORT}`;
  return {
    rpcUrl,
    wsRpcUrl: e.WS_RPC_URL === "off" ? undefined : (e.WS_RPC_URL ?? (chainMode === "managed" ? rpcUrl.replace(/^http/, "ws") : undefined)),
    // A chain named by RPC_URL is someone else's unless the stack says it started it.
    chainMode,
    nodePort: e.NODE_PORT,
    nodeHost: e.NODE_HOST,
    rollupHttpPort: e.ROLLUP_HTTP_PORT,
    rollupHttpHost: e.ROLLUP_HTTP_HOST,
    rollups: e.ROLLUPS,
    inputBoxAddress: e.INPUTBOX_ADDRESS ?? (v2 ? V2_DEFAULTS.inputBoxAddress : DEFAULTS.inputBoxAddress),
    dappAddress: e.DAPP_ADDRESS ?? (v2 ? V2_DEFAULTS.applicationAddress : DEFAULTS.dappAddress),
    inputBoxBlock: e.INPUTBOX_BLOCK,
    epochLength: e.EPOCH_LENGTH,
    applicationName: e.APPLICATION_NAME,
    dataDir,
    databasePath: join(dataDir, "devnode.sqlite"),
    pollIntervalMs: e.POLL_INTERVAL_MS,
    finishTimeoutMs: e.FINISH_TIMEOUT_MS,
    dappWaitMs: e.DAPP_WAIT_MS,
    inspectTimeoutMs: e.INSPECT_TIMEOUT_MS,
    reset: e.DEVNODE_RESET || argv.includes("--reset"),
    epochIntervalMs: e.EPOCH_INTERVAL_MS,
    claimerPrivateKey: (e.CLAIMER_PRIVATE_KEY as Hex | undefined) ?? hardhatPrivateKey(DEFAULTS.claimerAccountIndex),
    role: e.DEVNODE_ROLE,
    quorumMembers: e.QUORUM_MEMBERS,
    validatorIntervalMs: e.VALIDATOR_INTERVAL_MS,
    readerStaleMs: e.READER_STALE_MS,
    dappDbPath: resolve(e.DAPP_DB_PATH ?? join(dataDir, "dapp.sqlite")),
    snapshotPath: e.DEVNODE_SNAPSHOT === undefined ? undefined : resolve(e.DEVNODE_SNAPSHOT),
    epochHasherModule: e.EPOCH_HASHER_MODULE === undefined ? undefined : resolve(e.EPOCH_HASHER_MODULE),
  };
}
