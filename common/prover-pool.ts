/**
 * Prover processes (attestor/prover.ts, which link Reclaim's AGPL attestor-core: nothing of it is loaded
 * by the parent) driven over Node's IPC channel: the api's pool for the claims it makes, and `npm run
 * prove`'s on the user's machine. Each process makes one claim at a time, so proving, which blocks a
 * prover's event loop for seconds, never blocks its parent's. A prover that overruns its time is killed
 * and replaced. Failures come back as results, mapped to the specification's codes by `failureCode`.
 */
import { fork, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Hex } from "viem";
import type { ProveFailure, ProveRequest, ProveResult, ProverReady } from "./prover-protocol.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export interface ProverSettings {
  /** How many prover processes may run at once (each holds one claim; a `zk` one needs ~300 MB). */
  provers: number;
  /** How long one claim may take, from the moment a ready prover has it, before its prover is killed. */
  timeoutMs: number;
  /** How long a new prover may take to say it is ready; unset, the larger of `timeoutMs` and PROVER_START_BOUND_MS. */
  startTimeoutMs?: number;
  /** Extra root certificates (PEM paths) for the provers' TLS library, which ignores NODE_EXTRA_CA_CERTS. */
  caFiles: string;
  dataDir: string;
  /** The key claims are requested with (their `owner`); unset, each prover keeps one in DATA_DIR/prover-key. */
  proverPrivateKey?: Hex;
  /**
   * attestor/prover.ts compiled (toolkit/process-build.ts), run by node as it is; unset, the source through
   * tsx, whose loader hooks cost each prover seconds of CPU at start over attestor-core's many modules.
   */
  proverModule?: string;
}

/** Starts one prover process; tests may start something else that speaks the same protocol. */
export type ProverSpawner = (settings: ProverSettings) => ChildProcess;

export const spawnProver: ProverSpawner = (settings) =>
  fork(settings.proverModule ?? join(ROOT, "attestor", "prover.ts"), [], {
    cwd: ROOT,
    execArgv: settings.proverModule === undefined ? ["--import", "tsx"] : [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // Only what a prover needs: never the parent's wallet key, token secret or any other credential.
    env: {
      ...pickEnv(["PATH", "HOME", "TMPDIR", "LANG", "TZ", "LOG_LEVEL"]),
      ATTESTOR_CA_FILES: settings.caFiles,
      DATA_DIR: settings.dataDir,
      ...(settings.proverPrivateKey === undefined ? {} : { PROVER_PRIVATE_KEY: settings.proverPrivateKey }),
    },
  });

function pickEnv(names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

interface Prover {
  child: ChildProcess;
  ready: Promise<void>;
  /** The request it is working on, if any. */
  current: { id: number; settle(result: ProveResult | Error): void } | undefined;
}

interface Waiting {
  request: ProveRequest;
  settle(result: ProveResult | Error): void;
}

/** How long a new prover may take to load attestor-core and say it is ready, at least (measured: ~2 s idle, >30 s on a loaded CI machine). */
const PROVER_START_BOUND_MS = 120_000;

export class ProverPool {
  private readonly provers = new Set<Prover>();
  private readonly queue: Waiting[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    readonly settings: ProverSettings,
    private readonly spawn: ProverSpawner = spawnProver,
    /** The reason claims under way and waiting fail with when the pool closes. */
    private readonly closing = "the prover pool is closing",
  ) {}

  /** One claim through one attestor; a failure of any kind (a timeout, a dead prover) is a failed result. */
  async run(request: Omit<ProveRequest, "id">): Promise<ProveResult> {
    const id = this.nextId++;
    if (this.closed) return { id, ok: false, kind: "internal", reason: this.closing };
    const result = await new Promise<ProveResult | Error>((settle) => {
      this.queue.push({ request: { ...request, id }, settle });
      this.dispatch();
    });
    return result instanceof Error ? { id, ok: false, kind: result.message.startsWith("the proof took longer") ? "timeout" : "internal", reason: result.message } : result;
  }

  /** Ends every prover; claims under way and waiting fail with the closing reason. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queue.splice(0)) waiting.settle(new Error(this.closing));
    const exits = [...this.provers].map((p) => this.retire(p, new Error(this.closing)));
    await Promise.all(exits);
  }

  get size(): number {
    return this.provers.size;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const idle = [...this.provers].find((p) => p.current === undefined);
      const prover = idle ?? (this.provers.size < this.settings.provers ? this.start() : undefined);
      if (prover === undefined) return;
      const waiting = this.queue.shift() as Waiting;
      this.assign(prover, waiting);
    }
  }

  private start(): Prover {
    const child = this.spawn(this.settings);
    let markReady: () => void = () => {};
    let markFailed: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    // A prover that dies before it is ready fails its claim through `ready`; nobody else waits on it.
    ready.catch(() => undefined);
    const prover: Prover = { child, ready, current: undefined };
    child.on("message", (message: ProveResult | ProverReady) => {
      if ("ready" in message) return markReady();
      if (prover.current !== undefined && prover.current.id === message.id) {
        const { settle } = prover.current;
        prover.current = undefined;
        settle(message);
        this.dispatch();
      }
    });
    child.once("exit", (code, signal) => {
      const why = new Error(`the prover exited (${signal ?? `code ${code}`})`);
      markFailed(why);
      this.provers.delete(prover);
      const current = prover.current;
      prover.current = undefined;
      current?.settle(why);
      if (!this.closed) this.dispatch();
    });
    child.once("error", (error) => markFailed(error));
    this.provers.add(prover);
    return prover;
  }

  private assign(prover: Prover, waiting: Waiting): void {
    // The proof's time counts from the moment a ready prover has the claim: loading attestor-core on a
    // loaded machine took more than 30 s in CI, and calling that "the proof took longer" was false.
    // A prover that never gets ready is bounded apart, with its own reason.
    const seconds = (ms: number): number => Math.round(ms / 1000);
    const startBoundMs = this.settings.startTimeoutMs ?? Math.max(this.settings.timeoutMs, PROVER_START_BOUND_MS);
    let timer = setTimeout(() => {
      void this.retire(prover, new Error(`the prover did not start within ${seconds(startBoundMs)} s`));
    }, startBoundMs);
    prover.current = {
      id: waiting.request.id,
      settle: (result) => {
        clearTimeout(timer);
        waiting.settle(result);
      },
    };
    const fail = (error: unknown): void => {
      if (prover.current?.id === waiting.request.id) prover.current.settle(error instanceof Error ? error : new Error(String(error)));
    };
    prover.ready.then(() => {
      // The claim may have timed out, or the prover died, while it was starting.
      if (prover.current?.id !== waiting.request.id || !prover.child.connected) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        void this.retire(prover, new Error(`the proof took longer than ${seconds(this.settings.timeoutMs)} s`));
      }, this.settings.timeoutMs);
      prover.child.send(waiting.request, (error) => {
        if (error !== null) fail(error);
      });
    }, fail);
  }

  /** Kills a prover (it may be deep in a synchronous proof), failing its claim with `why`. */
  private async retire(prover: Prover, why: Error): Promise<void> {
    const current = prover.current;
    prover.current = undefined;
    current?.settle(why);
    this.provers.delete(prover);
    if (prover.child.exitCode !== null || prover.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => prover.child.once("exit", () => resolve()));
    prover.child.kill("SIGKILL");
    await exited;
    if (!this.closed) this.dispatch();
  }
}

/** A failed claim in the specification's words: the code, a message, and the details the code lists. */
export interface FailureCode {
  code: "PROVIDER_AUTH_FAILED" | "PROVIDER_UNAVAILABLE" | "PROVIDER_INVALID_RESPONSE" | "ZKTLS_PROOF_FAILED";
  message: string;
  details: Record<string, unknown>;
}

/** The provider's own failures keep the codes a plain fetch gives (DECISIONS.md section 5); the rest is ZKTLS_PROOF_FAILED. */
export function failureCode(failure: ProveFailure, url: string): FailureCode {
  if (failure.kind === "provider_status" && (failure.status === 401 || failure.status === 403)) {
    return { code: "PROVIDER_AUTH_FAILED", message: `provider refused the request (HTTP ${failure.status})`, details: { provider: "http", status: failure.status } };
  }
  if (failure.kind === "provider_status" || failure.kind === "provider_unreachable") {
    return { code: "PROVIDER_UNAVAILABLE", message: "provider is not responding", details: { provider: "http", url: redactedUrl(url), error: failure.reason } };
  }
  if (failure.kind === "outside") {
    // Never the value: it is private, only its bucket is ever published.
    return {
      code: "PROVIDER_INVALID_RESPONSE",
      message: "The provider's value falls outside every bucket",
      details: { expected: "a value within the field's buckets", received: "a value outside every bucket" },
    };
  }
  return { code: "ZKTLS_PROOF_FAILED", message: `zkTLS proof failed: ${failure.reason}`, details: { reason: failure.reason } };
}

function redactedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(not a valid URL)";
  }
}
