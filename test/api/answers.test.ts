/**
 * The answers kept by the index's version (api/graphql/answers.ts), as the listener before hono looks them
 * up: by a request body's bytes. A body is remembered once it parsed to a kept answer; a body with other
 * bytes and the same request finds the same answer; nothing is found across a change of the index, for a
 * body that is not a request, or for an answer that was pushed out.
 */
import { describe, expect, it } from "vitest";
import { answerCache } from "../../api/graphql/answers.ts";
import type { GraphqlAnswer } from "../../api/graphql/execute.ts";
import type { GraphqlRequest } from "../../api/graphql/request.ts";

const request: GraphqlRequest = { query: "query($id: String!) { attestation(where: { id: $id }) { id } }", variables: { id: "0x01" } };
const answer = (id: string): GraphqlAnswer => ({ status: 200, body: { data: { attestation: { id } } } });
const bodyOf = (value: unknown, space?: number): Buffer => Buffer.from(JSON.stringify(value, null, space));

/** A cache at `version()`, with `request`'s answer kept (its second sighting read and kept). */
function keptCache(version: { now: string | undefined }) {
  const cache = answerCache(() => version.now);
  expect(cache.get(request).keep).toBeUndefined();
  const second = cache.get(request);
  second.keep?.(answer("0x01"));
  return cache;
}

describe("answers kept, looked up by a request's body", () => {
  it("finds the kept answer's bytes by the body, and by another body of the same request", () => {
    const version = { now: "v1" };
    const cache = keptCache(version);
    const kept = cache.peek(bodyOf(request));
    expect(kept?.toString("utf8")).toBe(JSON.stringify(answer("0x01").body));
    // Twice by the same bytes (remembered), then by bytes that differ only in spacing (parsed again).
    expect(cache.peek(bodyOf(request))).toBe(kept);
    expect(cache.peek(bodyOf(request, 2))).toBe(kept);
    // The same query with another variable is another request.
    expect(cache.peek(bodyOf({ ...request, variables: { id: "0x02" } }))).toBeUndefined();
    // A hit by get serves the same text the bytes were made of.
    expect(cache.get(request).answer?.text).toBe(kept?.toString("utf8"));
  });

  it("finds nothing once the index changed, even for a body it remembered, nor without a version", () => {
    const version: { now: string | undefined } = { now: "v1" };
    const cache = keptCache(version);
    expect(cache.peek(bodyOf(request))).toBeDefined();
    version.now = "v2";
    expect(cache.peek(bodyOf(request))).toBeUndefined();
    // Kept again at v2, then the listener to the indexer's changes goes down: nothing is served.
    cache.get(request).keep?.(answer("0x01"));
    cache.get(request).keep?.(answer("0x01"));
    expect(cache.peek(bodyOf(request))).toBeDefined();
    version.now = undefined;
    expect(cache.peek(bodyOf(request))).toBeUndefined();
  });

  it("a body that is not a GraphQL request, or whose query is missing, finds nothing and counts as no sighting", () => {
    const cache = keptCache({ now: "v1" });
    for (const body of [Buffer.from("{not json"), bodyOf([request]), bodyOf({ variables: {} }), bodyOf({ query: "" }), bodyOf({ query: request.query, variables: [1] })]) {
      expect(cache.peek(body)).toBeUndefined();
    }
    // A peek never counts a sighting: a request peeked at and missed is still on its first sighting at get.
    const other = { ...request, variables: { id: "0x03" } };
    expect(cache.peek(bodyOf(other))).toBeUndefined();
    expect(cache.get(other).keep).toBeUndefined();
  });

  it("an answer that is not whole (errors, a refusal) is never kept, so its body finds nothing", () => {
    const cache = answerCache(() => "v1");
    cache.get(request);
    cache.get(request).keep?.({ status: 200, body: { data: null, errors: [{ message: "the index could not answer" }] } });
    expect(cache.peek(bodyOf(request))).toBeUndefined();
  });
});
