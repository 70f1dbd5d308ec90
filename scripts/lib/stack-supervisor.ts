/**
 * The local stack as child processes: the supervisor starts each piece (scripts/lib/stack-pieces.ts) in
 * order once the previous one is ready (scripts/lib/stack-readiness.ts), applies the restart policy
 * (scripts/lib/stack-restarts.ts) to a piece that exits on its own, sends their output to files or the
 * console, and stops them in reverse order. One implementation, used by `npm start` (scripts/start.ts) and by
 * the end-to-end tests (test/support/stack.ts).
 *
 * Each child runs in its own process group, so a signal reaches everything it spawned; whatever is left of
 * a piece once it has exited (its group, a descendant that left it: scripts/lib/stack-processes.ts) is
 * killed, so a stopped stack leaves no process behind. Each child also holds a lifeline to the supervisor
 * (scripts/lib/stack-lifeline.ts): when the supervisor ends without stopping it (SIGKILL, a crash), the
 * piece's group stops itself. A stop of the whole stack takes at most its bound (stopBoundMs): what has
 * not exited by then is killed.
 */
import { ensureStackContracts } from "./deploy-contracts.ts";
import { withLifeline } from "./stack-lifeline.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, renameSync, writeFileSync, type WriteStream } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  kindOf,
  pieceCommand,
  PIECES,
  stackPieces,
  stackUrls,
  type PieceName,
  type StackSettings,
} from "./stack-pieces.ts";
import { groupAlive, killStragglers, processesOf, signalGroup, type ProcessId } from "./stack-processes.ts";
import { chainIdAt, probe, readinessCheck } from "./stack-readiness.ts";
import { DEFAULT_STOP_BOUND_MS, exitReason, ON_UNEXPECTED_EXIT, PIECE_GRACE_MS, RESTART_BACKOFF, RestartBook, type Backoff } from "./stack-restarts.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface SupervisorOptions {
  /**
   * Apply the restart policy (ON_UNEXPECTED_EXIT) to a piece that exits on its own: restart it with backoff,
   * or stop the stack (onStackDown). False: nothing is restarted and nothing stops (tests that kill and
   * start pieces themselves).
   */
  restarts: boolean;
  /** The restarts' waits and when to give up; RESTART_BACKOFF by default. */
  backoff?: Backoff;
  /** How long each piece may take to become ready. */
  readyTimeoutMs: number;
  /** Stack messages (not the children's output). */
  log: (line: string) => void;
  /** The stack cannot go on: a piece that holds the state exited, or a piece kept failing; `reason` says which. */
  onStackDown?: (reason: string) => void;
  /** Where to keep the pieces' status and restart counts as JSON (read by the api: GET /api/core/status). */
  statusFile?: string;
  /** Longest a stop of the whole stack takes; pieces still running then are killed. DEFAULT_STOP_BOUND_MS by default. */
  stopBoundMs?: number;
}

/** A piece that exited before it was ready; `exitCode` is its own (2: it refused its configuration). */
export class PieceStartError extends Error {
  override readonly name = "PieceStartError";
  constructor(
    readonly piece: PieceName,
    readonly exitCode: number | null,
    message: string,
  ) {
    super(message);
  }
}

/** What the status file says of a piece. */
export interface PieceStatus {
  piece: PieceName;
  running: boolean;
  pid: number | null;
  restarts: number;
  lastExit: { reason: string; at: number } | null;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  /** Set when the stack itself stops or kills the piece, so the exit is not a crash. */
  expected: boolean;
  /** Ready once: an exit before that is the start's failure, not a crash. */
  ready: boolean;
  startedAt: number;
  /** Its processes as last seen (at readiness): one that left the group is still found at the end. */
  known: ProcessId[];
}

/** Starts, watches, restarts and stops the stack's child processes. */
export class Supervisor {
  private readonly running = new Map<PieceName, Running>();
  private readonly restartTimers = new Map<PieceName, NodeJS.Timeout>();
  private readonly lastExits = new Map<PieceName, { reason: string; at: number }>();
  private readonly book: RestartBook;
  private readonly logs = new Map<PieceName, WriteStream>();
  private stopping = false;

  constructor(
    readonly settings: StackSettings,
    private readonly options: SupervisorOptions,
  ) {
    this.book = new RestartBook(options.backoff ?? RESTART_BACKOFF);
    // Last resort when the parent dies without stopping the stack (a test runner killed, an uncaught error).
    process.once("exit", this.killAllNow);
  }

  /** The pieces this stack runs, in start order. */
  pieces(): PieceName[] {
    return stackPieces(this.settings);
  }

  isRunning(piece: PieceName): boolean {
    return this.running.get(piece)?.ready === true;
  }

  pid(piece: PieceName): number | undefined {
    return this.running.get(piece)?.child.pid;
  }

  /** How many times the stack restarted each piece it restarted. */
  restartCounts(): Record<string, number> {
    return this.book.counts();
  }

  /** Every piece of the stack: running or not, its restarts and its last exit. */
  status(): PieceStatus[] {
    const counts = this.book.counts();
    return this.pieces().map((piece) => ({
      piece,
      running: this.isRunning(piece),
      pid: this.pid(piece) ?? null,
      restarts: counts[piece] ?? 0,
      lastExit: this.lastExits.get(piece) ?? null,
    }));
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
    // Checked after the last wait and before the spawn: a stopping stack starts nothing it would not stop.
    if (this.stopping) throw new Error(`${piece} not started: the stack is stopping`);
    const kept = withLifeline(command.file, command.args, PIECE_GRACE_MS);
    const child = spawn(kept.file, kept.args, {
      cwd: this.settings.root,
      env: { ...process.env, ...command.env, ...chain, ...this.settings.env },
      stdio: kept.stdio,
      detached: true,
    });
    let exit: { code: number | null; reason: string } = { code: null, reason: "" };
    const exited = new Promise<void>((resolveExit) => {
      child.once("exit", (code, signal) => {
        exit = { code, reason: exitReason(code, signal) };
        this.onExit(piece, running, exit.reason);
        resolveExit();
      });
      child.once("error", (error) => {
        exit = { code: null, reason: error.message };
        this.onExit(piece, running, exit.reason);
        resolveExit();
      });
    });
    const running: Running = { child, exited, expected: false, ready: false, startedAt: Date.now(), known: [] };
    this.running.set(piece, running);
    this.pipeOutput(piece, child);

    const ready = readinessCheck(piece, this.settings);
    const deadline = Date.now() + this.options.readyTimeoutMs;
    let lastProblem = "never checked";
    for (;;) {
      if (this.running.get(piece) !== running) {
        throw new PieceStartError(piece, exit.code, `${piece} exited while starting (${exit.reason})${this.logHint(piece)}`);
      }
      if (await probe(ready, (problem) => (lastProblem = problem))) {
        // The devnode has placed the application: the registry and the gate go beside it (before the api).
        if (kindOf(piece) === "devnode" && this.settings.contracts !== undefined) await this.deployContracts();
        if (this.running.get(piece) !== running) continue;
        running.ready = true;
        if (child.pid !== undefined) running.known = processesOf(child.pid);
        this.writeStatus();
        return;
      }
      if (Date.now() > deadline) {
        // Not left running half-started: the caller starts it again or stops the stack.
        await this.stop(piece);
        throw new PieceStartError(piece, null, `${piece} was not ready after ${this.options.readyTimeoutMs} ms (last check: ${lastProblem})${this.logHint(piece)}`);
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
    signalGroup(running.child.pid, signal);
    if (ends) await running.exited;
  }

  /** Stops a piece: SIGTERM to its group, SIGKILL after a grace period, then to whatever is left of it. */
  async stop(piece: PieceName, graceMs = PIECE_GRACE_MS): Promise<void> {
    const timer = this.restartTimers.get(piece);
    if (timer !== undefined) clearTimeout(timer);
    this.restartTimers.delete(piece);
    const running = this.running.get(piece);
    if (running === undefined) return;
    running.expected = true;
    const pid = running.child.pid;
    // Its processes now, beside those seen at readiness: a descendant that left the group is ended too.
    const known = pid === undefined ? running.known : [...running.known, ...processesOf(pid)];
    signalGroup(pid, "SIGTERM");
    const killer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
    await running.exited;
    clearTimeout(killer);
    // The group may still hold children of the piece (a shell's command, a prover): end them too.
    signalGroup(pid, "SIGKILL");
    killStragglers(known);
  }

  async restart(piece: PieceName): Promise<void> {
    await this.stop(piece);
    await this.start(piece);
  }

  /**
   * Stops everything within the stop bound: in reverse start order by kind (api first, chain last), the
   * pieces of one kind together (replicas, attestors, readers), each with PIECE_GRACE_MS or what is left of
   * the bound; past the bound, whatever still runs is killed. Waits until no process of the stack is left.
   */
  async stopAll(): Promise<void> {
    this.stopping = true;
    for (const timer of this.restartTimers.values()) clearTimeout(timer);
    this.restartTimers.clear();
    const deadline = Date.now() + (this.options.stopBoundMs ?? DEFAULT_STOP_BOUND_MS);
    const overdue = setTimeout(() => this.killNow(), Math.max(0, deadline - Date.now()));
    const groups = new Set<number>();
    const known: ProcessId[] = [];
    try {
      // A piece whose start was under way when the stack began to stop is in the map by now: stop it too.
      while (this.running.size > 0) {
        const layers = new Map<number, PieceName[]>();
        for (const piece of this.running.keys()) {
          const layer = PIECES.indexOf(kindOf(piece));
          layers.set(layer, [...(layers.get(layer) ?? []), piece]);
        }
        for (const layer of [...layers.keys()].sort((a, b) => b - a)) {
          const pieces = layers.get(layer) ?? [];
          for (const piece of pieces) {
            const entry = this.running.get(piece);
            if (entry?.child.pid !== undefined) groups.add(entry.child.pid);
            known.push(...(entry?.known ?? []));
          }
          const grace = Math.max(0, Math.min(PIECE_GRACE_MS, deadline - Date.now()));
          await Promise.all(pieces.map((piece) => this.stop(piece, grace)));
        }
      }
    } finally {
      clearTimeout(overdue);
    }
    // A group's last processes take a moment to die after SIGKILL; stragglers outside it get one more.
    for (const until = Date.now() + 3_000; [...groups].some(groupAlive) && Date.now() < until; ) await sleep(20);
    killStragglers(known);
    for (const stream of this.logs.values()) stream.end();
    this.logs.clear();
    this.writeStatus();
    process.off("exit", this.killAllNow);
  }

  /**
   * Kills every piece now (a second Ctrl-C, or the stop bound reached): SIGKILL to each group and to what
   * left it. A stopAll under way then finishes as soon as the exits are seen.
   */
  killNow(): void {
    for (const running of this.running.values()) running.expected = true;
    this.killAllNow();
  }

  private readonly killAllNow = (): void => {
    for (const running of this.running.values()) {
      signalGroup(running.child.pid, "SIGKILL");
      killStragglers(running.known);
    }
  };

  private onExit(piece: PieceName, running: Running, reason: string): void {
    if (this.running.get(piece) !== running) return;
    this.running.delete(piece);
    // Whatever the piece left in its group (a shell's command, a prover) goes with it.
    signalGroup(running.child.pid, "SIGKILL");
    killStragglers(running.known);
    if (running.expected || this.stopping) return;
    this.lastExits.set(piece, { reason, at: Date.now() });
    this.writeStatus();
    // Before it was ready, the start in progress fails and its caller decides.
    if (!running.ready) return;
    this.lost(piece, reason, Date.now() - running.startedAt);
  }

  /** A piece exited on its own after `upForMs` (0: a restart that never became ready): the policy decides. */
  private lost(piece: PieceName, reason: string, upForMs: number): void {
    if (!this.options.restarts) {
      this.options.log(`${piece} exited (${reason})`);
      return;
    }
    if (ON_UNEXPECTED_EXIT[kindOf(piece)] === "stop-stack") {
      this.options.onStackDown?.(`${piece} exited (${reason}): it holds the rollup's state, so the stack stops`);
      return;
    }
    const decision = this.book.decide(piece, upForMs);
    if (!decision.restart) {
      const within = (this.options.backoff ?? RESTART_BACKOFF).healthyAfterMs / 1000;
      this.options.onStackDown?.(`${piece} failed ${decision.quickFailures} times in a row within ${within} s of starting (last: ${reason}): the stack gives up on it and stops`);
      return;
    }
    this.options.log(`${piece} exited (${reason}); restart ${decision.restarts} in ${decision.delayMs} ms`);
    this.writeStatus();
    this.restartTimers.set(
      piece,
      setTimeout(() => {
        this.restartTimers.delete(piece);
        if (this.stopping) return;
        this.start(piece).then(
          () => this.options.log(`${piece} is back (restart ${decision.restarts})`),
          (error: unknown) => {
            if (this.stopping) return;
            this.lost(piece, `did not come back: ${error instanceof Error ? error.message : String(error)}`, 0);
          },
        );
      }, decision.delayMs),
    );
  }

  /** The status file, replaced whole (a reader never sees half of it). */
  private writeStatus(): void {
    const path = this.options.statusFile;
    if (path === undefined) return;
    try {
      mkdirSync(resolve(path, ".."), { recursive: true });
      writeFileSync(`${path}.tmp`, `${JSON.stringify({ updatedAt: Date.now(), stopping: this.stopping, pieces: this.status() })}\n`);
      renameSync(`${path}.tmp`, path);
    } catch (error) {
      this.options.log(`cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
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
