/**
 * The real local stack for end-to-end tests: chain (hardhat node), devnode, dapp and, when asked, the
 * api, as separate processes on free ports with a temporary DATA_DIR. Uses the same spawn code as
 * `npm start` (scripts/lib/stack-supervisor.ts, stack-pieces.ts).
 *
 * ```ts
 * let stack: TestStack;
 * beforeAll(async () => { stack = await startStack({ api: true, env: { RATE_LIMITS: "off" } }); });
 * afterAll(async () => { await stack?.stop(); });
 *
 * const verdict = await stack.send({ type: "set_role", params: { ... } });      // from account #0, the admin
 * const envelope = await stack.inspect({ type: "health", params: {} });
 * await stack.kill("dapp");  await stack.restart("dapp");                        // crash tests
 * ```
 *
 * Every child's output goes to `<dataDir>/logs/<piece>.log`; `stack.logs(piece)` reads it (print it when
 * a test fails). Children run in their own process groups and are killed when the test process exits,
 * even if `stop()` is never reached.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { DEFAULTS, type RollupsVersion, V2_DEFAULTS } from "../../devnode/config.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { wipeDataDir } from "../../scripts/lib/data-dir.ts";
import { quorumMemberKeys, replicaPrivateKeys } from "../../scripts/lib/stack-config.ts";
import { RollupClient, type InputVerdict, type Sender } from "../../scripts/lib/rollup-client.ts";
import { predictedContracts, STACK_DEPLOYER_KEY } from "../../scripts/lib/deploy-contracts.ts";
import { defaultDappCommand, readerDataDir, stackStatusPath, stackUrls, type PieceKind, type PieceName, type StackSettings, type StackUrls } from "../../scripts/lib/stack-pieces.ts";
import { processesOf, type ProcessId } from "../../scripts/lib/stack-processes.ts";
import { Supervisor, type PieceStatus } from "../../scripts/lib/stack-supervisor.ts";
import { compiledPath } from "../../toolkit/compiled-path.ts";
import type { PROCESS_ENTRIES } from "../../toolkit/process-build.ts";

export type { PieceKind, PieceName, StackUrls, InputVerdict, Sender };

/** The project root (children run there). */
export const PROJECT_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

export interface StackPorts {
  chain: number;
  node: number;
  rollupHttp: number;
  api: number;
  attestor: number;
  demoProvider: number;
}

export interface StartStackOptions {
  /** Start the api too (api/main.ts). Default false. */
  api?: boolean;
  /** Start the TLS attestor (attestor/server.ts) before the api. Default false. */
  attestor?: boolean;
  /** How many attestors to start when `attestor` is set (`attestor`, `attestor-2`, ...). Default 1. */
  attestors?: number;
  /** Start the demo HTTPS provider (scripts/demo-provider.ts), trusted by the attestor and the api. Default false. */
  demoProvider?: boolean;
  /** Extra root certificates (comma-separated PEM paths) the attestor and the api's provers trust. */
  attestorCaFiles?: string;
  /** Extra environment for every child; it overrides the stack's own variables (e.g. `RATE_LIMITS: "off"`). */
  env?: Record<string, string>;
  /**
   * Use this DATA_DIR (to start a stack again on the state a stopped one left). By default a fresh
   * temporary directory, deleted by `stop()`.
   */
  dataDir?: string;
  /** Empty `dataDir` first, as `npm start -- --reset` does. */
  reset?: boolean;
  /** Fixed ports; the others are picked free. */
  ports?: Partial<StackPorts>;
  /**
   * The dapp's command (argv, or a shell string as DAPP_COMMAND). Default: `testDappCommand()`, the bundle
   * built once for the run.
   */
  dappCommand?: readonly string[] | string;
  /**
   * Apply `npm start`'s restart policy (scripts/lib/stack-restarts.ts): a piece that exits on its own comes
   * back with backoff; the chain or the devnode exiting is recorded in `downReason`, the stack left as it is.
   * Default false: nothing restarts by itself (tests that kill and start pieces themselves).
   */
  restarts?: boolean;
  /**
   * Run this many api replicas behind haproxy, sharing limits through a redis-server (as `npm start --
   * --api-replicas N`); `urls.api` is then the balancer. Replica k is the piece `api-k` with its own
   * wallet (`replicaWallets`). Default: one api, no balancer.
   */
  apiReplicas?: number;
  /** Per piece. Default 60 s. */
  readyTimeoutMs?: number;
  /** The bound of `stop()` (npm start's STOP_TIMEOUT_MS); the supervisor's default otherwise. */
  stopBoundMs?: number;
  /**
   * Follow this chain instead of starting one (the devnode treats it as external); with `env:
   * {DEVNODE_ROLE: "validator"}` this is a validator node beside another stack.
   */
  externalRpcUrl?: string;
  /** The Cartesi Rollups the devnode stands in for and the api talks to (ROLLUPS). Default v1. */
  rollups?: RollupsVersion;
  /** Readers beside the node (`npm start -- --readers N`): validators the api reads from. Default none. */
  readers?: number;
  /** v2: claims by a Quorum of this many members, readers 1..N (`npm start -- --quorum N`). Default: the Authority. */
  quorum?: number;
  /** Where the api reaches the node instead of the node itself (a recording proxy in front of it). */
  apiNodeUrl?: string;
  /** Where each reader reaches the chain instead of the chain itself (a proxy a test holds or cuts), reader 1 first. */
  readerRpcUrls?: string[];
  /** Run the publisher (`npm start -- --publish`). Default false. */
  publish?: boolean;
  /** Run the indexer (api/index/main.ts), which answers the api's EAS GraphQL. Default: with the api, as npm start. */
  index?: boolean;
}

export interface StopOptions {
  /** Keep the DATA_DIR even when the stack created it (to start again on it). */
  keepDataDir?: boolean;
}

export interface TestStack {
  urls: StackUrls;
  ports: StackPorts;
  addresses: { inputBox: Address; dapp: Address; admin: Address };
  /** The registry and the gate the stack deployed beside its application (none on a chain not its own). */
  contracts: { registry: Address; gate: Address } | undefined;
  /** The publisher's health and metrics (`publish`), or undefined. */
  publisherUrl: string | undefined;
  /** The Cartesi Rollups the devnode stands in for (ROLLUPS). */
  rollups: RollupsVersion;
  /** The replicas' wallets, replica 1 first (the admin's alone without replicas). */
  replicaWallets: Address[];
  /** Each api process's own URL, replica 1 first (`urls.api` alone without replicas). */
  apiReplicaUrls: string[];
  dataDir: string;
  /** The pieces this stack runs, in start order. */
  pieces: PieceName[];
  /** Sends inputs and reads verdicts and inspects (scripts/lib/rollup-client.ts). */
  client: RollupClient;
  /** Sends an input (JSON value or hex) from `sender` (hardhat account number, default #0) and waits for its verdict. */
  send(input: unknown, sender?: Sender): Promise<InputVerdict & { txHash: Hex }>;
  /** `GET /inspect/<percent-encoded JSON>` (or POST); throws on a non-200 answer. */
  inspect(query: unknown, method?: "GET" | "POST"): Promise<InspectEnvelope>;
  graphql<T>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** Sends a signal to a piece's process group (default SIGKILL) and waits for it to exit when the signal ends it. */
  kill(piece: PieceName, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a stopped or killed piece and waits until it is ready. */
  start(piece: PieceName): Promise<void>;
  /** Stops (SIGTERM) and starts a piece, waiting until it is ready. */
  restart(piece: PieceName): Promise<void>;
  isRunning(piece: PieceName): boolean;
  /** Process id of a running piece (the leader of its process group). */
  pid(piece: PieceName): number | undefined;
  /** What a piece printed so far. */
  logs(piece: PieceName): string;
  /** What the supervisor said so far (restarts and their reasons). */
  supervisorLog(): string[];
  /** Why the stack would stop under `npm start` (a piece holding the state exited, a piece kept failing), if it would. */
  downReason(): string | undefined;
  /** Each piece's status and restarts, as the supervisor keeps them. */
  status(): PieceStatus[];
  /** Every process of every running piece, descendants included (Linux: read from /proc). */
  processes(): ProcessId[];
  /** Stops every piece (api, dapp, devnode, chain) and deletes a temporary DATA_DIR. */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Where test ports are picked: below the kernel's ephemeral range. A port the kernel hands out for port 0 is
 * in that range, and so is the source port of every outgoing connection: between the pick and the piece's
 * listen, one of the stack's own connections could take it (EADDRINUSE, seen in CI).
 */
function pickRange(): [number, number] {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low !== undefined && low > 11_000) return [10_000, low - 1];
  } catch {
    // Not Linux: the usual range starts at 32768 (49152 on others), so this stays below it.
  }
  return [20_000, 32_767];
}

function listenOn(port: number): Promise<ReturnType<typeof createServer> | undefined> {
  return new Promise((resolveServer) => {
    const server = createServer();
    server.once("error", () => resolveServer(undefined));
    server.listen(port, "127.0.0.1", () => resolveServer(server));
  });
}

/** Free TCP ports on 127.0.0.1, distinct from each other (held together while they are picked). */
export async function freePorts(count: number): Promise<number[]> {
  const [low, high] = pickRange();
  const held: ReturnType<typeof createServer>[] = [];
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries += 1) {
    if (tries > count * 50) throw new Error(`no ${count} free ports between ${low} and ${high}`);
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (ports.includes(port)) continue;
    const server = await listenOn(port);
    if (server === undefined) continue;
    held.push(server);
    ports.push(port);
  }
  await Promise.all(held.map((server) => new Promise<void>((r) => server.close(() => r()))));
  return ports;
}

function quorumOf(count: number): NonNullable<StackSettings["quorum"]> {
  const keys = quorumMemberKeys(count);
  return { keys, members: keys.map((key) => privateKeyToAccount(key as Hex).address) };
}

export async function startStack(options: StartStackOptions = {}): Promise<TestStack> {
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "devnode-stack-"));
  if (options.reset === true) wipeDataDir(dataDir, PROJECT_ROOT);
  const replicaCount = options.apiReplicas ?? 1;
  const attestorCount = options.attestors ?? 1;
  const readerCount = Math.max(options.readers ?? 0, options.quorum ?? 0);
  const [chain, node, rollupHttp, api, attestor, demoProvider, redisPort, publisherPort, indexPort, ...morePorts] = await freePorts(9 + replicaCount + attestorCount - 1 + 2 * readerCount);
  const replicaPorts = morePorts.slice(0, replicaCount);
  const extraAttestorPorts = morePorts.slice(replicaCount, replicaCount + attestorCount - 1);
  const readerPorts = morePorts.slice(replicaCount + attestorCount - 1);
  const ports: StackPorts = {
    chain: options.ports?.chain ?? (chain as number),
    node: options.ports?.node ?? (node as number),
    rollupHttp: options.ports?.rollupHttp ?? (rollupHttp as number),
    api: options.ports?.api ?? (api as number),
    attestor: options.ports?.attestor ?? (attestor as number),
    demoProvider: options.ports?.demoProvider ?? (demoProvider as number),
  };
  const admin = privateKeyToAccount(DEFAULTS.privateKey).address;
  const replicas =
    replicaCount > 1
      ? {
          ports: replicaPorts,
          privateKeys: replicaPrivateKeys(DEFAULTS.privateKey, replicaCount),
          redisPort: redisPort as number,
          trustForwarded: /^(1|true|yes|on)$/i.test(options.env?.TRUST_PROXY ?? ""),
        }
      : undefined;
  const replicaWallets = (replicas?.privateKeys ?? [DEFAULTS.privateKey]).map((key) => privateKeyToAccount(key as Hex).address);
  const supervisorLines: string[] = [];
  let downReason: string | undefined;
  const settings: StackSettings = {
    root: PROJECT_ROOT,
    dataDir,
    externalRpcUrl: options.externalRpcUrl,
    chainPort: ports.chain,
    nodePort: ports.node,
    nodeHost: "127.0.0.1",
    rollupHttpPort: ports.rollupHttp,
    apiPort: ports.api,
    rollups: options.rollups ?? "v1",
    inputBoxAddress: options.rollups === "v2" ? V2_DEFAULTS.inputBoxAddress : DEFAULTS.inputBoxAddress,
    dappAddress: options.rollups === "v2" ? V2_DEFAULTS.applicationAddress : DEFAULTS.dappAddress,
    privateKey: DEFAULTS.privateKey,
    // Every replica's wallet writes as the api does, so each is an admin of the dapp.
    dappAdmins: replicaWallets.join(","),
    replicas,
    readers:
      readerCount === 0
        ? undefined
        : { nodePorts: readerPorts.slice(0, readerCount), rollupHttpPorts: readerPorts.slice(readerCount), ...(options.readerRpcUrls === undefined ? {} : { rpcUrls: options.readerRpcUrls }) },
    ...(options.quorum === undefined ? {} : { quorum: quorumOf(options.quorum) }),
    ...(options.apiNodeUrl === undefined ? {} : { apiNodeUrl: options.apiNodeUrl }),
    // As npm start: on a chain of its own, the registry and the gate beside the application.
    ...(options.externalRpcUrl === undefined ? { contracts: predictedContracts(privateKeyToAccount(STACK_DEPLOYER_KEY).address) } : {}),
    ...(options.publish === true ? { publisher: { port: publisherPort as number } } : {}),
    ...((options.index ?? options.api === true) ? { index: { port: indexPort as number } } : {}),
    dappCommand: options.dappCommand ?? testDappCommand(),
    compiledDir: compiledDir(),
    api: options.api === true,
    attestor: options.attestor === true ? { ports: [ports.attestor, ...extraAttestorPorts], caFiles: options.attestorCaFiles ?? "" } : undefined,
    demoProvider: options.demoProvider === true ? { port: ports.demoProvider } : undefined,
    // The chain's request log is read by no suite (devnode/hardhat.config.cjs).
    env: { CHAIN_LOGGING: "off", ...options.env },
    logDir: join(dataDir, "logs"),
  };
  const supervisor = new Supervisor(settings, {
    restarts: options.restarts === true,
    readyTimeoutMs: (options.readyTimeoutMs ?? 60_000) * SLOW_DAPP_FACTOR,
    log: (line) => void supervisorLines.push(line),
    statusFile: stackStatusPath(settings),
    ...(options.stopBoundMs === undefined ? {} : { stopBoundMs: options.stopBoundMs }),
    onStackDown: (reason) => (downReason ??= reason),
  });
  const logs = (piece: PieceName): string => {
    const path = supervisor.logPath(piece);
    return path !== undefined && existsSync(path) ? readFileSync(path, "utf8") : "";
  };
  try {
    await supervisor.startAll();
  } catch (error) {
    await supervisor.stopAll();
    const tails = supervisor.pieces().map((piece) => `--- ${piece} ---\n${logs(piece).split("\n").slice(-30).join("\n")}`);
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${tails.join("\n")}`);
  }

  const urls = stackUrls(settings);
  const client = new RollupClient({
    rpcUrl: urls.rpc,
    nodeUrl: urls.node,
    inputBoxAddress: settings.inputBoxAddress,
    dappAddress: settings.dappAddress,
    rollups: settings.rollups,
  });
  let stopped = false;
  return {
    urls,
    ports,
    addresses: { inputBox: settings.inputBoxAddress, dapp: settings.dappAddress, admin },
    contracts: settings.contracts,
    publisherUrl: settings.publisher === undefined ? undefined : `http://127.0.0.1:${settings.publisher.port}`,
    rollups: settings.rollups,
    replicaWallets,
    apiReplicaUrls: replicas === undefined ? [urls.api] : replicas.ports.map((port) => `http://127.0.0.1:${port}`),
    dataDir,
    pieces: supervisor.pieces(),
    client,
    send: (input, sender = 0) => client.send(input, sender),
    inspect: (query, method = "GET") => client.inspect(query, method),
    graphql: (query, variables) => client.graphql(query, variables),
    kill: (piece, signal) => supervisor.kill(piece, signal),
    start: (piece) => supervisor.start(piece),
    restart: (piece) => supervisor.restart(piece),
    isRunning: (piece) => supervisor.isRunning(piece),
    pid: (piece) => supervisor.pid(piece),
    logs,
    supervisorLog: () => [...supervisorLines],
    downReason: () => downReason,
    status: () => supervisor.status(),
    processes: () => supervisor.pieces().flatMap((piece) => {
      const pid = supervisor.pid(piece);
      return pid === undefined ? [] : processesOf(pid);
    }),
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      await supervisor.stopAll();
      if (ownsDataDir && stopOptions.keepDataDir !== true) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Where reader k of a stack started with `readers` keeps its record and its dapp's database (as `npm start` puts it). */
export function readerDataDirOf(stack: Pick<TestStack, "dataDir">, k: number): string {
  return readerDataDir(stack, k);
}

/**
 * The dapp the suites' stacks run: TEST_DAPP_COMMAND (set by `npm run riscv64 -- e2e`: the riscv64 one under
 * qemu); TEST_DAPP_BUNDLE=1, dist/'s bundle; otherwise the bundle built once for the run
 * (test/support/global-setup.ts, TEST_DAPP_BUILT), or the sources through tsx when there is none.
 */
export function testDappCommand(): readonly string[] | string {
  const command = nonEmpty(process.env.TEST_DAPP_COMMAND);
  if (command !== undefined) return command;
  if (process.env.TEST_DAPP_BUNDLE === "1") return defaultDappCommand(true);
  const built = nonEmpty(process.env.TEST_DAPP_BUILT);
  return built === undefined ? defaultDappCommand(false) : [process.execPath, built];
}

/** The suites' dapp (testDappCommand) as one shell command, for DAPP_COMMAND and shells that wrap it. */
export function testDappShellCommand(): string {
  const dapp = testDappCommand();
  return typeof dapp === "string" ? dapp : dapp.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
}

/** The processes compiled once for the run (test/support/global-setup.ts), or undefined: the sources through tsx. */
export function compiledDir(): string | undefined {
  return nonEmpty(process.env.TEST_PROCESSES_BUILT);
}

/** What the suites compile besides the stack's processes and the commands: test and bench processes they start or fork. */
export const TEST_PROCESS_ENTRIES = ["test/support/lying-prover.ts", "test/support/stock-attestor.ts", "bench/direct-node.ts", "bench/echo-server.ts"] as const;

type ProcessEntry = (typeof PROCESS_ENTRIES)[number] | (typeof TEST_PROCESS_ENTRIES)[number] | `scripts/${string}.ts`;

/**
 * node's arguments for one of the stack's Node processes, an `npm run` command (`scripts/x.ts`) or a test
 * process, as the suites' stacks start them: compiled for the run (toolkit/process-build.ts), or the
 * sources through tsx.
 */
export function processArgs(entry: ProcessEntry): string[] {
  const { module, execArgv } = processModule(entry);
  return [...execArgv, module];
}

/** The same for `fork`: the module to run and node's arguments before it. */
export function processModule(entry: ProcessEntry): { module: string; execArgv: string[] } {
  const dir = compiledDir();
  return dir === undefined ? { module: join(PROJECT_ROOT, entry), execArgv: ["--import", "tsx"] } : { module: compiledPath(dir, entry), execArgv: [] };
}

/** ProverSettings.proverModule for a ProverPool a suite makes itself, when the run compiled the prover. */
export function compiledProver(): { proverModule?: string } {
  const dir = compiledDir();
  return dir === undefined ? {} : { proverModule: compiledPath(dir, "attestor/prover.ts") };
}

/** The same as PROVER_MODULE, for the api or `npm run prove` a suite starts: provers start without tsx. */
export function proverModuleEnv(): Record<string, string> {
  const { proverModule } = compiledProver();
  return proverModule === undefined ? {} : { PROVER_MODULE: proverModule };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * How much longer waits on the dapp may take: 4 with TEST_DAPP_SLOW=1 (an emulated riscv64 dapp starts in
 * seconds, not milliseconds); 1 otherwise. Tests scale their own waits on the dapp by it.
 */
export const SLOW_DAPP_FACTOR = process.env.TEST_DAPP_SLOW === "1" ? 4 : 1;

/** How many inputs the InputBox holds for the stack's application, read from the chain itself. */
export async function inputsOnChain(stack: TestStack): Promise<number> {
  return Number(
    await stack.client.publicClient.readContract({
      address: stack.addresses.inputBox,
      abi: inputBoxAbi,
      functionName: "getNumberOfInputs",
      args: [stack.addresses.dapp],
    }),
  );
}
