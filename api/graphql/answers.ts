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
import type { GraphqlAnswer } from "./execute.ts";
import { graphqlRequestOf, type GraphqlRequest } from "./request.ts";

/** Characters of answers kept at most (the least recently used go first): about 32 MiB of text and its bytes. */
const MAX_KEPT_CHARS = 32 * 1024 * 1024;
/** An answer larger than this is not kept: big answers are rare, and would crowd the small ones out. */
const MAX_ANSWER_CHARS = 64 * 1024;
/** Requests remembered as seen once (their keys only), per version: past it the oldest are forgotten. */
const MAX_SEEN = 65_536;
/** Request bodies remembered as leading to a kept answer, per version, and the longest remembered. */
const MAX_BODY_CHARS = 8 * 1024 * 1024;
const MAX_BODY_LENGTH = 8 * 1024;

/** The index's version now: changes whenever what the index holds changes; undefined when unknown. */
export type IndexVersion = () => string | undefined;

/** An answer kept: always with the JSON text a hit sends, and its UTF-8 bytes (what a hit before hono writes). */
export type KeptAnswer = GraphqlAnswer & { text: string; bytes: Buffer };

/** What makes two requests the same request: their operation, query text and variables, as sent. */
function answerKey(request: GraphqlRequest): string {
  return `${request.operationName ?? ""}\u0000${request.query}\u0000${JSON.stringify(request.variables ?? {})}`;
}

export function answerCache(version: IndexVersion): {
  /** The answer kept for `request`, or, when it may be kept once read, `keep` to call with it. */
  get(request: GraphqlRequest): { answer: KeptAnswer | undefined; keep?: (answer: GraphqlAnswer) => void };
  /**
   * The bytes of the answer kept for a request's `body` at the index's version now, or undefined; unlike
   * `get`, a miss counts as no sighting (the request goes on to `get`, which counts it). For
   * api/graphql/kept-listener.ts: a body seen before leads to its answer without being parsed again.
   */
  peek(body: Buffer): Buffer | undefined;
} {
  let at: string | undefined;
  const kept = new Map<string, { answer: KeptAnswer; chars: number }>();
  const seen = new Set<string>();
  // Bodies (as latin1: one character per byte, so two bodies are equal exactly when their bytes are) that
  // parsed to a kept answer's key. A client sends the same bytes again and again.
  const bodies = new Map<string, string>();
  let keptChars = 0;
  let bodyChars = 0;
  const current = (): string | undefined => {
    const now = version();
    // A new version: every answer kept is of an older index.
    if (now !== undefined && now !== at) {
      kept.clear();
      seen.clear();
      bodies.clear();
      keptChars = 0;
      bodyChars = 0;
      at = now;
    }
    return now;
  };
  const used = (key: string): KeptAnswer | undefined => {
    const hit = kept.get(key);
    if (hit === undefined) return undefined;
    // Most recently used last: the oldest is the first in the map.
    kept.delete(key);
    kept.set(key, hit);
    return hit.answer;
  };
  return {
    get(request) {
      const now = current();
      if (now === undefined) return { answer: undefined };
      const key = answerKey(request);
      const hit = used(key);
      if (hit !== undefined) return { answer: hit };
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
          const bytes = Buffer.from(text, "utf8");
          const chars = key.length + text.length + bytes.length;
          if (text.length > MAX_ANSWER_CHARS || kept.has(key)) return;
          for (const [oldest, entry] of kept) {
            if (keptChars + chars <= MAX_KEPT_CHARS) break;
            kept.delete(oldest);
            keptChars -= entry.chars;
          }
          seen.delete(key);
          kept.set(key, { answer: { ...fresh, text, bytes }, chars });
          keptChars += chars;
        },
      };
    },
    peek(body) {
      const now = current();
      if (now === undefined || kept.size === 0) return undefined;
      const raw = body.length <= MAX_BODY_LENGTH ? body.toString("latin1") : undefined;
      const known = raw === undefined ? undefined : bodies.get(raw);
      if (known !== undefined) return used(known)?.bytes;
      const request = graphqlRequestOf(body.toString("utf8"));
      if (request === undefined) return undefined;
      const key = answerKey(request);
      const hit = used(key);
      if (hit === undefined || raw === undefined) return hit?.bytes;
      for (const oldest of bodies.keys()) {
        if (bodyChars + raw.length <= MAX_BODY_CHARS) break;
        bodies.delete(oldest);
        bodyChars -= oldest.length;
      }
      bodies.set(raw, key);
      bodyChars += raw.length;
      return hit.bytes;
    },
  };
}
