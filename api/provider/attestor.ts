/**
 * Provider values proven by the TLS attestor (DECISIONS.md section 14, docs/provider.md). The api forks
 * prover processes (attestor/prover.ts, which link Reclaim's AGPL attestor-core: nothing of it is loaded
 * here) and talks to them over Node's IPC channel: each one makes one claim at a time, so proving, which
 * blocks a prover's event loop for seconds, never blocks the api's. A prover that overruns its time is
 * killed and replaced.
 */
import { fork, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hashMessage, recoverAddress, type Address, type Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import type { ProveFailure, ProveRequest, ProveResult, ProveSuccess, ProverReady } from "../../common/prover-protocol.ts";
import { claimIdentifier, claimSignText, VALUE_GROUP, type ProofMode } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface AttestorSettings {
  /** The attestor's WebSocket, `ws://host:port/ws`. */
  url: string;
  mode: ProofMode;
  /** How many prover processes may run at once (each holds one claim; a `zk` one needs ~300 MB). */
  provers: number;
  /** How long one claim may take before its prover is killed. */
  timeoutMs: number;
  /** Extra root certificates (PEM paths) for the provers' TLS library, which ignores NODE_EXTRA_CA_CERTS. */
  caFiles: string;
  dataDir: string;
  /** The key claims are made with (their `owner`); unset, each prover keeps one in DATA_DIR/prover-key. */
  proverPrivateKey?: Hex;
}

/** A claim the attestor signed, checked here before it goes to the rollup. */
export interface ProvenValue {
  success: ProveSuccess;
  /** The address the claim's signature recovers to. */
  attestor: Address;
  /** The value the attestor extracted and signed (a decimal string). */
  signedValue: string;
}

/** Starts one prover process; tests may start something else that speaks the same protocol. */
export type ProverSpawner = (settings: AttestorSettings) => ChildProcess;

export const spawnProver: ProverSpawner = (settings) =>
  fork(join(ROOT, "attestor", "prover.ts"), [], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // Only what a prover needs: never the api's wallet key or token secret.
    env: {
      ...pickEnv(["PATH", "HOME", "TMPDIR", "LANG", "TZ", "LOG_LEVEL"]),
      ATTESTOR_URL: settings.url,
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

export class ProverPool {
  private readonly provers = new Set<Prover>();
  private readonly queue: Waiting[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    readonly settings: AttestorSettings,
    private readonly spawn: ProverSpawner = spawnProver,
    /** Told each claim's mode, outcome and time (the api's metrics). */
    private readonly observe: (mode: ProofMode, outcome: "ok" | "failed", seconds: number) => void = () => {},
  ) {}

  /**
   * Proves `field` of the provider's answer through the attestor. Throws ApiError: ZKTLS_PROOF_FAILED
   * with a `reason` for everything on the attestor's path, and the provider's own codes
   * (PROVIDER_AUTH_FAILED, PROVIDER_UNAVAILABLE) when the provider answered badly or not at all.
   */
  async prove(request: Omit<ProveRequest, "id" | "mode"> & { mode?: ProofMode }): Promise<ProvenValue> {
    if (this.closed) throw proofFailed("the api is shutting down");
    const full: ProveRequest = { ...request, mode: request.mode ?? this.settings.mode, id: this.nextId++ };
    const started = performance.now();
    const result = await new Promise<ProveResult | Error>((settle) => {
      this.queue.push({ request: full, settle });
      this.dispatch();
    });
    this.observe(full.mode, !(result instanceof Error) && result.ok ? "ok" : "failed", (performance.now() - started) / 1000);
    if (result instanceof Error) throw proofFailed(result.message);
    if (!result.ok) throw failureError(result, request.url);
    return checkSignedClaim(result, request.field);
  }

  /** Ends every prover; claims under way fail with ZKTLS_PROOF_FAILED. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queue.splice(0)) waiting.settle(new Error("the api is shutting down"));
    const exits = [...this.provers].map((p) => this.retire(p, new Error("the api is shutting down")));
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
      this.run(prover, waiting);
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

  private run(prover: Prover, waiting: Waiting): void {
    const timer = setTimeout(() => {
      void this.retire(prover, new Error(`the proof took longer than ${Math.round(this.settings.timeoutMs / 1000)} s`));
    }, this.settings.timeoutMs);
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

export function proofFailed(reason: string): ApiError {
  return new ApiError("ZKTLS_PROOF_FAILED", `zkTLS proof failed: ${reason}`, { reason });
}

/** The provider's own failures keep the codes a plain fetch gives (DECISIONS.md section 5). */
function failureError(failure: ProveFailure, url: string): ApiError {
  const shownUrl = redactedUrl(url);
  if (failure.kind === "provider_status" && (failure.status === 401 || failure.status === 403)) {
    return new ApiError("PROVIDER_AUTH_FAILED", `provider refused the request (HTTP ${failure.status})`, { provider: "http", status: failure.status });
  }
  if (failure.kind === "provider_status" || failure.kind === "provider_unreachable") {
    return new ApiError("PROVIDER_UNAVAILABLE", "provider is not responding", { provider: "http", url: shownUrl, error: failure.reason });
  }
  return proofFailed(failure.reason);
}

function redactedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(not a valid URL)";
  }
}

/**
 * What the dapp will check, checked first here so a bad claim fails with a reason instead of a rejected
 * input: the identifier, the signature and the signed value. Whether the attestor is registered is the
 * caller's to check against the rollup.
 */
async function checkSignedClaim(success: ProveSuccess, field: string): Promise<ProvenValue> {
  const { claim } = success;
  let identifier: Hex;
  try {
    identifier = claimIdentifier(claim);
  } catch (error) {
    throw proofFailed(`the attestor's claim has an unreadable context: ${messageOf(error)}`);
  }
  if (identifier !== claim.identifier.toLowerCase()) throw proofFailed("the attestor's claim identifier does not match its content");
  let attestor: Address;
  try {
    attestor = await recoverAddress({ hash: hashMessage(claimSignText(claim, identifier)), signature: success.signature });
  } catch (error) {
    throw proofFailed(`the attestor's signature does not recover: ${messageOf(error)}`);
  }
  if (attestor.toLowerCase() !== success.attestor.toLowerCase()) {
    throw proofFailed(`the claim is signed by ${attestor}, not by the attestor ${success.attestor} that answered`);
  }
  const signedValue = extractedValue(claim.context);
  if (signedValue === undefined) throw proofFailed(`extraction failed: the attestor signed no value for ${field}`);
  return { success, attestor: attestor.toLowerCase() as Address, signedValue };
}

function extractedValue(context: string): string | undefined {
  try {
    const parsed = JSON.parse(context) as { extractedParameters?: Record<string, unknown> };
    const value = parsed.extractedParameters?.[VALUE_GROUP];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
