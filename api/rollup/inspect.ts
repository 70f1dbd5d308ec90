/**
 * Reads through the rollup query interface (specification part B): `GET <rollup>/inspect/<percent-encoded
 * JSON>`, whose first report is hex of the UTF-8 JSON result; on a v2 node the same query is the body of
 * `POST <rollup>/inspect/<application>`. Rejections become the api's not-found codes.
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

  /** The inspect answer of `{type, params}`, whatever its status; ROLLUP_UNAVAILABLE when there is none. */
  async envelopeOf(type: QueryType, params: Record<string, unknown>, timeoutMs: number = this.timeoutMs): Promise<InspectEnvelope> {
    try {
      return await this.inspect(JSON.stringify({ type, params }), timeoutMs);
    } catch (error) {
      throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup node is not responding", {
        url: this.options.rollupUrl,
        error: networkMessage(error),
      });
    }
  }

  private async inspect(query: string, timeoutMs: number): Promise<InspectEnvelope> {
    const application = this.options.v2Application;
    if (application === undefined) {
      const response = await fetch(`${this.options.rollupUrl}/inspect/${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) throw await unavailable(response);
      return (await response.json()) as InspectEnvelope;
    }
    const response = await fetch(`${this.options.rollupUrl}/inspect/${application}`, { method: "POST", body: query, signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw await unavailable(response);
    return v1Envelope((await response.json()) as V2InspectBody);
  }

  /** Every item of a list query. */
  async queryAll<T extends ListQueryType>(type: T, params: Record<string, unknown> = {}): Promise<QueryResults[T]> {
    return (await everyPage<QueryResults[ListQueryType][number]>((offset) => this.query(type, pageParams(params, offset)))) as QueryResults[T];
  }
}

/** A refusal: its status and, when the endpoint says why in JSON (a reader in mismatch), its code and message. */
async function unavailable(response: Response): Promise<Error> {
  let why = "";
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") why = `: ${body.error.code}${typeof body.error.message === "string" ? ` (${body.error.message})` : ""}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return new Error(`HTTP ${response.status}${why}`);
}

/** The result of an inspect answer: its first report, or the api's error for a rejection. */
export function resultOf<T extends QueryType>(envelope: InspectEnvelope, params: Record<string, unknown>, url: string): QueryResults[T] {
  if (envelope.status !== "Accepted") throw rejection(envelope, params);
  const report = envelope.reports?.[0];
  if (report === undefined) {
    throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup node answered without a report", { url, error: "no report in an accepted inspect response" });
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
 * The v1 envelope of a v2 answer: a dapp's exception keeps its payload (`exception_data`), as v1's
 * `exception_payload` does; an inspect the node could not complete is an exception with its reason.
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
