/**
 * How the api answers EAS's GraphQL (docs/index.md): it asks the indexer's own `/graphql` (the default: the
 * index may be PGlite, which only the indexer's process can open), or, when the index is a PostgreSQL server
 * (DATABASE_URL, or a replica's DATABASE_READ_URL), reads it itself with the same executor. Either way a
 * request that names an input (read-your-writes) is answered once the index holds it, or refused after
 * MIN_INPUT_WAIT_MS with INDEX_BEHIND.
 */
import { eq } from "drizzle-orm";
import { ApiError } from "../errors.ts";
import { graphqlExecutor, graphqlGate, passed, type GraphqlAnswer, type GraphqlBody, type GraphqlRun } from "../graphql/execute.ts";
import type { GraphqlRequest } from "../graphql/request.ts";
import type { ApiConfig } from "../config.ts";
import { answerCache } from "../graphql/answers.ts";
import { indexerChanges } from "./changes.ts";
import { changeListener, openIndex, type OpenIndex } from "./db.ts";
import { indexState } from "./schema.ts";

/** Longest a request naming an input the index has not reached waits for it. */
export const MIN_INPUT_WAIT_MS = 5_000;
const POLL_MS = 25;

export interface IndexAnswer {
  status: number;
  /** GraphQL's answer as JSON text, sent as it is. */
  text: string;
  /** The last input the index held when it answered. */
  indexInput: number | undefined;
}

export interface IndexQueries {
  /** `minInput`: the input the answer must see (-1: none). */
  graphql(request: GraphqlRequest, minInput: number): Promise<IndexAnswer>;
  /** The bytes of the answer kept for a request's `body` (no read-your-writes need), or undefined: no read. */
  kept(body: Buffer): Buffer | undefined;
  close(): Promise<void>;
}

const behind = (minInput: number, held: number): ApiError =>
  new ApiError("INDEX_BEHIND", `The index has not reached input ${minInput} yet (it holds up to ${held}); ask again shortly`, { inputIndex: minInput, indexedInput: held }).withHeaders({ "Retry-After": "1" });

const unavailable = (where: string, why: string): ApiError => new ApiError("INDEX_UNAVAILABLE", `The index cannot be read: ${why}`, { index: where });

/** Keeps an answer the indexer sent, when it is whole (answerCache keeps no answer with errors). */
function keepForwarded(keep: (answer: GraphqlAnswer) => void, text: string): void {
  try {
    keep({ status: 200, body: JSON.parse(text) as GraphqlBody, text });
  } catch {
    // Not JSON after all: sent as it came, never kept.
  }
}

/** Whether the indexer's 503 is its INDEX_BEHIND (an error with a code), not a failure of its own. */
function behindAnswer(text: string): boolean {
  try {
    return (JSON.parse(text) as GraphqlBody).errors?.[0]?.extensions !== undefined;
  } catch {
    return false;
  }
}

export function indexQueries(config: ApiConfig["index"]): IndexQueries {
  if (config.kind === "indexer") {
    // Refused here rather than a hop away: a bad query costs the indexer nothing.
    const gate = graphqlGate();
    // Answers kept until the indexer's next commit, heard on its /changes.
    const changes = indexerChanges(config.url);
    const answers = answerCache(changes.version);
    return {
      async graphql(request, minInput) {
        const checked = gate(request);
        if (!passed(checked)) return { status: checked.status, text: JSON.stringify(checked.body), indexInput: undefined };
        // A read-your-writes request asks the indexer: the news of the commit it needs may not be here yet.
        const cached = minInput >= 0 ? undefined : answers.get(request);
        if (cached?.answer !== undefined) return { status: cached.answer.status, text: cached.answer.text, indexInput: undefined };
        let response: Response;
        try {
          response = await fetch(`${config.url}/graphql`, {
            method: "POST",
            headers: { "content-type": "application/json", ...(minInput >= 0 ? { "x-min-input-index": String(minInput) } : {}) },
            body: JSON.stringify(request),
            signal: AbortSignal.timeout(MIN_INPUT_WAIT_MS + 10_000),
          });
        } catch (error) {
          throw unavailable(config.url, error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error));
        }
        // The indexer's answer goes out as it came: parsing and writing it again would cost the api more than
        // the indexer's own work on an answer it keeps.
        const text = await response.text().catch(() => undefined);
        const held = Number(response.headers.get("x-index-input") ?? Number.NaN);
        if (response.status === 503 && text !== undefined && behindAnswer(text)) throw behind(minInput, Number.isFinite(held) ? held : -1);
        if (text === undefined || !text.startsWith("{") || (response.status !== 200 && response.status !== 400)) throw unavailable(config.url, `the indexer answered HTTP ${response.status}`);
        if (cached?.keep !== undefined && response.status === 200) keepForwarded(cached.keep, text);
        return { status: response.status, text, indexInput: Number.isFinite(held) ? held : undefined };
      },
      kept: (body) => answers.peek(body),
      close: () => {
        changes.close();
        return Promise.resolve();
      },
    };
  }
  let opened: Promise<OpenIndex> | undefined;
  const open = (): Promise<OpenIndex> => {
    opened ??= openIndex(config.location, { migrate: false, readTimeoutMs: config.readTimeoutMs }).catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
  // Reading the server the indexer writes, the api hears of each of its commits and keeps answers until the next.
  const location = config.location;
  const listener = config.keepAnswers && location.kind === "postgres" ? changeListener(location) : undefined;
  let run: GraphqlRun | undefined;
  const heldInput = async (index: OpenIndex): Promise<number> => {
    const [row] = await index.read((db) => db.select({ lastInput: indexState.lastInput }).from(indexState).where(eq(indexState.id, 1)));
    return row?.lastInput ?? -1;
  };
  return {
    async graphql(request, minInput) {
      let index: OpenIndex;
      let held = -1;
      try {
        index = await open();
        if (minInput >= 0) held = await heldInput(index);
        for (const deadline = Date.now() + MIN_INPUT_WAIT_MS; held < minInput && Date.now() < deadline; held = await heldInput(index)) {
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      } catch (error) {
        throw unavailable("DATABASE_URL", error instanceof Error ? error.message : String(error));
      }
      if (held < minInput) throw behind(minInput, held);
      run ??= graphqlExecutor(index, listener?.version);
      // A read-your-writes request reads: the news of the commit it waited for may not have arrived yet.
      const answer = await run(request, minInput >= 0);
      return { status: answer.status, text: answer.text ?? JSON.stringify(answer.body), indexInput: minInput >= 0 ? held : undefined };
    },
    kept: (body) => run?.kept(body),
    async close() {
      await listener?.close();
      if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
    },
  };
}
