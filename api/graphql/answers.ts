/**
 * Answers kept by the index's version (docs/index.md, "Answers kept"): the index changes only when the
 * indexer commits (an input applied, inputs proven, the index emptied), so an answer read at one version is
 * the answer to the same request until the next. EAS's applications and explorers send the same few
 * queries again and again (the global latest 25 above all): those are answered without a read.
 *
 * The version is read before the query runs, and the answer kept under it: a query that started before a
 * change and ended after it is kept under the old version, never served for the new one. Without a version
 * (the api's listener to the indexer's changes is down) nothing is kept or served.
 *
 * An answer is kept on its request's second sighting at a version, never its first: a stream of requests
 * each seen once (a variable new every time, a crawler walking ids) then costs what it costs without a
 * cache and never pushes out the few answers asked again and again. Each is kept with its JSON text, which
 * is what a hit sends.
 */
import type { GraphqlAnswer, GraphqlRequest } from "./execute.ts";

/** Characters of answers kept at most (the least recently used go first): about 32 MiB of text. */
const MAX_KEPT_CHARS = 32 * 1024 * 1024;
/** An answer larger than this is not kept: big answers are rare, and would crowd the small ones out. */
const MAX_ANSWER_CHARS = 64 * 1024;
/** Requests remembered as seen once (their keys only), per version: past it the oldest are forgotten. */
const MAX_SEEN = 65_536;

/** The index's version now: changes whenever what the index holds changes; undefined when unknown. */
export type IndexVersion = () => string | undefined;

/** An answer kept: always with the JSON text a hit sends. */
export type KeptAnswer = GraphqlAnswer & { text: string };

/** What makes two requests the same request: their operation, query text and variables, as sent. */
function answerKey(request: GraphqlRequest): string {
  return `${request.operationName ?? ""}\u0000${request.query}\u0000${JSON.stringify(request.variables ?? {})}`;
}

export function answerCache(version: IndexVersion): {
  /** The answer kept for `request`, or, when it may be kept once read, `keep` to call with it. */
  get(request: GraphqlRequest): { answer: KeptAnswer | undefined; keep?: (answer: GraphqlAnswer) => void };
  /**
   * The text of the answer kept for `request` at the index's version now, or undefined; unlike `get`, a miss
   * counts as no sighting (the request goes on to `get`, which counts it). For api/graphql/kept-listener.ts.
   */
  peek(request: GraphqlRequest): string | undefined;
} {
  let at: string | undefined;
  const kept = new Map<string, { answer: KeptAnswer; chars: number }>();
  const seen = new Set<string>();
  let keptChars = 0;
  return {
    get(request) {
      const now = version();
      if (now === undefined) return { answer: undefined };
      // A new version: every answer kept is of an older index.
      if (now !== at) {
        kept.clear();
        seen.clear();
        keptChars = 0;
        at = now;
      }
      const key = answerKey(request);
      const hit = kept.get(key);
      if (hit !== undefined) {
        // Most recently used last: the oldest is the first in the map.
        kept.delete(key);
        kept.set(key, hit);
        return { answer: hit.answer };
      }
      if (!seen.has(key)) {
        if (seen.size >= MAX_SEEN) seen.delete(seen.values().next().value as string);
        seen.add(key);
        return { answer: undefined };
      }
      return {
        answer: undefined,
        keep: (fresh) => {
          // Only a whole answer (no field failed, no refusal) of the version it was read at.
          if (at !== now || fresh.status !== 200 || fresh.body.errors !== undefined) return;
          const text = fresh.text ?? JSON.stringify(fresh.body);
          const chars = key.length + text.length;
          if (chars > MAX_ANSWER_CHARS || kept.has(key)) return;
          for (const [oldest, entry] of kept) {
            if (keptChars + chars <= MAX_KEPT_CHARS) break;
            kept.delete(oldest);
            keptChars -= entry.chars;
          }
          seen.delete(key);
          kept.set(key, { answer: { ...fresh, text }, chars });
          keptChars += chars;
        },
      };
    },
    peek(request) {
      const now = version();
      if (now === undefined || now !== at) return undefined;
      const key = answerKey(request);
      const hit = kept.get(key);
      if (hit === undefined) return undefined;
      kept.delete(key);
      kept.set(key, hit);
      return hit.answer.text;
    },
  };
}
