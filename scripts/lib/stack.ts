/**
 * The local stack as child processes: chain (hardhat node), devnode, dapp and api. One implementation,
 * used by `npm start` (scripts/start.ts) and by the end-to-end tests (test/support/stack.ts).
 *
 * Each child runs in its own process group, so a signal reaches everything it spawned, and stopping
 * the stack never leaves a grandchild behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, writeFileSync, type WriteStream } from "node:fs";
import { join, resolve } from "node:path";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import type { Address } from "viem";
import { BALANCER_CHECK_HEADER } from "../../api/rate-limit.ts";
import type { RollupsVersion } from "../../devnode/config.ts";

/**
 * The kinds of piece, in start order. With replicas, "api" is `api-1` ... `api-N` behind the balancer;
 * with several attestors, "attestor" is followed by `attestor-2` ... `attestor-N`.
 */
export const PIECES = ["chain", "devnode", "dapp", "provider", "attestor", "redis", "api", "balancer"] as const;
export type PieceKind = (typeof PIECES)[number];
export type PieceName = PieceKind | `api-${number}` | `attestor-${number}`;

/** The kind of a piece: `api-3` is an api, `attestor-2` an attestor. */
export function kindOf(piece: PieceName): PieceKind {
  if (piece.startsWith("api-")) return "api";
  return piece.startsWith("attestor-") ? "attestor" : (piece as PieceKind);
}

/** Which attestor a piece is, 1-based (`attestor` is the first). */
function attestorNumber(piece: PieceName): number {
  return piece.startsWith("attestor-") ? Number(piece.slice("attestor-".length)) : 1;
}

/** The key file (in DATA_DIR) of attestor `k`: the first keeps the name it always had. */
export function attestorKeyName(k: number): string {
  return k === 1 ? "attestor-key" : `attestor-key-${k}`;
}

/** Api replicas behind a load balancer (`npm start -- --api-replicas N`, docs/operations.md). */
export interface ReplicaSettings {
  /** Each replica's own port on loopback; the balancer listens on `apiPort`. */
  ports: readonly number[];
  /** Each replica's own wallet (no nonce fights between replicas). */
  privateKeys: readonly string[];
  /** The Redis the replicas share rate limits and login nonces through. */
  redisPort: number;
  /**
   * The balancer itself sits behind a trusted proxy (TRUST_PROXY): it passes on the client address that
   * proxy sent. Otherwise it sets X-Forwarded-For to the address it sees, whatever the client sent.
   */
  trustForwarded: boolean;
}

/** Everything needed to run the stack; scripts/lib/stack-config.ts builds it from the environment. */
export interface StackSettings {
  /** Project root: the children's working directory. */
  root: string;
  dataDir: string;
  /** When set, no chain is started and the devnode treats this chain as external. */
  externalRpcUrl: string | undefined;
  chainPort: number;
  nodePort: number;
  nodeHost: string;
  rollupHttpPort: number;
  apiPort: number;
  /** The Cartesi Rollups the devnode stands in for, and the api talks to. */
  rollups: RollupsVersion;
  inputBoxAddress: Address;
  dappAddress: Address;
  privateKey: string;
  /** Initial admins handed to the dapp (the api's wallet by default). */
  dappAdmins: string;
  /** The dapp's command line: an argv, or a shell command string (DAPP_COMMAND). */
  dappCommand: readonly string[] | string;
  /** Start the api: `true`, `false`, or `"auto"` (when api/main.ts exists). */
  api: boolean | "auto";
  /** The TLS attestors (attestor/server.ts) on loopback, one per port (the first is "attestor"); undefined runs none. */
  attestor: { ports: readonly number[]; caFiles: string } | undefined;
  /** The demo HTTPS provider (scripts/demo-provider.ts), or undefined to run none. */
  demoProvider: { port: number } | undefined;
  /** Api replicas behind haproxy, with Redis; undefined runs one api on `apiPort`. */
  replicas?: ReplicaSettings | undefined;
  /** Extra environment for every child (after the stack's own variables, so it can override them). */
  env: Readonly<Record<string, string>>;
  /** Where the children's output goes: files under this directory, or (undefined) the console. */
  logDir: string | undefined;
}

export interface StackUrls {
  /** The first attestor's WebSocket. */
  attestor: string | undefined;
  /** Every attestor's WebSocket, in order (a schema that requires k uses the first k). */
  attestors: string[];
  demoProvider: string | undefined;
  rpc: string;
  node: string;
  inspect: string;
  graphql: string;
  rollupHttp: string;
  api: string;
  ws: string;
}

function loopback(host: string): string {
  return host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
}

export function stackUrls(s: StackSettings): StackUrls {
  const node = `http://${loopback(s.nodeHost)}:${s.nodePort}`;
  return {
    attestor: s.attestor?.ports[0] === undefined ? undefined : `ws://127.0.0.1:${s.attestor.ports[0]}/ws`,
    attestors: (s.attestor?.ports ?? []).map((port) => `ws://127.0.0.1:${port}/ws`),
    demoProvider: s.demoProvider === undefined ? undefined : `https://localhost:${s.demoProvider.port}`,
    rpc: s.externalRpcUrl ?? `http://127.0.0.1:${s.chainPort}`,
    node,
    inspect: `${node}/inspect`,
    graphql: `${node}/graphql`,
    rollupHttp: `http://127.0.0.1:${s.rollupHttpPort}`,
    api: `http://127.0.0.1:${s.apiPort}`,
    ws: `ws://127.0.0.1:${s.apiPort}/ws`,
  };
}

/** The dapp command for `npm start`: the TypeScript source, or the bundle from `npm run build`. */
export function defaultDappCommand(bundle: boolean): readonly string[] {
  return bundle ? [process.execPath, "dist/dapp/main.js"] : [process.execPath, "--import", "tsx", "dapp/main.ts"];
}

export function apiEnabled(s: StackSettings): boolean {
  return s.api === "auto" ? existsSync(join(s.root, "api", "main.ts")) : s.api;
}

/** Where the demo provider keeps its local CA (scripts/lib/local-ca.ts). */
export function demoProviderCa(s: StackSettings): string {
  return join(s.dataDir, "demo-provider", "ca.pem");
}

/** Root certificates the attestor's TLS library needs beyond its own list: the operator's, and the demo CA. */
function attestorCaFiles(s: StackSettings): string {
  const files = (s.attestor?.caFiles ?? "").split(",").filter((f) => f.trim() !== "");
  if (s.demoProvider !== undefined) files.push(demoProviderCa(s));
  return files.join(",");
}

/** The api's environment for the attestor and the demo provider. */
function apiProviderEnv(s: StackSettings): Record<string, string> {
  const env: Record<string, string> = {};
  if (s.attestor !== undefined) {
    env.ATTESTOR_URL = stackUrls(s).attestors.join(",");
    env.ATTESTOR_CA_FILES = attestorCaFiles(s);
  }
  if (s.demoProvider !== undefined) {
    // The demo provider is on loopback with a local CA: the api's own fetch must allow and trust it too.
    const allowed = (process.env.PROVIDER_ALLOWED_HOSTS ?? "").split(",").filter((h) => h.trim() !== "");
    env.PROVIDER_ALLOWED_HOSTS = [...allowed, "localhost"].join(",");
    env.NODE_EXTRA_CA_CERTS = demoProviderCa(s);
  }
  return env;
}

interface Command {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
}

/** The pieces a stack runs, in start order. */
export function stackPieces(s: StackSettings): PieceName[] {
  const out: PieceName[] = [];
  for (const kind of PIECES) {
    if (kind === "api" && s.replicas !== undefined && apiEnabled(s)) {
      s.replicas.ports.forEach((_, i) => out.push(`api-${i + 1}`));
    } else if (pieceCommand(kind, s) !== undefined) {
      out.push(kind);
      if (kind === "attestor") for (let k = 2; k <= (s.attestor?.ports.length ?? 1); k++) out.push(`attestor-${k}`);
    }
  }
  return out;
}

/** The replica number of `api-k` (1-based), or undefined for the single api. */
function replicaIndex(piece: PieceName): number | undefined {
  return piece.startsWith("api-") ? Number(piece.slice(4)) : undefined;
}

/** haproxy's configuration for the replicas, written into DATA_DIR (docs/operations.md explains each line). */
export function balancerConfig(s: StackSettings): string {
  const replicas = s.replicas;
  if (replicas === undefined) throw new Error("no replicas");
  return [
    // No global maxconn: haproxy then sizes it from the file-descriptor limit it is given.
    "global",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 65s",
    "  timeout server 65s",
    "  timeout http-keep-alive 60s",
    "  timeout tunnel 1h",
    // Only a connection that never reached a replica is retried, on another one: a request that reached a
    // replica may have been written, and sending it again could write it twice.
    "  retries 3",
    "  option redispatch",
    "  retry-on conn-failure",
    "frontend api",
    // Where the single api would listen (its HOST default): every interface.
    `  bind 0.0.0.0:${s.apiPort}`,
    // The client's address as the replicas see it (they trust this header): the client's own header only
    // when a trusted proxy in front of the balancer wrote it.
    replicas.trustForwarded ? "  option forwardfor if-none" : "  http-request set-header X-Forwarded-For %[src]",
    // Only the balancer's own checks may say they are checks (api/rate-limit.ts BALANCER_CHECK_HEADER).
    `  http-request del-header ${BALANCER_CHECK_HEADER}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
    "  option httpchk",
    `  http-check send meth GET uri /healthcheck hdr ${BALANCER_CHECK_HEADER} 1`,
    "  http-check expect status 200",
    ...replicas.ports.map((port, i) => `  server api-${i + 1} 127.0.0.1:${port} check inter 500 fall 2 rise 1`),
    "",
  ].join("\n");
}

export function balancerConfigPath(s: StackSettings): string {
  return join(s.dataDir, "haproxy.cfg");
}

/** The command line and environment of each piece; `undefined` when the piece is not part of this stack. */
export function pieceCommand(piece: PieceName, s: StackSettings): Command | undefined {
  const urls = stackUrls(s);
  const kind = kindOf(piece);
  const tsx = (file: string): Pick<Command, "file" | "args"> => ({
    file: process.execPath,
    args: ["--import", "tsx", file],
  });
  switch (kind) {
    case "chain":
      if (s.externalRpcUrl !== undefined) return undefined;
      return {
        file: join(s.root, "node_modules", ".bin", "hardhat"),
        args: ["node", "--hostname", "127.0.0.1", "--port", String(s.chainPort), "--config", "devnode/hardhat.config.cjs"],
        env: { HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" },
      };
    case "devnode":
      return {
        ...tsx("devnode/main.ts"),
        env: {
          RPC_URL: urls.rpc,
          DEVNODE_CHAIN: s.externalRpcUrl === undefined ? "managed" : "external",
          NODE_PORT: String(s.nodePort),
          NODE_HOST: s.nodeHost,
          ROLLUP_HTTP_PORT: String(s.rollupHttpPort),
          ROLLUPS: s.rollups,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          DATA_DIR: s.dataDir,
        },
      };
    case "dapp": {
      const env = { ROLLUP_HTTP_SERVER_URL: urls.rollupHttp, DAPP_ADMINS: s.dappAdmins, DATA_DIR: s.dataDir, DAPP_ADDRESS: s.dappAddress };
      if (typeof s.dappCommand === "string") return { file: "/bin/sh", args: ["-c", s.dappCommand], env };
      const [file, ...args] = s.dappCommand;
      if (file === undefined) throw new Error("the dapp command is empty");
      return { file, args, env };
    }
    case "provider":
      if (s.demoProvider === undefined) return undefined;
      return { ...tsx("scripts/demo-provider.ts"), env: { DEMO_PROVIDER_PORT: String(s.demoProvider.port), DATA_DIR: s.dataDir } };
    case "attestor": {
      if (s.attestor === undefined) return undefined;
      const k = attestorNumber(piece);
      return {
        ...tsx("attestor/server.ts"),
        env: {
          ATTESTOR_PORT: String(s.attestor.ports[k - 1]),
          ATTESTOR_HOST: "127.0.0.1",
          ATTESTOR_CA_FILES: attestorCaFiles(s),
          ATTESTOR_KEY_FILE: attestorKeyName(k),
          DATA_DIR: s.dataDir,
        },
      };
    }
    case "redis": {
      if (s.replicas === undefined || !apiEnabled(s)) return undefined;
      const dir = join(s.dataDir, "redis");
      mkdirSync(dir, { recursive: true });
      return {
        file: "redis-server",
        // Limits and nonces live for minutes: nothing is worth writing to disk.
        args: ["--port", String(s.replicas.redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"],
        env: {},
      };
    }
    case "balancer": {
      if (s.replicas === undefined || !apiEnabled(s)) return undefined;
      writeFileSync(balancerConfigPath(s), balancerConfig(s));
      // -db: stay in the foreground, so the stack supervises it like any other piece.
      return { file: "haproxy", args: ["-db", "-f", balancerConfigPath(s)], env: {} };
    }
    case "api": {
      if (!apiEnabled(s)) return undefined;
      const replica = replicaIndex(piece);
      const replicaEnv: Record<string, string> =
        replica === undefined || s.replicas === undefined
          ? {}
          : {
              API_PORT: String(s.replicas.ports[replica - 1]),
              HOST: "127.0.0.1",
              PRIVATE_KEY: s.replicas.privateKeys[replica - 1] ?? s.privateKey,
              REDIS_URL: `redis://127.0.0.1:${s.replicas.redisPort}`,
              API_REPLICA: piece,
              API_REPLICA_COUNT: String(s.replicas.ports.length),
              TRUST_PROXY: "1",
            };
      return {
        ...tsx("api/main.ts"),
        env: {
          ...apiProviderEnv(s),
          API_PORT: String(s.apiPort),
          ROLLUP_URL: urls.node,
          GRAPHQL_URL: urls.graphql,
          RPC_URL: urls.rpc,
          ROLLUPS: s.rollups,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          PRIVATE_KEY: s.privateKey,
          DATA_DIR: s.dataDir,
          ...replicaEnv,
        },
      };
    }
  }
}

/** The chain id the JSON-RPC at `url` answers. */
async function chainIdAt(url: string): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await response.json()) as { result?: string };
  if (typeof answer.result !== "string") throw new Error(`${url} did not answer eth_chainId`);
  return Number.parseInt(answer.result, 16);
}

// ---- readiness ----

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function probe(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}

/** True once the piece answers as a ready piece does. */
export function readinessCheck(piece: PieceName, s: StackSettings): () => Promise<boolean> {
  const urls = stackUrls(s);
  const timeout = () => AbortSignal.timeout(2_000);
  const replica = replicaIndex(piece);
  switch (kindOf(piece)) {
    case "chain":
      return async () => {
        const response = await fetch(urls.rpc, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
          signal: timeout(),
        });
        return response.ok && "result" in ((await response.json()) as object);
      };
    case "devnode":
      return async () => (await fetch(`${urls.node}/healthz`, { signal: timeout() })).ok;
    case "dapp":
      // The dapp is ready when it holds a connection to the rollup HTTP server.
      return async () => {
        const response = await fetch(`${urls.node}/healthz`, { signal: timeout() });
        return response.ok && ((await response.json()) as { dappConnected?: boolean }).dappConnected === true;
      };
    case "api": {
      const port = replica === undefined ? s.apiPort : s.replicas?.ports[replica - 1];
      return async () => (await fetch(`http://127.0.0.1:${port}/healthcheck`, { signal: timeout() })).ok;
    }
    case "balancer":
      return async () => (await fetch(`${urls.api}/healthcheck`, { signal: timeout() })).ok;
    case "redis":
      return () => redisAnswers(s.replicas?.redisPort ?? 0);
    case "provider":
      return () => acceptsConnections(s.demoProvider?.port ?? 0);
    case "attestor":
      // Its HTTP server answers 404 outside its WebSocket and browser paths: any answer means it listens.
      return async () => (await fetch(`http://127.0.0.1:${s.attestor?.ports[attestorNumber(piece) - 1] ?? 0}/`, { signal: timeout() })).status > 0;
  }
}

/** True once Redis answers PING (it accepts connections a little before it serves them). */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write("PING\r\n"));
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolveProbe(false);
    });
    socket.once("data", (data) => {
      socket.destroy();
      resolveProbe(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolveProbe(false));
  });
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolveProbe(true);
    });
    socket.once("error", () => resolveProbe(false));
  });
}

// ---- processes ----

export interface SupervisorOptions {
  /** Kinds of piece restarted (with backoff) when they exit on their own ("api" covers every replica). */
  autoRestart: readonly PieceKind[];
  /** How long each piece may take to become ready. */
  readyTimeoutMs: number;
  /** Stack messages (not the children's output). */
  log: (line: string) => void;
  /** A piece exited on its own and is not restarted. */
  onUnexpectedExit?: (piece: PieceName, code: number | null, signal: NodeJS.Signals | null) => void;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  /** Set when the stack itself stops or kills the piece, so the exit is not a crash. */
  expected: boolean;
  startedAt: number;
}

/** Starts, watches, restarts and stops the stack's child processes. */
export class Supervisor {
  private readonly running = new Map<PieceName, Running>();
  private readonly restartDelay = new Map<PieceName, number>();
  private readonly restartTimers = new Map<PieceName, NodeJS.Timeout>();
  private readonly logs = new Map<PieceName, WriteStream>();
  private stopping = false;

  constructor(
    readonly settings: StackSettings,
    private readonly options: SupervisorOptions,
  ) {
    // Last resort when the parent dies without stopping the stack (a test runner killed, an uncaught error).
    process.once("exit", this.killAllNow);
  }

  /** The pieces this stack runs, in start order. */
  pieces(): PieceName[] {
    return stackPieces(this.settings);
  }

  isRunning(piece: PieceName): boolean {
    return this.running.has(piece);
  }

  pid(piece: PieceName): number | undefined {
    return this.running.get(piece)?.child.pid;
  }

  /** Log file of a piece (when the stack logs to files). */
  logPath(piece: PieceName): string | undefined {
    if (this.settings.logDir !== undefined) return join(this.settings.logDir, `${piece}.log`);
    return piece === "chain" ? join(this.settings.dataDir, "chain.log") : undefined;
  }

  /** Starts every piece in order, each once the previous one is ready. */
  async startAll(): Promise<void> {
    for (const piece of this.pieces()) await this.start(piece);
  }

  /** Starts one piece and waits until it is ready; fails with the piece's exit if it dies first. */
  async start(piece: PieceName): Promise<void> {
    if (this.running.has(piece)) return;
    const command = pieceCommand(piece, this.settings);
    if (command === undefined) throw new Error(`${piece} is not part of this stack`);
    // A v1 dapp is told the chain owners sign consent on (a v2 input says it): the chain's own answer,
    // so a validator's dapp and the claimer's judge the same signatures alike.
    const chain = kindOf(piece) === "dapp" ? { DAPP_CHAIN_ID: String(await chainIdAt(stackUrls(this.settings).rpc)) } : {};
    const child = spawn(command.file, command.args, {
      cwd: this.settings.root,
      env: { ...process.env, ...command.env, ...chain, ...this.settings.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let exitInfo = "";
    const exited = new Promise<void>((resolveExit) => {
      child.once("exit", (code, signal) => {
        exitInfo = signal !== null ? `signal ${signal}` : `code ${code}`;
        this.onExit(piece, running, code, signal);
        resolveExit();
      });
      child.once("error", (error) => {
        exitInfo = error.message;
        this.onExit(piece, running, null, null);
        resolveExit();
      });
    });
    const running: Running = { child, exited, expected: false, startedAt: Date.now() };
    this.running.set(piece, running);
    this.pipeOutput(piece, child);

    const ready = readinessCheck(piece, this.settings);
    const deadline = Date.now() + this.options.readyTimeoutMs;
    for (;;) {
      if (this.running.get(piece) !== running) {
        throw new Error(`${piece} exited while starting (${exitInfo})${this.logHint(piece)}`);
      }
      if (await probe(ready)) return;
      if (Date.now() > deadline) {
        throw new Error(`${piece} was not ready after ${this.options.readyTimeoutMs} ms${this.logHint(piece)}`);
      }
      await sleep(100);
    }
  }

  /** Sends `signal` to a piece's process group and waits for it to exit (unless the signal does not end it). */
  async kill(piece: PieceName, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const running = this.running.get(piece);
    if (running === undefined) return;
    const ends = signal === "SIGKILL" || signal === "SIGTERM" || signal === "SIGINT";
    if (ends) running.expected = true;
    signalGroup(running.child, signal);
    if (ends) await running.exited;
  }

  /** Stops a piece: SIGTERM, then SIGKILL after a grace period. */
  async stop(piece: PieceName, graceMs = 5_000): Promise<void> {
    const timer = this.restartTimers.get(piece);
    if (timer !== undefined) clearTimeout(timer);
    this.restartTimers.delete(piece);
    const running = this.running.get(piece);
    if (running === undefined) return;
    running.expected = true;
    signalGroup(running.child, "SIGTERM");
    const killer = setTimeout(() => signalGroup(running.child, "SIGKILL"), graceMs);
    await running.exited;
    clearTimeout(killer);
    // The group may still hold children of the piece (a shell's command, a tsx child): end them too.
    signalGroup(running.child, "SIGKILL");
  }

  async restart(piece: PieceName): Promise<void> {
    await this.stop(piece);
    await this.start(piece);
  }

  /** Stops everything, in reverse start order (api first, chain last). */
  async stopAll(): Promise<void> {
    this.stopping = true;
    // What runs, in start order by kind (replicas by number), stopped from the last.
    const order = (piece: PieceName): number => PIECES.indexOf(kindOf(piece)) * 1000 + (replicaIndex(piece) ?? 0) + (kindOf(piece) === "attestor" ? attestorNumber(piece) : 0);
    const running = [...this.running.keys()].sort((a, b) => order(a) - order(b));
    for (const piece of running.reverse()) await this.stop(piece);
    for (const stream of this.logs.values()) stream.end();
    this.logs.clear();
    process.off("exit", this.killAllNow);
  }

  private readonly killAllNow = (): void => {
    for (const running of this.running.values()) signalGroup(running.child, "SIGKILL");
  };

  private onExit(piece: PieceName, running: Running, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.running.get(piece) !== running) return;
    this.running.delete(piece);
    if (running.expected || this.stopping) return;
    if (!this.options.autoRestart.includes(kindOf(piece))) {
      this.options.onUnexpectedExit?.(piece, code, signal);
      return;
    }
    // Back off when it keeps dying; a piece that ran a while starts over at 1 s.
    const previous = Date.now() - running.startedAt > 30_000 ? 500 : (this.restartDelay.get(piece) ?? 500);
    const delay = Math.min(previous * 2, 10_000);
    this.restartDelay.set(piece, delay);
    this.options.log(`${piece} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`);
    this.restartTimers.set(
      piece,
      setTimeout(() => {
        this.restartTimers.delete(piece);
        if (this.stopping) return;
        this.start(piece).catch((error: unknown) =>
          this.options.log(`${piece} did not come back: ${error instanceof Error ? error.message : String(error)}`),
        );
      }, delay),
    );
  }

  private pipeOutput(piece: PieceName, child: ChildProcess): void {
    const path = this.logPath(piece);
    if (path !== undefined) {
      let stream = this.logs.get(piece);
      if (stream === undefined) {
        mkdirSync(resolve(path, ".."), { recursive: true });
        stream = createWriteStream(path, { flags: "a" });
        this.logs.set(piece, stream);
      }
      child.stdout?.pipe(stream, { end: false });
      child.stderr?.pipe(stream, { end: false });
      return;
    }
    for (const source of [child.stdout, child.stderr]) {
      if (source === null) continue;
      const target = source === child.stderr ? process.stderr : process.stdout;
      createInterface({ input: source }).on("line", (line) => {
        // The pieces already prefix their own lines ("[dapp] ..."); add one only when they do not.
        target.write(line.startsWith("[") ? `${line}\n` : `[${piece}] ${line}\n`);
      });
    }
  }

  private logHint(piece: PieceName): string {
    const path = this.logPath(piece);
    return path === undefined ? "" : ` (see ${path})`;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
