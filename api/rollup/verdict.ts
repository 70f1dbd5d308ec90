/**
 * Waits until the rollup has processed an input and turns its verdict into the api's answer: accepted
 * returns; a rejection maps the dapp's report `{"error": {code, message}}` to a detailed code. A write that
 * went as item `i` of a batch is judged by its own report `{"item": i, "error": ...}`: it applied when the
 * input was accepted and no report names it (DECISIONS.md section 2).
 */
import { hexToUtf8 } from "../../common/hex.ts";
import type { DappErrorReport } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import { NodeQueryError, NodeUnavailableError, type InputVerdict, type NodeReader } from "./node-reader.ts";

export interface VerdictOptions {
  timeoutMs: number;
  /** Poll interval after the fast phase (below); the node processes inputs in milliseconds locally, so poll often. */
  intervalMs?: number;
  /** What a dapp SCHEMA_NOT_FOUND refers to, for the details. */
  schemaId?: string;
  /** The transaction that carried the input: named when the wait times out, so a client can follow it up. */
  txHash?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A local node usually has the verdict a few tens of milliseconds after the receipt: poll every
 * FAST_INTERVAL_MS for the first FAST_PHASE_MS, then every `intervalMs`. At a flat 75 ms the wait alone
 * averaged ~37 ms of a claim's latency (npm run bench); the fast phase costs a few cheap reads.
 */
const FAST_INTERVAL_MS = 10;
const FAST_PHASE_MS = 500;

/**
 * One poll per input, however many writes it carries: the writes of a batch wait on the same promise. An
 * entry is dropped once settled, so the map holds only inputs still being waited for.
 */
export class VerdictWatch {
  private readonly watching = new Map<number, Promise<InputVerdict>>();

  constructor(
    private readonly node: NodeReader,
    private readonly options: Omit<VerdictOptions, "schemaId">,
  ) {}

  /** Resolves at the input's verdict; rejects with ROLLUP_UNAVAILABLE (naming input and transaction) at the timeout. */
  verdictOf(inputIndex: number, txHash: string): Promise<InputVerdict> {
    let watch = this.watching.get(inputIndex);
    if (watch === undefined) {
      watch = pollVerdict(this.node, inputIndex, { ...this.options, txHash }).finally(() => this.watching.delete(inputIndex));
      this.watching.set(inputIndex, watch);
    }
    return watch;
  }
}

async function pollVerdict(node: NodeReader, inputIndex: number, options: VerdictOptions): Promise<InputVerdict> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const interval = options.intervalMs ?? 75;
  let lastProblem = "not processed yet";
  for (;;) {
    let verdict: InputVerdict | undefined;
    try {
      // Bounded by what is left of the deadline: a hung node must not stretch the wait past timeoutMs.
      verdict = await node.inputVerdict(inputIndex, deadline - Date.now());
    } catch (error) {
      // The node may not have read the input from the chain yet ("not found"): keep polling.
      if (!(error instanceof NodeQueryError || error instanceof NodeUnavailableError)) throw error;
      lastProblem = error.message;
    }
    if (verdict !== undefined && verdict.status !== "UNPROCESSED") return verdict;
    if (Date.now() >= deadline) {
      throw new ApiError("ROLLUP_UNAVAILABLE", `The rollup did not process input ${inputIndex} in time`, {
        url: node.url,
        error: `no verdict after ${options.timeoutMs} ms (${lastProblem})`,
        // The input is on chain and may still be processed: say which one, so the write is never a mystery.
        input_index: inputIndex,
        ...(options.txHash === undefined ? {} : { tx_hash: options.txHash }),
      });
    }
    await sleep(Date.now() - started < FAST_PHASE_MS ? Math.min(FAST_INTERVAL_MS, interval) : interval);
  }
}

/**
 * The answer of one write: `item` is its position in a batch, null when it went alone. Throws the mapped
 * rejection; returns when the write applied.
 */
export function settleWrite(verdict: InputVerdict, item: number | null, options: { schemaId?: string }): void {
  const reports = decodeErrorReports(verdict.reports);
  if (item === null) {
    if (verdict.status === "ACCEPTED") return;
    const report = reports.find((r) => r.item === undefined) ?? reports[0];
    throw rejection(report?.error, verdict.status, options);
  }
  const own = reports.find((r) => r.item === item);
  if (own !== undefined) throw rejection(own.error, verdict.status, options);
  if (verdict.status === "ACCEPTED") return;
  // Rejected with no report naming this item: the batch as a whole was refused (nothing of it applied).
  throw rejection(reports.find((r) => r.item === undefined)?.error, verdict.status, options);
}

function rejection(error: DappErrorReport["error"] | undefined, status: string, options: { schemaId?: string }): ApiError {
  const code = error?.code;
  const message = error?.message ?? `input finished with status ${status}`;
  if (code === "NOT_OWNER") return new ApiError("NOT_OWNER", "The caller is not the data owner");
  if (code === "GRANT_NOT_FOUND") return new ApiError("NOT_FOUND", `Grant not found: ${message}`);
  if (code === "ATTESTATION_NOT_FOUND") return new ApiError("ATTESTATION_NOT_FOUND", `Attestation not found: ${message}`);
  if (code === "CONSENT_REJECTED") return new ApiError("CONSENT_REJECTED", "The rollup refused the owner's consent", { reason: message });
  if (code === "ALREADY_REVOKED") return new ApiError("ALREADY_REVOKED", `The attestation was already revoked: ${message}`);
  if (code === "ACCOUNT_ALREADY_BOUND") {
    return new ApiError("ACCOUNT_ALREADY_BOUND", "This provider account already backs another owner of the schema", { schema_id: options.schemaId ?? "" });
  }
  if (code === "SCHEMA_NOT_FOUND") {
    return new ApiError("SCHEMA_NOT_FOUND", "Provider schema not found", { schema_id: options.schemaId ?? "" });
  }
  return new ApiError("ROLLUP_REJECTED", "The rollup rejected the input", {
    reason: code === undefined ? message : `${code}: ${message}`,
  });
}

/** The dapp's error reports, `{"error": {code, message}}` with `"item": i` for a batch item's; other reports are skipped. */
function decodeErrorReports(reports: string[]): { item?: number; error: DappErrorReport["error"] }[] {
  const out: { item?: number; error: DappErrorReport["error"] }[] = [];
  for (const payload of reports) {
    try {
      const parsed = JSON.parse(hexToUtf8(payload)) as unknown;
      if (typeof parsed !== "object" || parsed === null || !("error" in parsed)) continue;
      const { error, item } = parsed as { error: unknown; item?: unknown };
      if (typeof error !== "object" || error === null || !("code" in error) || !("message" in error)) continue;
      const entry = { error: error as DappErrorReport["error"] };
      out.push(typeof item === "number" && Number.isInteger(item) ? { ...entry, item } : entry);
    } catch {
      // A report that is not the dapp's error JSON says nothing about the rejection: skip it.
    }
  }
  return out;
}
