/**
 * The local stack as child processes: the supervisor starts each piece (scripts/lib/stack-pieces.ts) in
 * order once the previous one is ready (scripts/lib/stack-readiness.ts), restarts the kinds it is told to
 * with backoff, sends their output to files or the console, and stops them in reverse order. One
 * implementation, used by `npm start` (scripts/start.ts) and by the end-to-end tests (test/support/stack.ts).
 *
 * Each child runs in its own process group, so a signal reaches everything it spawned, and stopping
 * the stack never leaves a grandchild behind.
 */
import { ensureStackContracts } from "./deploy-contracts.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  attestorNumber,
  kindOf,
  pieceCommand,
  PIECES,
  replicaIndex,
  stackPieces,
  stackUrls,
  type PieceKind,
  type PieceName,
  type StackSettings,
} from "./stack-pieces.ts";
import { chainIdAt, probe, readinessCheck } from "./stack-readiness.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
    const chain = kindOf(piece) === "dapp" || kindOf(piece) === "reader-dapp" ? { DAPP_CHAIN_ID: String(await chainIdAt(stackUrls(this.settings).rpc)) } : {};
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
      if (await probe(ready)) {
        // The devnode has placed the application: the registry and the gate go beside it (before the api).
        if (kindOf(piece) === "devnode" && this.settings.contracts !== undefined) await this.deployContracts();
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`${piece} was not ready after ${this.options.readyTimeoutMs} ms${this.logHint(piece)}`);
      }
      await sleep(100);
    }
  }

  /** The stack's registry and gate at their fixed addresses, deployed unless they are there already. */
  private async deployContracts(): Promise<void> {
    const found = await ensureStackContracts({ rpcUrl: stackUrls(this.settings).rpc, application: this.settings.dappAddress, rollups: this.settings.rollups });
    this.options.log(`${found.deployed ? "deployed" : "found"} the attestation registry ${found.registry} and the gate ${found.gate}`);
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
