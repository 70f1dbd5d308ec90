/**
 * Reads through the rollup query interface (specification part B): `GET <rollup>/inspect/<percent-encoded
 * JSON>`, whose first report is hex of the UTF-8 JSON result; on a v2 node the same query is the body of
 * `POST <rollup>/inspect/<application>`. Rejections become the api's not-found codes.
 *
 * An answer is the dapp's when the machine ran the query to its end: Accepted, Rejected, Exception (the
 * dapp's `/exception`), MachineHalted (the dapp halted on this state, as it would on any replica of it).
 * Anything else is the endpoint failing to answer (a ReadFailure): no connection, no answer in time, an
 * error status, v2's `Failed` (the node could not complete the inspection: a limit, a timeout, the dapp
 * gone mid-way), v1's `CycleLimitExceeded` and `TimeLimitExceeded`, or a body that is no inspect answer.
 */
import type { InspectEnvelope, QueryResults, QueryType } from "../../common/wire.ts";
import { hexToUtf8, utf8ToHex } from "../../common/hex.ts";
import { messageOf } from "../../common/errors.ts";
import { ApiError } from "../errors.ts";

/** fetch says only "fetch failed"; the cause names the real problem (ECONNREFUSED, a timeout...). */
export function networkMessage(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const detail = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : undefined;
  return detail === undefined ? messageOf(error) : `${messageOf(error)}: ${detail}`;
}

/**
 * How an endpoint failed to answer a read (api_rollup_reads_total{outcome="failed", reason}): `refused` (no
 * connection), `reset` (the connection dropped before the answer was whole), `timeout` (no answer within
 * its timeout), `network` (another transport error), `5xx` and `http` (an error status, server-side or
 * other), `failed` (the node said it could not complete the inspection), `malformed` (a body that is no
 * inspect answer).
 */
export type ReadFailureReason = "refused" | "reset" | "timeout" | "network" | "5xx" | "http" | "failed" | "malformed";

/** An endpoint gave no answer to an inspect; the read pool moves the read on to another endpoint. */
export class ReadFailure extends Error {
  override readonly name = "ReadFailure";

  constructor(
    readonly reason: ReadFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Why an endpoint gave no answer, whatever a read through it threw (a plain error counts as the network's). */
export function failureOf(error: unknown): ReadFailure {
  return error instanceof ApiError && error.cause instanceof ReadFailure ? error.cause : readFailureOf(error);
}

/** Connection errors that mean the connection was lost mid-way (undici names a peer's close UND_ERR_SOCKET). */
const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** What fetch, or reading its body, threw: a ReadFailure with its reason. */
function readFailureOf(error: unknown): ReadFailure {
  if (error instanceof ReadFailure) return error;
  const message = networkMessage(error);
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return new ReadFailure("timeout", message, { cause: error });
  if (error instanceof SyntaxError) return new ReadFailure("malformed", `not JSON: ${error.message}`, { cause: error });
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code : undefined;
  if (code === "ECONNREFUSED") return new ReadFailure("refused", message, { cause: error });
  // A body cut short surfaces as "terminated" with the socket's error as its cause.
  if ((code !== undefined && RESET_CODES.has(code)) || messageOf(error) === "terminated") return new ReadFailure("reset", message, { cause: error });
  return new ReadFailure("network", message, { cause: error });
}

/** The query types that answer a list, page by page. */
export type ListQueryType = "all_provider_schemas" | "attestations_by_owner" | "grants_by_owner";

/** The most a list query hands out per page (DECISIONS.md section 9). */
const PAGE = 1000;

/** A list query's parameters for the page at `offset`. */
export function pageParams(params: Record<string, unknown>, offset: number): Record<string, unknown> {
  return { ...params, limit: PAGE, offset };
}

/**
 * Every item of a list, asking `page` for each offset in turn from 0. A page may hold fewer than the limit
 * (the dapp ends a page at its byte budget), so only an empty page ends the list.
 */
export async function everyPage<T>(page: (offset: number) => Promise<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; ; ) {
    const items = await page(offset);
    if (items.length === 0) return all;
    all.push(...items);
    offset += items.length;
  }
}

export interface RollupReaderOptions {
  rollupUrl: string;
  /** Set for a v2 node: the application its inspect URL names. */
  v2Application?: string;
  /** Per-query timeout: a hung node must not hang the api's requests. */
  timeoutMs?: number;
}

/**
 * Whatever answers the api's inspect queries: the node (RollupReader) or a pool of readers that replay the
 * same rollup (api/rollup/read-pool.ts). Routes and claim paths read through this alone.
 */
export interface RollupQueries {
  query<T extends QueryType>(type: T, params?: Record<string, unknown>, timeoutMs?: number): Promise<QueryResults[T]>;
  queryAll<T extends ListQueryType>(type: T, params?: Record<string, unknown>): Promise<QueryResults[T]>;
}

export class RollupReader implements RollupQueries {
  private readonly timeoutMs: number;

  constructor(private readonly options: RollupReaderOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  get url(): string {
    return this.options.rollupUrl;
  }

  async query<T extends QueryType>(
    type: T,
    params: Record<string, unknown> = {},
    timeoutMs: number = this.timeoutMs,
  ): Promise<QueryResults[T]> {
    return resultOf<T>(await this.envelopeOf(type, params, timeoutMs), params, this.options.rollupUrl);
  }

  /**
   * The dapp's answer to `{type, params}`, whatever its status; ROLLUP_UNAVAILABLE, caused by a ReadFailure,
   * when the endpoint gave none.
   */
  async envelopeOf(type: QueryType, params: Record<string, unknown>, timeoutMs: number = this.timeoutMs): Promise<InspectEnvelope> {
    try {
      return await this.inspect(JSON.stringify({ type, params }), timeoutMs);
    } catch (error) {
      const failure = readFailureOf(error);
      const message = failure.reason === "failed" ? "The rollup node could not complete the query" : "The rollup node is not responding";
      throw new ApiError("ROLLUP_UNAVAILABLE", message, { url: this.options.rollupUrl, error: failure.message }, { cause: failure });
    }
  }

  private async inspect(query: string, timeoutMs: number): Promise<InspectEnvelope> {
    const application = this.options.v2Application;
    if (application === undefined) {
      const response = await fetch(`${this.options.rollupUrl}/inspect/${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) throw await unavailable(response);
      return dappAnswer((await response.json()) as unknown);
    }
    const response = await fetch(`${this.options.rollupUrl}/inspect/${application}`, { method: "POST", body: query, signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw await unavailable(response);
    return v1Envelope(v2Answer((await response.json()) as unknown));
  }

  /** Every item of a list query. */
  async queryAll<T extends ListQueryType>(type: T, params: Record<string, unknown> = {}): Promise<QueryResults[T]> {
    return (await everyPage<QueryResults[ListQueryType][number]>((offset) => this.query(type, pageParams(params, offset)))) as QueryResults[T];
  }
}

/** A refusal: its status and, when the endpoint says why in JSON (a reader in mismatch), its code and message. */
async function unavailable(response: Response): Promise<ReadFailure> {
  let why = "";
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") why = `: ${body.error.code}${typeof body.error.message === "string" ? ` (${body.error.message})` : ""}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return new ReadFailure(response.status >= 500 ? "5xx" : "http", `HTTP ${response.status}${why}`);
}

/** Statuses of an inspect the machine ran to its end: the dapp's answer, the same on every replica of the state. */
const DAPP_STATUSES: ReadonlySet<string> = new Set(["Accepted", "Rejected", "Exception", "MachineHalted"]);
/** Statuses of an inspect the node could not complete: v2's, and v1's names for its limits. */
const INCOMPLETE_STATUSES: ReadonlySet<string> = new Set(["Failed", "CycleLimitExceeded", "TimeLimitExceeded"]);

/** The status of an inspect answer when it is the dapp's; a ReadFailure when it is not (or is no answer at all). */
function dappStatus(body: unknown): string {
  const answer = body as { status?: unknown; processed_input_count?: unknown; error?: unknown } | null;
  if (typeof answer?.status !== "string" || typeof answer.processed_input_count !== "number") throw new ReadFailure("malformed", "not an inspect answer");
  if (INCOMPLETE_STATUSES.has(answer.status)) {
    throw new ReadFailure("failed", typeof answer.error === "string" ? `${answer.status}: ${answer.error}` : answer.status);
  }
  if (!DAPP_STATUSES.has(answer.status)) throw new ReadFailure("malformed", `unknown inspect status ${JSON.stringify(answer.status)}`);
  return answer.status;
}

/** A v1 answer (the specification's envelope); a halted machine is the dapp's exception, as in v2. */
function dappAnswer(body: unknown): InspectEnvelope {
  const status = dappStatus(body);
  const envelope = body as InspectEnvelope;
  return status === "MachineHalted" ? { ...envelope, status: "Exception", exception_payload: envelope.exception_payload ?? utf8ToHex(status) } : envelope;
}

function v2Answer(body: unknown): V2InspectBody {
  dappStatus(body);
  return body as V2InspectBody;
}

/** The result of an inspect answer: its first report, or the api's error for a rejection. */
export function resultOf<T extends QueryType>(envelope: InspectEnvelope, params: Record<string, unknown>, url: string): QueryResults[T] {
  if (envelope.status !== "Accepted") throw rejection(envelope, params);
  const report = envelope.reports?.[0];
  if (report === undefined) {
    const error = "no report in an accepted inspect response";
    throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup node answered without a report", { url, error }, { cause: new ReadFailure("malformed", error) });
  }
  return JSON.parse(hexToUtf8(report.payload)) as QueryResults[T];
}

function rejection(envelope: InspectEnvelope, params: Record<string, unknown>): ApiError {
  let message = "";
  try {
    message = envelope.exception_payload === null ? "" : hexToUtf8(envelope.exception_payload);
  } catch {
    message = String(envelope.exception_payload);
  }
  if (message.startsWith("schema not found")) {
    return new ApiError("SCHEMA_NOT_FOUND", "Provider schema not found", { schema_id: String(params.schema_id) });
  }
  if (message.startsWith("attestation not found")) {
    return new ApiError("ATTESTATION_NOT_FOUND", "Attestation not found", {
      claim_id: String(params.attestation_id),
    });
  }
  if (message.startsWith("no key registered for")) return new ApiError("NOT_FOUND", `No key registered for ${String(params.owner)}`, { owner: String(params.owner) });
  if (message === "no nullifier key set registered") return new ApiError("NOT_FOUND", "No nullifier key set is registered (set_nullifier_keys)", { resource: "nullifier_keys" });
  if (message.startsWith("no content key of attestation")) return new ApiError("NO_GRANT_FOUND", "No standing grant shares this attestation's content key with this requester", { owner: "", requester: String(params.requester) });
  // The one parameter only the rollup can judge: a minimum bucket is checked against the schema's labels.
  const minimum = /^invalid query: min_bucket(?:\.[^:]*)?: (.*)$/s.exec(message);
  if (minimum !== null) {
    return new ApiError("INVALID_PARAMETER", `Invalid minBucket: ${minimum[1] ?? ""}`, { parameter: "minBucket", value: JSON.stringify(params.min_bucket ?? null), expected: minimum[1] ?? "" });
  }
  // Any other rejection means the api built a query the dapp does not understand: a fault of ours.
  return new ApiError("INTERNAL_ERROR", `The rollup rejected a query: ${message}`);
}

/** A v2 node's inspect answer (internal/inspect `InspectResponse`; older nodes: `exception` text, `reports` null). */
interface V2InspectBody {
  status: string;
  error?: string;
  exception_data?: `0x${string}`;
  exception?: string;
  reports: { payload: `0x${string}` }[] | null;
  processed_input_count: number;
}

/**
 * The v1 envelope of a v2 answer (the dapp's: v2Answer has let no other through): a dapp's exception keeps
 * its payload (`exception_data`), as v1's `exception_payload` does; a halted machine is an exception too.
 */
function v1Envelope(answer: V2InspectBody): InspectEnvelope {
  const accepted = answer.status === "Accepted";
  const exception = accepted ? null : (answer.exception_data ?? utf8ToHex(answer.exception ?? answer.error ?? answer.status));
  return {
    status: accepted ? "Accepted" : answer.status === "Rejected" ? "Rejected" : "Exception",
    exception_payload: exception,
    reports: answer.reports ?? [],
    processed_input_count: answer.processed_input_count,
  };
}
