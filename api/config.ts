/**
 * The api's configuration (DECISIONS.md section 10): read from the environment and validated once at
 * start; a bad value stops the start with a message naming the variable.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { secretInDataDir } from "../common/data-secret.ts";
import { configAddressSchema, flagSchema, httpUrlSchema, portSchema } from "../common/env.ts";
import { PROOF_MODES } from "../common/tls-claim.ts";
import { DEFAULT_INDEX_PORT, indexLocationShape, type IndexLocation } from "./index/location.ts";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log.ts";
import type { AttestorSettings } from "./provider/attestor.ts";

/** Hardhat account #0: the local stack makes it the dapp's admin. */
export const DEFAULT_PRIVATE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

const port = portSchema;
const url = httpUrlSchema;
const flag = flagSchema;
const address = configAddressSchema;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SECRET_KEY_SHAPE = "expected base64 of a 32-byte NaCl box secret key";
// The messages are fixed text: a bad secret must never be echoed into a log or an error.
const boxSecretKey = z
  .string()
  .trim()
  .regex(BASE64_RE, SECRET_KEY_SHAPE)
  .transform((v) => new Uint8Array(Buffer.from(v, "base64")))
  .refine((key) => key.length === 32, SECRET_KEY_SHAPE);

/** Where the local stack (npm start) puts the InputBox and the application, per Rollups version. */
export const LOCAL_ADDRESSES = {
  v1: { inputBox: "0x59b22D57D4f067708AB0c00552767405926dc768", application: "0xab7528bb862fB57E8A2BCd567a2e929a0Be56a5e" },
  v2: { inputBox: "0x1b51e2992A2755Ba4D6F7094032DF91991a0Cfac", application: "0xB581C9264f59BF0289fA76D61B2D0746dCE3C30D" },
} as const;

/** Where the rollup and its chain are: the variables the api and the publisher (api/publisher/config.ts) share. */
export const rollupEnvShape = {
  ROLLUP_URL: url.default("http://127.0.0.1:10000"),
  GRAPHQL_URL: url.optional(),
  RPC_URL: url.default("http://127.0.0.1:8545"),
  CHAIN_ID: z.coerce.number().int().positive().default(31337),
  /** The node's kind: v1 (GraphQL reader, GET inspect) or v2 (JSON-RPC, POST /inspect/<application>). */
  ROLLUPS: z.enum(["v1", "v2"]).default("v1"),
  /** Default: the local stack's application for ROLLUPS (docs/devnode.md, docs/rollups-v2.md). */
  DAPP_ADDRESS: address.optional(),
};

export interface RollupEndpoints {
  rollups: "v1" | "v2";
  rollupUrl: string;
  graphqlUrl: string;
  rpcUrl: string;
  chainId: number;
  dappAddress: Address;
}

/** The validated `rollupEnvShape` variables with their defaults filled in. */
export function rollupEndpoints(e: { ROLLUP_URL: string; GRAPHQL_URL?: string | undefined; RPC_URL: string; CHAIN_ID: number; ROLLUPS: "v1" | "v2"; DAPP_ADDRESS?: string | undefined }): RollupEndpoints {
  const rollupUrl = e.ROLLUP_URL.replace(/\/+$/, "");
  return {
    rollups: e.ROLLUPS,
    rollupUrl,
    graphqlUrl: e.GRAPHQL_URL ?? `${rollupUrl}/graphql`,
    rpcUrl: e.RPC_URL,
    chainId: e.CHAIN_ID,
    dappAddress: (e.DAPP_ADDRESS ?? LOCAL_ADDRESSES[e.ROLLUPS].application) as Address,
  };
}

const envSchema = z.object({
  API_PORT: port.default(8001),
  HOST: z.string().min(1).default("0.0.0.0"),
  ...rollupEnvShape,
  /** Default: the local stack's InputBox for ROLLUPS. */
  INPUTBOX_ADDRESS: address.optional(),
  PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key")
    .default(DEFAULT_PRIVATE_KEY),
  JWT_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  /**
   * The key that signs receipts (EAS off-chain attestations of what the rollup accepted, docs/receipts.md);
   * default: one generated into DATA_DIR/receipt-signer-key on first start.
   */
  RECEIPT_SIGNER_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key").optional(),
  DATA_DIR: z.string().min(1).default(".data"),
  PROVIDER_ALLOWED_HOSTS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h.length > 0),
    ),
  RATE_LIMITS: flag.default(true),
  TRUST_PROXY: flag.default(false),
  VERDICT_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  // The api's other bounds (docs/reliability.md): a provider's whole exchange, one read of the node's
  // inspect, one call to the chain's RPC. Each ends a request hung on a dependency with its code.
  PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  ROLLUP_READ_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  NOTICE_POLL_MS: z.coerce.number().int().min(10).default(150),
  // Group commit (docs/api.md): 1 sends every write alone; 256 is the dapp's limit of items in a batch.
  WRITE_BATCH_MAX_ITEMS: z.coerce.number().int().min(1).max(256).default(256),
  // 1 KiB leaves room for one claim; 120 KiB keeps a transaction under geth's 128 KiB pool limit.
  WRITE_BATCH_MAX_BYTES: z.coerce.number().int().min(1024).max(120 * 1024).default(120 * 1024),
  WRITE_IN_FLIGHT: z.coerce.number().int().min(1).max(8).default(1),
  ENCRYPTION_SECRET_KEY: boxSecretKey.optional(),
  // The TLS attestors (docs/provider.md): claims for schemas that require proof go through them, a schema
  // that requires k attestors through the first k of the list.
  ATTESTOR_URL: z
    .string()
    .default("ws://127.0.0.1:8003/ws")
    .transform((v) => v.split(",").map((u) => u.trim()).filter((u) => u.length > 0))
    .pipe(z.array(z.string().regex(/^wss?:\/\/[^\s,]+$/, "expected ws:// or wss:// URLs, comma-separated")).min(1, "expected at least one ws:// URL")),
  ATTESTOR_MODE: z.enum(PROOF_MODES).default("reveal"),
  ATTESTOR_PROVERS: z.coerce.number().int().min(1).max(16).default(2),
  ATTESTOR_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  ATTESTOR_CA_FILES: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      const missing = caFilePaths(value).find((path) => !existsSync(path));
      if (missing !== undefined) ctx.addIssue({ code: "custom", message: `no such file: ${missing}` });
    }),
  // attestor/prover.ts compiled (toolkit/process-build.ts): the provers start without tsx.
  PROVER_MODULE: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined && !existsSync(value)) ctx.addIssue({ code: "custom", message: `no such file: ${value}` });
    }),
  PROVER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key").optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  // JSON lines for a collector by default; `npm start` sets plain, one readable line per event.
  LOG_FORMAT: z.enum(LOG_FORMATS).default("json"),
  // Replicas share rate limits and login nonces here (docs/operations.md); unset, each process keeps its own.
  REDIS_URL: z.string().regex(/^rediss?:\/\/[^\s]+$/, "expected a redis:// or rediss:// URL").optional(),
  // A name for this process in logs and metrics (`npm start -- --api-replicas N` sets api-1, api-2, ...).
  API_REPLICA: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "expected 1 to 64 letters, digits, '.', '_' or '-'").default("api"),
  // How many replicas share the limits in Redis: while it is away each allows its share, limit / N.
  API_REPLICA_COUNT: z.coerce.number().int().min(1).max(64).default(1),
  // Where inspect reads go (docs/operations.md, Readers): readers (validators serving the query interface),
  // comma-separated; unset, the node (ROLLUP_URL) answers them as before.
  READ_URLS: z
    .string()
    .transform((v) => v.split(",").map((u) => u.trim().replace(/\/+$/, "")).filter((u) => u.length > 0))
    .pipe(z.array(httpUrlSchema).min(1, "expected at least one http(s) URL").max(32, "at most 32 readers"))
    .refine((urls) => new Set(urls).size === urls.length, "a reader is listed twice")
    .optional(),
  // How long a read waits for a reader that has processed what it must see before the node answers it.
  READ_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(3_000),
  // How often each reader's status (GET /reader) is read, and how long one reader may take to answer.
  READER_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(250),
  READER_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  // The attestation registry and gate beside the application (npm start deploys them; docs/eas.md): served in
  // the status, and read for each attestation's on-chain state. Unset, the api knows of none.
  REGISTRY_ADDRESS: address.optional(),
  GATE_ADDRESS: address.optional(),
  // EAS's GraphQL comes from the index (docs/index.md): the indexer's own /graphql, unless the index is a
  // PostgreSQL server the api reads itself (DATABASE_READ_URL, a replica, or DATABASE_URL).
  INDEX_URL: httpUrlSchema.default(`http://127.0.0.1:${DEFAULT_INDEX_PORT}`),
  DATABASE_URL: indexLocationShape.DATABASE_URL,
  DATABASE_READ_URL: indexLocationShape.DATABASE_URL,
  DATABASE_SCHEMA: indexLocationShape.DATABASE_SCHEMA,
  INDEX_READ_TIMEOUT_MS: indexLocationShape.INDEX_READ_TIMEOUT_MS,
});

/** The comma-separated PEM paths of ATTESTOR_CA_FILES. */
export function caFilePaths(value: string): string[] {
  return value.split(",").map((p) => p.trim()).filter((p) => p.length > 0);
}

/** `rollups`, the node's kind, says how it is read (api/rollup/node-reader.ts). */
export interface ApiConfig extends RollupEndpoints {
  port: number;
  host: string;
  inputBoxAddress: Address;
  privateKey: Hex;
  jwtSecret: Uint8Array;
  /** Signs every receipt (RECEIPT_SIGNER_KEY, or DATA_DIR/receipt-signer-key). */
  receiptSignerKey: Hex;
  dataDir: string;
  providerAllowedHosts: string[];
  rateLimits: boolean;
  trustProxy: boolean;
  verdictTimeoutMs: number;
  providerTimeoutMs: number;
  rollupReadTimeoutMs: number;
  rpcTimeoutMs: number;
  noticePollMs: number;
  /** Group commit limits: writes that wait for the wallet go together, up to these, into one `batch` input. */
  writeBatch: { maxItems: number; maxBytes: number; inFlight: number };
  /**
   * Secret key of the registered encryption key (extension): when set, GET /attestation/:claimId/data
   * also answers the opened plaintext. Unset, the api never holds a key that opens attestations.
   */
  encryptionSecretKey?: Uint8Array;
  /** The TLS attestor and the prover processes that make claims through it. */
  attestor: AttestorSettings;
  /** The structured log's level (api/log.ts). */
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Where replicas share rate limits and login nonces; undefined keeps them in this process. */
  redisUrl: string | undefined;
  /** This process's name among replicas (logs, metrics, the X-Api-Replica header). */
  replica: string;
  /** How many replicas share the limits (API_REPLICA_COUNT). */
  replicaCount: number;
  /** The registry and the gate beside the application, when known (both or neither). */
  contracts: { registry: Address; gate: Address } | undefined;
  /** Where EAS's GraphQL is answered: by the indexer (INDEX_URL), or by the api from a PostgreSQL server of the index. */
  /**
   * `keepAnswers`: answers are kept until the indexer's next commit (api/graphql/answers.ts); only when the
   * api reads the server the indexer writes, since a replica's data may lag the commit it would hear of.
   */
  index: { kind: "indexer"; url: string } | { kind: "database"; location: IndexLocation; readTimeoutMs: number; keepAnswers: boolean };
  /** Readers the inspect reads go to (READ_URLS), with how long a read waits for one to catch up; undefined: the node. */
  reads: { urls: string[]; waitMs: number; pollMs: number; timeoutMs: number } | undefined;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`invalid configuration: ${variable}: ${problem}`);
  }
}

/** Empty strings count as unset, so `FOO= npm start` falls back to the default instead of failing. */
/** The variables that are set: an empty one counts as unset, so its default applies. */
export function presentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== "") out[k] = v;
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const parsed = envSchema.safeParse(presentEnv(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? "environment"), issue?.message ?? "invalid");
  }
  const e = parsed.data;
  return {
    port: e.API_PORT,
    host: e.HOST,
    ...rollupEndpoints(e),
    inputBoxAddress: (e.INPUTBOX_ADDRESS ?? LOCAL_ADDRESSES[e.ROLLUPS].inputBox) as Address,
    privateKey: e.PRIVATE_KEY as Hex,
    jwtSecret: resolveJwtSecret(e.JWT_SECRET, e.DATA_DIR),
    receiptSignerKey: resolveReceiptSignerKey(e.RECEIPT_SIGNER_KEY, e.DATA_DIR),
    dataDir: e.DATA_DIR,
    providerAllowedHosts: e.PROVIDER_ALLOWED_HOSTS,
    rateLimits: e.RATE_LIMITS,
    trustProxy: e.TRUST_PROXY,
    verdictTimeoutMs: e.VERDICT_TIMEOUT_MS,
    providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
    rollupReadTimeoutMs: e.ROLLUP_READ_TIMEOUT_MS,
    rpcTimeoutMs: e.RPC_TIMEOUT_MS,
    noticePollMs: e.NOTICE_POLL_MS,
    writeBatch: { maxItems: e.WRITE_BATCH_MAX_ITEMS, maxBytes: e.WRITE_BATCH_MAX_BYTES, inFlight: e.WRITE_IN_FLIGHT },
    ...(e.ENCRYPTION_SECRET_KEY === undefined ? {} : { encryptionSecretKey: e.ENCRYPTION_SECRET_KEY }),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    redisUrl: e.REDIS_URL,
    replica: e.API_REPLICA,
    replicaCount: e.API_REPLICA_COUNT,
    contracts: contractsOf(e.REGISTRY_ADDRESS, e.GATE_ADDRESS),
    index: indexOf(e),
    reads: e.READ_URLS === undefined ? undefined : { urls: e.READ_URLS, waitMs: e.READ_WAIT_MS, pollMs: e.READER_POLL_MS, timeoutMs: e.READER_TIMEOUT_MS },
    attestor: {
      urls: e.ATTESTOR_URL,
      mode: e.ATTESTOR_MODE,
      provers: e.ATTESTOR_PROVERS,
      timeoutMs: e.ATTESTOR_TIMEOUT_MS,
      caFiles: e.ATTESTOR_CA_FILES,
      dataDir: e.DATA_DIR,
      ...(e.PROVER_PRIVATE_KEY === undefined ? {} : { proverPrivateKey: e.PROVER_PRIVATE_KEY as Hex }),
      ...(e.PROVER_MODULE === undefined ? {} : { proverModule: e.PROVER_MODULE }),
    },
  };
}

/** A PostgreSQL index the api reads itself (its replica first), or the indexer's GraphQL. */
function indexOf(e: { INDEX_URL: string; DATABASE_URL?: string | undefined; DATABASE_READ_URL?: string | undefined; DATABASE_SCHEMA: string; INDEX_READ_TIMEOUT_MS: number }): ApiConfig["index"] {
  const url = e.DATABASE_READ_URL ?? e.DATABASE_URL;
  if (url === undefined) return { kind: "indexer", url: e.INDEX_URL.replace(/\/+$/, "") };
  return { kind: "database", location: { kind: "postgres", url, schema: e.DATABASE_SCHEMA }, readTimeoutMs: e.INDEX_READ_TIMEOUT_MS, keepAnswers: e.DATABASE_READ_URL === undefined };
}

/** Both addresses or neither: a registry without its gate (or the reverse) is a deployment half done. */
function contractsOf(registry: string | undefined, gate: string | undefined): ApiConfig["contracts"] {
  if (registry === undefined && gate === undefined) return undefined;
  if (registry === undefined || gate === undefined) throw new ConfigError(registry === undefined ? "REGISTRY_ADDRESS" : "GATE_ADDRESS", "the registry and the gate go together (npm run deploy-contracts deploys both)");
  return { registry: registry as Address, gate: gate as Address };
}

/**
 * `JWT_SECRET` when set; otherwise a development secret generated into `DATA_DIR/jwt-secret` on first
 * start and reused afterwards, so tokens printed by `npm run token` stay valid across restarts.
 */
export function resolveJwtSecret(explicit: string | undefined, dataDir: string): Uint8Array {
  if (explicit !== undefined && explicit !== "") return new TextEncoder().encode(explicit);
  const { value: secret, file } = secretInDataDir(dataDir, "jwt-secret", () => randomBytes(32).toString("hex"));
  if (secret.length < 32) throw new ConfigError("JWT_SECRET", `${file} holds fewer than 32 characters`);
  return new TextEncoder().encode(secret);
}

/**
 * `RECEIPT_SIGNER_KEY` when set; otherwise a key generated into `DATA_DIR/receipt-signer-key` on first
 * start, kept for the next (replicas sharing DATA_DIR share it). A file that does not hold a key stops the start.
 */
export function resolveReceiptSignerKey(explicit: string | undefined, dataDir: string): Hex {
  if (explicit !== undefined) return explicit as Hex;
  const { value, file } = secretInDataDir(dataDir, "receipt-signer-key", () => `0x${randomBytes(32).toString("hex")}`);
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) throw new ConfigError("RECEIPT_SIGNER_KEY", `${file} does not hold a 0x-prefixed 32-byte hex private key`);
  return value as Hex;
}
