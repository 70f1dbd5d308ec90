/**
 * EAS's GraphQL on the api (docs/graphql.md), with no indexer to ask: every bad query is refused by the api
 * itself with GraphQL's own errors before anything is asked of the index (syntax, an unknown field such as
 * the sealed data no field carries, a wrong type, a `take` above the limit, a query too deep, too wide or
 * asking too many rows), and an index that cannot be reached is INDEX_UNAVAILABLE. The answers themselves
 * are judged against the index in test/api/index-graphql.test.ts and on real stacks (index.e2e, e2e-suite/graphql.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DEPTH, MAX_ROOT_FIELDS, MAX_TAKE } from "../../api/graphql/schema.ts";
import { JSON_HEADERS } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

let api: OfflineApi;
beforeAll(async () => {
  api = await offlineApi({ RATE_LIMITS: "off" });
});
afterAll(() => api.cleanup());

interface GraphqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function graphql(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: GraphqlAnswer }> {
  const response = await api.app.request("/graphql", { method: "POST", headers: JSON_HEADERS, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as GraphqlAnswer };
}

const ID = `0x${"ab".repeat(32)}`;

describe("EAS's GraphQL: refused before any read", () => {
  it.each([
    ["a syntax error", "query { attestation(where: { id: ", /^Syntax Error: /],
    ["an unknown field: the sealed data is no field", `query { attestation(where: { id: "${ID}" }) { id encryptedData } }`, /^Cannot query field "encryptedData" on type "Attestation"\.$/],
    ["a wrong type", 'query { attestations(take: "ten", where: { recipient: { equals: "0x1" } }) { id } }', /^Int cannot represent non-integer value: "ten"$/],
    ["a take above the limit", `query { attestations(take: ${MAX_TAKE + 1}, where: { recipient: { equals: "0x1" } }) { id } }`, new RegExp(`^take: ${MAX_TAKE + 1} is out of range \\(0\\.\\.${MAX_TAKE}\\)$`)],
    ["lists inside lists past the row limit", "query { schemata { attestations { schema { attestations { id } } } } }", /^the query may answer \d+ rows \(lists inside lists multiply\); at most 10000$/],
    ["a query too deep", "query { __schema { types { fields { type { ofType { ofType { name } } } } } } }", new RegExp(`^the query is 7 levels deep; at most ${MAX_DEPTH} are answered$`)],
    ["too many root fields", `query { ${Array.from({ length: MAX_ROOT_FIELDS + 1 }, (_, i) => `a${i}: schemata { id }`).join(" ")} }`, new RegExp(`^the query asks ${MAX_ROOT_FIELDS + 1} root fields; at most ${MAX_ROOT_FIELDS} are answered in one query$`)],
    ["a missing argument", "query { attestation { id } }", /^Field "attestation" argument "where" of type "AttestationWhereUniqueInput!" is required, but it was not provided\.$/],
  ])("%s: 400 with GraphQL's errors", async (_what, query, message) => {
    const { status, body } = await graphql(query);
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(message);
  });

  it("a variable's take above the limit: 400, nothing asked of the index", async () => {
    const take = await graphql("query List($take: Int) { attestations(take: $take, where: { recipient: { equals: \"0x1\" } }) { id } }", { take: 500 });
    expect([take.status, take.body.errors?.[0]?.message]).toEqual([400, `take: 500 is out of range (0..${MAX_TAKE})`]);
  });

  it("GET takes the same query; bad variables are refused; a body that is not GraphQL's is INVALID_REQUEST", async () => {
    const get = await api.app.request(`/graphql?query=${encodeURIComponent("{ attestation { id } }")}`);
    expect(get.status).toBe(400);
    const badVariables = await api.app.request(`/graphql?query=${encodeURIComponent("{ schemata { id } }")}&variables=nope`);
    expect([badVariables.status, ((await badVariables.json()) as GraphqlAnswer).errors?.[0]?.message]).toEqual([400, "variables: expected a JSON object"]);
    const notGraphql = await api.app.request("/graphql", { method: "POST", headers: JSON_HEADERS, body: JSON.stringify({ q: "{}" }) });
    expect(notGraphql.status).toBe(400);
    expect(((await notGraphql.json()) as { error: { code: string } }).error.code).toBe("INVALID_REQUEST");
  });

  it("an index that cannot be reached: 503 INDEX_UNAVAILABLE naming where it was asked", async () => {
    const response = await api.app.request("/graphql", { method: "POST", headers: JSON_HEADERS, body: JSON.stringify({ query: "query { attestations(take: 25, orderBy: { time: desc }) { id } }" }) });
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; details: { index: string } } };
    expect(body.error.code).toBe("INDEX_UNAVAILABLE");
    expect(body.error.details.index).toBe(api.config.index.kind === "indexer" ? api.config.index.url : "");
  });
});
