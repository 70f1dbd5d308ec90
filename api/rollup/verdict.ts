/**
 * Waits until the rollup has processed an input and turns its verdict into the api's answer: accepted
 * returns; a rejection maps the dapp's report `{"error": {code, message}}` to a detailed code.
 */
import { hexToUtf8 } from "../../common/hex.ts";
import type { DappErrorReport } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import { GraphqlQueryError, GraphqlUnavailableError, type GraphqlReader, type InputVerdict } from "./graphql.ts";

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
 * averaged ~37 ms of a claim's latency (npm run bench); the fast phase costs a few cheap GraphQL reads.
 */
const FAST_INTERVAL_MS = 10;
const FAST_PHASE_MS = 500;

export async function awaitVerdict(graphql: GraphqlReader, inputIndex: number, options: VerdictOptions): Promise<void> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const interval = options.intervalMs ?? 75;
  let lastProblem = "not processed yet";
  for (;;) {
    let verdict: InputVerdict | undefined;
    try {
      // Bounded by what is left of the deadline: a hung node must not stretch the wait past timeoutMs.
      verdict = await graphql.inputVerdict(inputIndex, deadline - Date.now());
    } catch (error) {
      // The node may not have read the input from the chain yet ("not found"): keep polling.
      if (!(error instanceof GraphqlQueryError || error instanceof GraphqlUnavailableError)) throw error;
      lastProblem = error.message;
    }
    if (verdict !== undefined && verdict.status !== "UNPROCESSED") return settle(verdict, options);
    if (Date.now() >= deadline) {
      throw new ApiError("ROLLUP_UNAVAILABLE", `The rollup did not process input ${inputIndex} in time`, {
        url: graphql.url,
        error: `no verdict after ${options.timeoutMs} ms (${lastProblem})`,
        // The input is on chain and may still be processed: say which one, so the write is never a mystery.
        input_index: inputIndex,
        ...(options.txHash === undefined ? {} : { tx_hash: options.txHash }),
      });
    }
    await sleep(Date.now() - started < FAST_PHASE_MS ? Math.min(FAST_INTERVAL_MS, interval) : interval);
  }
}

function settle(verdict: InputVerdict, options: VerdictOptions): void {
  if (verdict.status === "ACCEPTED") return;
  const report = decodeErrorReport(verdict.reports);
  const code = report?.error.code;
  const message = report?.error.message ?? `input finished with status ${verdict.status}`;
  if (code === "NOT_OWNER") throw new ApiError("NOT_OWNER", "The caller is not the data owner");
  if (code === "GRANT_NOT_FOUND") throw new ApiError("NOT_FOUND", `Grant not found: ${message}`);
  if (code === "SCHEMA_NOT_FOUND") {
    throw new ApiError("SCHEMA_NOT_FOUND", "Provider schema not found", { schema_id: options.schemaId ?? "" });
  }
  throw new ApiError("ROLLUP_REJECTED", "The rollup rejected the input", {
    reason: code === undefined ? message : `${code}: ${message}`,
  });
}

function decodeErrorReport(reports: string[]): DappErrorReport | undefined {
  for (const payload of reports) {
    try {
      const parsed = JSON.parse(hexToUtf8(payload)) as unknown;
      if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
        const error = (parsed as { error: unknown }).error;
        if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
          return parsed as DappErrorReport;
        }
      }
    } catch {
      // A report that is not the dapp's error JSON says nothing about the rejection: skip it.
    }
  }
  return undefined;
}
