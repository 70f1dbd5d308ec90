/**
 * The api's reads spread over readers: validators that replay the application's inputs with the same
 * dapp and answer the specification's query interface (docs/operations.md, Readers). A real node runs the
 * dapp in a forked Cartesi machine for every inspect and admits a handful at once; readers scale reads
 * past it. Writes, the verdicts of the api's own inputs and proofs stay with the node.
 *
 * A reader is skipped while it is down, in mismatch (it refuses: 503), stale (its chain connection
 * dropped), or behind the read's needs: the input the client has seen (X-Min-Input-Index) and every write
 * answered before the read (api/rollup/write-mark.ts). The inspect answer itself says how far the reader
 * has processed (`processed_input_count`), so a reader is judged by the answer it gives, not by a status
 * polled a moment ago. When no reader has caught up within READ_WAIT_MS, the node answers and the
 * response says so (X-Read-Fallback).
 *
 * A reader that fails a read, however (no connection, a reset, a timeout, an error status, v2's `Failed`,
 * v1's limits: api/rollup/inspect.ts, ReadFailure), is left alone for a while and the read moves on to the
 * next reader, then the node; only the dapp's own answer (a rejection included) is final. Each such move
 * is counted with its reason (onRead "failed").
 */
import type { InspectEnvelope, QueryResults, QueryType } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import { inputNeeded, noteFallback } from "./read-context.ts";
import { everyPage, failureOf, pageParams, resultOf, type ListQueryType, type ReadFailureReason, type RollupQueries, type RollupReader } from "./inspect.ts";
import type { WriteMark } from "./write-mark.ts";
import { messageOf } from "../../common/errors.ts";

/** How an endpoint answers GET /reader (a validator devnode); a node without that route is a plain node. */
interface ReaderStatusBody {
  serving?: unknown;
  stale?: unknown;
  reason?: unknown;
  processedInputCount?: unknown;
}

export type ReaderHealth = "serving" | "down" | "not-serving" | "stale";

export interface ReaderView {
  url: string;
  /** "reader" for a validator that says how it stands; "node" for an endpoint without GET /reader. */
  kind: "reader" | "node" | "unknown";
  health: ReaderHealth;
  /** Inputs it has processed, as it last said (its status or an answer). */
  processedInputCount: number;
  /** Why it is not serving, when it is not. */
  reason: string | null;
}

/** What the pool needs of a reader or of the node (RollupReader): tests hand it fakes. */
export type ReadSource = Pick<RollupReader, "url" | "envelopeOf" | "query">;

/** How a read went at one endpoint: answered, passed over as behind, failed there (and moved on), or sent to the node. */
export type ReadOutcome = "ok" | "behind" | "failed" | "fallback";

export interface ReadPoolOptions {
  /** How long a read waits for a reader that has processed what it needs before the node answers it. */
  waitMs: number;
  /** How often each reader's status is read. */
  pollMs: number;
  /** Where each read went: a reader's URL or "node", how it went and, when it failed there, why. */
  onRead?: (target: string, outcome: ReadOutcome, reason?: ReadFailureReason) => void;
}

class Endpoint {
  kind: ReaderView["kind"] = "unknown";
  /** How its last status poll found it, and why when not serving. */
  health: ReaderHealth = "serving";
  reason: string | null = null;
  processedInputCount = 0;
  /** When processedInputCount was learned (Date.now()). */
  countAt = 0;
  /** A reader that failed a read is left alone until then, whatever its status says (it may answer /reader and hang on inspects). */
  restUntil = 0;
  /** Why it failed that read. */
  restReason: string | null = null;

  constructor(readonly reader: ReadSource) {}

  /** What it says now is the truth, lower too: a reader started again from an older state is behind. */
  learnCount(count: number): void {
    this.processedInputCount = count;
    this.countAt = Date.now();
  }

  get url(): string {
    return this.reader.url;
  }

  /** Left alone after a failed read: reads skip it whatever its polls say meanwhile. */
  resting(now: number = Date.now()): boolean {
    return this.restUntil > now;
  }

  /** Never shown serving while reads skip it: a resting reader is down until its rest is over. */
  view(): ReaderView {
    const down = this.health === "serving" && this.resting();
    return { url: this.url, kind: this.kind, health: down ? "down" : this.health, processedInputCount: this.processedInputCount, reason: down ? this.restReason : this.reason };
  }
}

const STATUS_TIMEOUT_MS = 1_000;
/** Between two rounds over the readers while none has caught up. */
const RETRY_MS = 20;
/** How long a reader known to be behind is not asked again: it processes an input in about a millisecond. */
const RECOUNT_MS = 10;
/** How long a reader that failed a read is left alone. */
const REST_MS = 2_000;

export class ReadPool implements RollupQueries {
  private readonly endpoints: Endpoint[];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(
    readers: readonly ReadSource[],
    /** Answers what no reader can in time. */
    private readonly node: ReadSource,
    private readonly mark: WriteMark,
    private readonly options: ReadPoolOptions,
  ) {
    if (readers.length === 0) throw new Error("a read pool needs at least one reader");
    this.endpoints = readers.map((reader) => new Endpoint(reader));
  }

  /** How each reader stands now (GET /api/core/health, metrics). */
  readers(): ReaderView[] {
    return this.endpoints.map((e) => e.view());
  }

  start(): void {
    const round = (): void => {
      this.polling = this.pollAll().finally(() => {
        this.polling = undefined;
        if (this.timer !== undefined) this.timer = setTimeout(round, this.options.pollMs).unref();
      });
    };
    this.timer = setTimeout(round, 0).unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  async query<T extends QueryType>(type: T, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<QueryResults[T]> {
    const { envelope, url } = await this.read(type, params, timeoutMs);
    return resultOf<T>(envelope, params, url);
  }

  /**
   * Every page of a list from one endpoint, so the pages come from one state that only grows. A reader that
   * fails between two pages is left alone and the list is read again from the start elsewhere.
   */
  async queryAll<T extends ListQueryType>(type: T, params: Record<string, unknown> = {}): Promise<QueryResults[T]> {
    for (let attempt = 0; ; attempt++) {
      const first = await this.read(type, pageParams(params, 0));
      try {
        const all = await everyPage<QueryResults[ListQueryType][number]>(async (offset) =>
          offset === 0 ? resultOf<T>(first.envelope, params, first.url) : first.source.query(type, pageParams(params, offset)),
        );
        return all as QueryResults[T];
      } catch (error) {
        const reader = first.endpoint;
        if (reader === undefined || !(error instanceof ApiError) || error.code !== "ROLLUP_UNAVAILABLE" || attempt >= this.endpoints.length) throw error;
        this.rest(reader, error);
      }
    }
  }

  /** The first answer from an endpoint that has processed what this read needs; the node's past the wait. */
  private async read(type: QueryType, params: Record<string, unknown>, timeoutMs?: number): Promise<{ envelope: InspectEnvelope; url: string; source: ReadSource; endpoint: Endpoint | undefined }> {
    const highest = await inputNeeded(this.mark);
    // Processing input i makes the count i + 1.
    const needed = highest + 1;
    const deadline = Date.now() + this.options.waitMs;
    let why = "no reader is serving";
    for (;;) {
      for (const endpoint of this.candidates(needed)) {
        let envelope: InspectEnvelope;
        try {
          envelope = await endpoint.reader.envelopeOf(type, params, timeoutMs);
        } catch (error) {
          this.rest(endpoint, error);
          why = `${endpoint.url}: ${endpoint.restReason ?? "failed"}`;
          continue;
        }
        endpoint.learnCount(envelope.processed_input_count);
        if (envelope.processed_input_count < needed) {
          this.options.onRead?.(endpoint.url, "behind");
          why = `readers behind input ${highest}`;
          continue;
        }
        this.options.onRead?.(endpoint.url, "ok");
        return { envelope, url: endpoint.url, source: endpoint.reader, endpoint };
      }
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, Math.min(RETRY_MS, Math.max(1, deadline - Date.now()))));
    }
    noteFallback(`node; ${why}`);
    this.options.onRead?.("node", "fallback");
    return { envelope: await this.node.envelopeOf(type, params, timeoutMs), url: this.node.url, source: this.node, endpoint: undefined };
  }

  /** Down, hung, refusing (a reader in mismatch answers 503) or unable to complete an inspect: left alone for a while. */
  private rest(endpoint: Endpoint, error: unknown): void {
    endpoint.restUntil = Date.now() + REST_MS;
    endpoint.restReason = error instanceof ApiError ? String(error.details?.error ?? error.message) : String(error);
    this.options.onRead?.(endpoint.url, "failed", failureOf(error).reason);
  }

  /**
   * Serving endpoints that may have processed `needed` inputs, in turn from the next one (spreads the load):
   * first those known to have, then those whose count is old enough that they may have caught up since.
   */
  private candidates(needed: number): Endpoint[] {
    const n = this.endpoints.length;
    const start = this.next++ % n;
    const now = Date.now();
    const order = Array.from({ length: n }, (_, k) => this.endpoints[(start + k) % n] as Endpoint);
    const ready = order.filter((e) => e.health === "serving" && !e.resting(now));
    const ahead = ready.filter((e) => e.processedInputCount >= needed);
    const maybe = ready.filter((e) => e.processedInputCount < needed && now - e.countAt >= RECOUNT_MS);
    return [...ahead, ...maybe];
  }

  private async pollAll(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => this.poll(e)));
  }

  private async poll(endpoint: Endpoint): Promise<void> {
    let response: Response;
    try {
      response = await fetch(`${endpoint.url}/reader`, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
    } catch (error) {
      endpoint.health = "down";
      endpoint.reason = messageOf(error);
      return;
    }
    if (response.status === 404) {
      // A node (or a devnode that is not a validator): no status to read; its answers say how far it is.
      await response.body?.cancel();
      endpoint.kind = "node";
      endpoint.health = "serving";
      endpoint.reason = null;
      return;
    }
    let body: ReaderStatusBody;
    try {
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = (await response.json()) as ReaderStatusBody;
    } catch (error) {
      endpoint.health = "down";
      endpoint.reason = `GET /reader: ${messageOf(error)}`;
      return;
    }
    endpoint.kind = "reader";
    if (typeof body.processedInputCount === "number") endpoint.learnCount(body.processedInputCount);
    if (body.serving !== true) {
      endpoint.health = "not-serving";
      endpoint.reason = typeof body.reason === "string" ? body.reason : "not serving";
    } else if (body.stale === true) {
      endpoint.health = "stale";
      endpoint.reason = "its chain connection is stale";
    } else {
      endpoint.health = "serving";
      endpoint.reason = null;
    }
  }
}
