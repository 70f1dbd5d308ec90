/**
 * The local stack as child processes: chain (hardhat node), devnode, dapp and api. One implementation,
 * used by `npm start` (scripts/start.ts) and by the end-to-end tests (test/support/stack.ts).
 *
 * Each child runs in its own process group, so a signal reaches everything it spawned, and stopping
 * the stack never leaves a grandchild behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from "node:fs";
import { join, resolve } from "node:path";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import type { Address } from "viem";

export const PIECES = ["chain", "devnode", "dapp", "provider", "attestor", "api"] as const;
export type PieceName = (typeof PIECES)[number];

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
  inputBoxAddress: Address;
  dappAddress: Address;
  privateKey: string;
  /** Initial admins handed to the dapp (the api's wallet by default). */
  dappAdmins: string;
  /** The dapp's command line: an argv, or a shell command string (DAPP_COMMAND). */
  dappCommand: readonly string[] | string;
  /** Start the api: `true`, `false`, or `"auto"` (when api/main.ts exists). */
  api: boolean | "auto";
  /** The TLS attestor (attestor/server.ts) on loopback, or undefined to run none. */
  attestor: { port: number; caFiles: string } | undefined;
  /** The demo HTTPS provider (scripts/demo-provider.ts), or undefined to run none. */
  demoProvider: { port: number } | undefined;
  /** Extra environment for every child (after the stack's own variables, so it can override them). */
  env: Readonly<Record<string, string>>;
  /** Where the children's output goes: files under this directory, or (undefined) the console. */
  logDir: string | undefined;
}

export interface StackUrls {
  attestor: string | undefined;
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
    attestor: s.attestor === undefined ? undefined : `ws://127.0.0.1:${s.attestor.port}/ws`,
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
    env.ATTESTOR_URL = `ws://127.0.0.1:${s.attestor.port}/ws`;
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

/** The command line and environment of each piece; `undefined` when the piece is not part of this stack. */
export function pieceCommand(piece: PieceName, s: StackSettings): Command | undefined {
  const urls = stackUrls(s);
  const tsx = (file: string): Pick<Command, "file" | "args"> => ({
    file: process.execPath,
    args: ["--import", "tsx", file],
  });
  switch (piece) {
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
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          DATA_DIR: s.dataDir,
        },
      };
    case "dapp": {
      const env = { ROLLUP_HTTP_SERVER_URL: urls.rollupHttp, DAPP_ADMINS: s.dappAdmins, DATA_DIR: s.dataDir };
      if (typeof s.dappCommand === "string") return { file: "/bin/sh", args: ["-c", s.dappCommand], env };
      const [file, ...args] = s.dappCommand;
      if (file === undefined) throw new Error("the dapp command is empty");
      return { file, args, env };
    }
    case "provider":
      if (s.demoProvider === undefined) return undefined;
      return { ...tsx("scripts/demo-provider.ts"), env: { DEMO_PROVIDER_PORT: String(s.demoProvider.port), DATA_DIR: s.dataDir } };
    case "attestor":
      if (s.attestor === undefined) return undefined;
      return {
        ...tsx("attestor/server.ts"),
        env: { ATTESTOR_PORT: String(s.attestor.port), ATTESTOR_HOST: "127.0.0.1", ATTESTOR_CA_FILES: attestorCaFiles(s), DATA_DIR: s.dataDir },
      };
    case "api":
      if (!apiEnabled(s)) return undefined;
      return {
        ...tsx("api/main.ts"),
        env: {
          ...apiProviderEnv(s),
          API_PORT: String(s.apiPort),
          ROLLUP_URL: urls.node,
          GRAPHQL_URL: urls.graphql,
          RPC_URL: urls.rpc,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          PRIVATE_KEY: s.privateKey,
          DATA_DIR: s.dataDir,
        },
      };
  }
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
  switch (piece) {
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
    case "api":
      return async () => (await fetch(`${urls.api}/healthcheck`, { signal: timeout() })).ok;
    case "provider":
      return () => acceptsConnections(s.demoProvider?.port ?? 0);
    case "attestor":
      // Its HTTP server answers 404 outside its WebSocket and browser paths: any answer means it listens.
      return async () => (await fetch(`http://127.0.0.1:${s.attestor?.port ?? 0}/`, { signal: timeout() })).status > 0;
  }
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
  /** Pieces restarted (with backoff) when they exit on their own. */
  autoRestart: readonly PieceName[];
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
    return PIECES.filter((piece) => pieceCommand(piece, this.settings) !== undefined);
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
    const child = spawn(command.file, command.args, {
      cwd: this.settings.root,
      env: { ...process.env, ...command.env, ...this.settings.env },
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
    for (const piece of [...PIECES].reverse()) await this.stop(piece);
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
    if (!this.options.autoRestart.includes(piece)) {
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
