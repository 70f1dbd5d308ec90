/**
 * `npm start`'s configuration: the environment and flags, validated once with zod (a bad value names
 * its variable), turned into the stack's settings. Every value has an embedded default.
 */
import { MAX_QUORUM } from "../../common/tls-claim.ts";
import { resolve } from "node:path";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { configAddressSchema, flagSchema, portSchema } from "../../common/env.ts";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { describeIssues, DEFAULTS, ROLLUPS_VERSIONS, V2_DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { DEFAULT_INDEX_PORT } from "../../api/index/location.ts";
import { predictedContracts, STACK_DEPLOYER_KEY } from "./deploy-contracts.ts";
import { apiEnabled, defaultDappCommand, type StackSettings } from "./stack-pieces.ts";
import { DEFAULT_STOP_BOUND_MS } from "./stack-restarts.ts";
import { compiledPath } from "../../toolkit/compiled-path.ts";

const port = portSchema.min(1);
const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key");
/** Replicas take hardhat accounts #10 upward (replica 1 keeps PRIVATE_KEY): tests send from the low ones. */
const FIRST_REPLICA_ACCOUNT = 10;
export const MAX_API_REPLICAS = 8;
export const MAX_READERS = 8;
const address = configAddressSchema;
const flag = flagSchema;

const envSchema = z.object({
  RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  CHAIN_PORT: port.default(DEFAULTS.chainPort),
  NODE_PORT: port.default(DEFAULTS.nodePort),
  NODE_HOST: z.string().min(1).default("127.0.0.1"),
  ROLLUP_HTTP_PORT: port.default(DEFAULTS.rollupHttpPort),
  API_PORT: port.default(DEFAULTS.apiPort),
  /** Which Cartesi Rollups the local node stands in for (v1 or v2); the addresses' defaults follow it. */
  ROLLUPS: z.enum(ROLLUPS_VERSIONS).default("v1"),
  INPUTBOX_ADDRESS: address.optional(),
  DAPP_ADDRESS: address.optional(),
  PRIVATE_KEY: privateKey.default(DEFAULTS.privateKey),
  API_REPLICAS: z.coerce.number().int().min(1).max(MAX_API_REPLICAS).default(1),
  /** Wallets of replicas 2..N, comma-separated; by default hardhat accounts #10 upward (local chains only). */
  API_REPLICA_KEYS: z
    .string()
    .transform((v) => v.split(",").map((k) => k.trim()).filter((k) => k !== ""))
    .pipe(z.array(privateKey))
    .optional(),
  API_REPLICA_BASE_PORT: port.default(8101),
  REDIS_PORT: port.default(6390),
  /** Passed to the api too; with replicas, whether the balancer keeps the X-Forwarded-For it receives. */
  TRUST_PROXY: flag.default(false),
  DAPP_ADMINS: z.string().optional(),
  DATA_DIR: z.string().min(1).default(DEFAULTS.dataDir),
  DAPP_COMMAND: z.string().min(1).optional(),
  DAPP_BUNDLE: flag.default(false),
  START_API: z.enum(["auto", "on", "off"]).default("auto"),
  ATTESTOR_PORT: port.default(8003),
  ATTESTOR_CA_FILES: z.string().default(""),
  START_ATTESTOR: z.enum(["on", "off"]).default("on"),
  // What every process writes: plain lines for a person at the terminal; json for a log collector.
  LOG_FORMAT: z.enum(["plain", "json"]).default("plain"),
  /** How many TLS attestors to run (ports ATTESTOR_PORT upward): schemas may require a quorum of them. */
  ATTESTORS: z.coerce.number().int().min(1).max(MAX_QUORUM).default(1),
  DEMO_PROVIDER_PORT: port.default(8443),
  /** Readers: validators beside the stack that serve the api's reads (docs/operations.md, Readers). */
  READERS: z.coerce.number().int().min(0).max(MAX_READERS).default(0),
  /** Reader k's query interface is READER_BASE_PORT + k - 1, its dapp's rollup HTTP server READER_ROLLUP_BASE_PORT + k - 1. */
  READER_BASE_PORT: port.default(10101),
  READER_ROLLUP_BASE_PORT: port.default(5101),
  /**
   * v2: claims by Cartesi's Quorum of this many members (`--quorum N`, docs/quorum.md) instead of the
   * devnode's Authority; the members are the first N readers (hardhat accounts #20 upward vote).
   */
  QUORUM: z.coerce.number().int().min(1).max(MAX_READERS).optional(),
  /** The publisher's metrics and health (`--publish`). */
  PUBLISHER_PORT: port.default(8005),
  /** The indexer's GraphQL, health and metrics (docs/index.md); `--no-index` leaves it out. */
  INDEX_PORT: port.default(DEFAULT_INDEX_PORT),
  START_INDEX: z.enum(["on", "off"]).default("on"),
  /**
   * Longest the stack's stop takes (as systemd's TimeoutStopSec): the pieces get SIGTERM, and whatever still
   * runs when it is over gets SIGKILL (docs/operations.md, "Stopping").
   */
  STOP_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(DEFAULT_STOP_BOUND_MS),
  /**
   * The stack's Node processes compiled by toolkit/process-build.ts (each a third of tsx's CPU to start): run
   * from there instead of the sources through tsx. The test suites build one per run (TEST_PROCESSES_BUILT).
   */
  STACK_PROCESSES_DIR: z.string().min(1).optional(),
});

export const START_FLAGS = ["--reset", "--bundle", "--no-api", "--no-attestor", "--no-index", "--demo-provider", "--validator", "--publish", "--api-replicas <n>", "--attestors <n>", "--readers <n>", "--quorum <n>", "--rollups <v1|v2>"] as const;
const BOOLEAN_FLAGS: readonly string[] = START_FLAGS.filter((f) => !f.includes(" "));
/** `npm start -- --validator` beside a running stack: where it listens and keeps its record by default. */
export const VALIDATOR_DEFAULTS = { nodePort: 10001, rollupHttpPort: 5005, dataDir: ".data-validator" } as const;

export interface StartOptions {
  settings: StackSettings;
  reset: boolean;
  /** STOP_TIMEOUT_MS: the bound of the stack's stop. */
  stopBoundMs: number;
}

export class StartConfigError extends Error {
  override readonly name = "StartConfigError";
}

/** Flags with a value, `--flag V` or `--flag=V`, and the variable each becomes (validated with the environment). */
const VALUED_FLAGS = {
  "--api-replicas": { variable: "API_REPLICAS", expected: "a number of replicas, e.g. --api-replicas 3" },
  "--rollups": { variable: "ROLLUPS", expected: "v1 or v2, e.g. --rollups v2" },
  "--attestors": { variable: "ATTESTORS", expected: "a number of attestors, e.g. --attestors 3" },
  "--readers": { variable: "READERS", expected: "a number of readers, e.g. --readers 2" },
  "--quorum": { variable: "QUORUM", expected: "a number of Quorum members, e.g. --quorum 3" },
} as const;

function splitValuedFlags(argv: readonly string[]): { flags: string[]; values: Record<string, string> } {
  const flags: string[] = [];
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const known = VALUED_FLAGS[name as keyof typeof VALUED_FLAGS];
    if (known === undefined) {
      flags.push(arg);
      continue;
    }
    const value = inline ?? argv[i + 1];
    if (value === undefined || value === "" || value.startsWith("--")) throw new StartConfigError(`${name}: expected ${known.expected}`);
    if (inline === undefined) i++;
    values[known.variable] = value;
  }
  return { flags, values };
}

/** A program on PATH, or undefined. */
function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, program);
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  return undefined;
}

// Derived once each: a mnemonic's key takes milliseconds, and the port table's test loads thousands of configurations.
const hardhatKeys = new Map<number, string>();
function hardhatKey(index: number): string {
  let key = hardhatKeys.get(index);
  if (key === undefined) hardhatKeys.set(index, (key = hardhatPrivateKey(index)));
  return key;
}

const addresses = new Map<string, Address>();
function addressOfKey(key: string): Address {
  let address = addresses.get(key);
  if (address === undefined) addresses.set(key, (address = privateKeyToAccount(key as `0x${string}`).address));
  return address;
}

/** Wallets of replicas 1..count: PRIVATE_KEY first, then the given keys or hardhat accounts #10 upward. */
export function replicaPrivateKeys(first: string, count: number, others?: readonly string[]): string[] {
  const keys = [first];
  for (let k = 2; k <= count; k++) keys.push(others?.[k - 2] ?? hardhatKey(FIRST_REPLICA_ACCOUNT + k - 2));
  return keys;
}

export function loadStartOptions(env: NodeJS.ProcessEnv, rawArgv: readonly string[], root: string): StartOptions {
  const { flags: argv, values } = splitValuedFlags(rawArgv);
  const unknown = argv.filter((arg) => !BOOLEAN_FLAGS.includes(arg));
  if (unknown.length > 0) {
    throw new StartConfigError(`unknown argument: ${unknown.join(" ")} (known: ${START_FLAGS.join(", ")})`);
  }
  // An empty variable means "unset", as shells and compose files commonly produce.
  const present: Record<string, string> = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ""));
  Object.assign(present, values);
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw new StartConfigError(`invalid configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  const v2 = e.ROLLUPS === "v2";
  const inputBoxAddress = (e.INPUTBOX_ADDRESS ?? (v2 ? V2_DEFAULTS.inputBoxAddress : DEFAULTS.inputBoxAddress)) as StackSettings["inputBoxAddress"];
  const dappAddress = (e.DAPP_ADDRESS ?? (v2 ? V2_DEFAULTS.applicationAddress : DEFAULTS.dappAddress)) as StackSettings["dappAddress"];
  const bundle = argv.includes("--bundle") || e.DAPP_BUNDLE;
  const validator = argv.includes("--validator");
  const replicas = e.API_REPLICAS > 1 && !validator ? replicaSettings(e, env) : undefined;
  // A validator's dapp must be configured as the claimer's is: the same admins (replicas' wallets included).
  const walletKeys = replicas?.privateKeys ?? (validator ? replicaPrivateKeys(e.PRIVATE_KEY, e.API_REPLICAS, e.API_REPLICA_KEYS) : [e.PRIVATE_KEY]);
  const wallets = walletKeys.map(addressOfKey);
  if (validator && (e.READERS > 0 || e.QUORUM !== undefined)) throw new StartConfigError(`${e.READERS > 0 ? "--readers" : "--quorum"} runs validators inside the stack: leave out --validator`);
  const quorum = quorumSettings(e);
  const compiledDir = processesDir(e.STACK_PROCESSES_DIR, root);
  if (validator) {
    // Beside a running `npm start`: its chain, other ports, another record; only a devnode and a dapp.
    return checkedPorts({
      reset: argv.includes("--reset"),
      stopBoundMs: e.STOP_TIMEOUT_MS,
      settings: {
        root,
        dataDir: resolve(root, present.DATA_DIR === undefined ? VALIDATOR_DEFAULTS.dataDir : e.DATA_DIR),
        externalRpcUrl: e.RPC_URL ?? `http://127.0.0.1:${e.CHAIN_PORT}`,
        chainPort: e.CHAIN_PORT,
        nodePort: present.NODE_PORT === undefined ? VALIDATOR_DEFAULTS.nodePort : e.NODE_PORT,
        nodeHost: e.NODE_HOST,
        rollupHttpPort: present.ROLLUP_HTTP_PORT === undefined ? VALIDATOR_DEFAULTS.rollupHttpPort : e.ROLLUP_HTTP_PORT,
        apiPort: e.API_PORT,
        rollups: e.ROLLUPS,
        inputBoxAddress,
        dappAddress,
        privateKey: e.PRIVATE_KEY,
        dappAdmins: e.DAPP_ADMINS ?? wallets.join(","),
        dappCommand: e.DAPP_COMMAND ?? defaultDappCommand(bundle),
        compiledDir,
        api: false,
        attestor: undefined,
        demoProvider: undefined,
        env: { DEVNODE_ROLE: "validator", DEVNODE_CHAIN: "external", LOG_FORMAT: e.LOG_FORMAT },
        logDir: undefined,
      },
    });
  }
  return checkedPorts({
    reset: argv.includes("--reset"),
    stopBoundMs: e.STOP_TIMEOUT_MS,
    settings: {
      root,
      dataDir: resolve(root, e.DATA_DIR),
      externalRpcUrl: e.RPC_URL,
      chainPort: e.CHAIN_PORT,
      nodePort: e.NODE_PORT,
      nodeHost: e.NODE_HOST,
      rollupHttpPort: e.ROLLUP_HTTP_PORT,
      apiPort: e.API_PORT,
      rollups: e.ROLLUPS,
      inputBoxAddress,
      dappAddress,
      privateKey: e.PRIVATE_KEY,
      // The api's wallet (every replica's) is an admin of the dapp, so the api can register schemas from the start.
      dappAdmins: e.DAPP_ADMINS ?? wallets.join(","),
      replicas,
      readers: readerSettings(e, validator),
      quorum,
      // On a chain of its own the stack deploys the registry and the gate; on another, npm run deploy-contracts does.
      contracts: e.RPC_URL === undefined ? predictedContracts(addressOfKey(STACK_DEPLOYER_KEY)) : undefined,
      publisher: publisherSettings(e, argv),
      // EAS's GraphQL is the api's, from the index: it runs with the api unless left out.
      index: argv.includes("--no-index") || e.START_INDEX === "off" ? undefined : { port: e.INDEX_PORT },
      dappCommand: e.DAPP_COMMAND ?? defaultDappCommand(bundle),
      compiledDir,
      api: argv.includes("--no-api") || e.START_API === "off" ? false : e.START_API === "on" ? true : "auto",
      attestor: argv.includes("--no-attestor") || e.START_ATTESTOR === "off" ? undefined : { ports: attestorPorts(e), caFiles: e.ATTESTOR_CA_FILES },
      demoProvider: argv.includes("--demo-provider") ? { port: e.DEMO_PROVIDER_PORT } : undefined,
      env: { LOG_FORMAT: e.LOG_FORMAT },
      logDir: undefined,
    },
  });
}

type StartEnv = z.infer<typeof envSchema>;

/** STACK_PROCESSES_DIR against the project's root; refused, named, when it holds no compiled devnode. */
function processesDir(value: string | undefined, root: string): string | undefined {
  if (value === undefined) return undefined;
  const dir = resolve(root, value);
  const devnode = compiledPath(dir, "devnode/main.ts");
  if (!existsSync(devnode)) throw new StartConfigError(`invalid configuration: STACK_PROCESSES_DIR: no compiled devnode in ${value} (expected ${devnode})`);
  return dir;
}

function publisherSettings(e: StartEnv, argv: readonly string[]): StackSettings["publisher"] {
  if (!argv.includes("--publish")) return undefined;
  if (e.RPC_URL !== undefined) throw new StartConfigError("--publish publishes to the contracts the stack deploys on its own chain: on another chain, deploy them (npm run deploy-contracts) and run npm run publish");
  if (argv.includes("--validator")) throw new StartConfigError("--publish runs beside the claimer's stack: leave out --validator");
  return { port: e.PUBLISHER_PORT };
}

/** Members k = 1..N vote with hardhat accounts #20 upward: the stack's own chain funds them. */
export function quorumMemberKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => hardhatKey(DEFAULTS.firstQuorumMemberAccount + i));
}

function quorumSettings(e: StartEnv): StackSettings["quorum"] {
  if (e.QUORUM === undefined) return undefined;
  if (e.ROLLUPS !== "v2") throw new StartConfigError("--quorum: a Quorum is Cartesi Rollups v2's (add --rollups v2); v1 keeps its Authority (docs/quorum.md)");
  if (e.RPC_URL !== undefined) throw new StartConfigError("--quorum deploys the application under a Quorum on the stack's own chain: on another chain deploy it there and run each member as a devnode with DEVNODE_ROLE=member (docs/quorum.md)");
  const keys = quorumMemberKeys(e.QUORUM);
  return { members: keys.map(addressOfKey), keys };
}

function readerSettings(e: StartEnv, validator: boolean): StackSettings["readers"] {
  // Members are readers: --quorum N runs at least N, the first N voting.
  const count = Math.max(e.READERS, e.QUORUM ?? 0);
  if (count === 0 || validator) return undefined;
  const nodePorts = Array.from({ length: count }, (_, i) => e.READER_BASE_PORT + i);
  const rollupHttpPorts = Array.from({ length: count }, (_, i) => e.READER_ROLLUP_BASE_PORT + i);
  return { nodePorts, rollupHttpPorts };
}

function replicaSettings(e: StartEnv, env: NodeJS.ProcessEnv): NonNullable<StackSettings["replicas"]> {
  const missing = ["haproxy", "redis-server"].filter((program) => onPath(program, env) === undefined);
  if (missing.length > 0) {
    throw new StartConfigError(`--api-replicas ${e.API_REPLICAS} needs ${missing.join(" and ")} on PATH (Debian: apt-get install haproxy redis-server)`);
  }
  const given = e.API_REPLICA_KEYS;
  if (given !== undefined && given.length < e.API_REPLICAS - 1) {
    throw new StartConfigError(`API_REPLICA_KEYS: ${e.API_REPLICAS} replicas need ${e.API_REPLICAS - 1} keys beside PRIVATE_KEY, got ${given.length}`);
  }
  if (given === undefined && e.RPC_URL !== undefined) {
    throw new StartConfigError("API_REPLICA_KEYS: on an external chain (RPC_URL) each replica needs a funded wallet of its own");
  }
  const ports = Array.from({ length: e.API_REPLICAS }, (_, i) => e.API_REPLICA_BASE_PORT + i);
  return {
    ports,
    privateKeys: replicaPrivateKeys(e.PRIVATE_KEY, e.API_REPLICAS, given),
    redisPort: e.REDIS_PORT,
    trustForwarded: e.TRUST_PROXY,
  };
}

/**
 * Attestor 1 on ATTESTOR_PORT, each next one on the next port up that no other piece's variable names
 * (whether that piece runs or not), so that `--attestors N` never takes the publisher's 8005 and an
 * attestor's port does not move with the other flags.
 */
function attestorPorts(e: StartEnv): number[] {
  const others = new Set([e.API_PORT, e.NODE_PORT, e.CHAIN_PORT, e.ROLLUP_HTTP_PORT, e.REDIS_PORT, e.DEMO_PROVIDER_PORT, e.PUBLISHER_PORT, e.INDEX_PORT]);
  const ports = [e.ATTESTOR_PORT];
  for (let port = e.ATTESTOR_PORT + 1; ports.length < e.ATTESTORS; port++) if (!others.has(port)) ports.push(port);
  return ports;
}

/** One port one piece listens on: the piece, the variable that sets the port, and the address. */
export interface PortClaim {
  port: number;
  host: string;
  /** Who wants it, as an operator would change it: `attestor-3 (ATTESTOR_PORT upward)`. */
  owner: string;
}

/** Every port every piece of the stack listens on, computed once from the settings (docs/operations.md, Ports). */
export function stackPorts(s: StackSettings): PortClaim[] {
  const loop = "127.0.0.1";
  const claims: PortClaim[] = [];
  const claim = (port: number, owner: string, host = loop): void => void claims.push({ port, host, owner });
  if (s.externalRpcUrl === undefined) claim(s.chainPort, "chain (CHAIN_PORT)");
  claim(s.nodePort, "devnode (NODE_PORT)", s.nodeHost);
  claim(s.rollupHttpPort, "devnode's rollup HTTP server (ROLLUP_HTTP_PORT)");
  s.readers?.nodePorts.forEach((port, i) => claim(port, `reader-${i + 1} (READER_BASE_PORT${plus(i)})`));
  s.readers?.rollupHttpPorts.forEach((port, i) => claim(port, `reader-${i + 1}'s rollup HTTP server (READER_ROLLUP_BASE_PORT${plus(i)})`));
  if (s.demoProvider !== undefined) claim(s.demoProvider.port, "provider (DEMO_PROVIDER_PORT)");
  s.attestor?.ports.forEach((port, i) => claim(port, i === 0 ? "attestor (ATTESTOR_PORT)" : `attestor-${i + 1} (ATTESTOR_PORT upward)`));
  if (apiEnabled(s)) {
    if (s.replicas === undefined) claim(s.apiPort, "api (API_PORT)", "0.0.0.0");
    else {
      claim(s.apiPort, "balancer (API_PORT)", "0.0.0.0");
      s.replicas.ports.forEach((port, i) => claim(port, `api-${i + 1} (API_REPLICA_BASE_PORT${plus(i)})`));
      claim(s.replicas.redisPort, "redis (REDIS_PORT)");
    }
  }
  if (s.publisher !== undefined) claim(s.publisher.port, "publisher (PUBLISHER_PORT)");
  if (s.index !== undefined) claim(s.index.port, "indexer (INDEX_PORT)");
  return claims;
}

function plus(i: number): string {
  return i === 0 ? "" : ` + ${i}`;
}

/** Refuses a port two pieces want, naming both. */
export function assertNoPortClash(claims: readonly PortClaim[]): void {
  const owners = new Map<number, PortClaim>();
  for (const claim of claims) {
    const first = owners.get(claim.port);
    if (first !== undefined) throw new StartConfigError(`port ${claim.port} is wanted by ${first.owner} and by ${claim.owner}: give one of them another port`);
    owners.set(claim.port, claim);
  }
}

function checkedPorts(options: StartOptions): StartOptions {
  assertNoPortClash(stackPorts(options.settings));
  return options;
}

/** Refuses a port something on this machine already listens on (another stack, another program), naming its piece. */
export async function assertPortsFree(claims: readonly PortClaim[]): Promise<void> {
  for (const claim of claims) {
    const problem = await new Promise<string | undefined>((answer) => {
      const server = createServer();
      server.once("error", (error: NodeJS.ErrnoException) => answer(error.code ?? error.message));
      server.listen({ port: claim.port, host: claim.host, exclusive: true }, () => server.close(() => answer(undefined)));
    });
    if (problem === "EADDRINUSE") throw new StartConfigError(`port ${claim.port} of ${claim.owner} is already in use on this machine (another stack still running?): stop what holds it, or choose another port`);
    if (problem !== undefined) throw new StartConfigError(`port ${claim.port} of ${claim.owner} cannot be listened on at ${claim.host}: ${problem}`);
  }
}
