/**
 * A GraphQL request as the api and the indexer take it (GraphQL over HTTP: a JSON body with `query`,
 * `variables`, `operationName`), and the one check of its shape that runs before hono (the answers kept,
 * api/graphql/answers.ts, are looked up by it).
 */

/** Longest query text taken: a huge document is refused before it costs anything. */
export const MAX_QUERY_BYTES = 16 * 1024;

export interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A request body as the route's schema would take it (api/routes/graphql.ts), or undefined for the route to
 * say what is wrong with it. For the answers kept (api/graphql/answers.ts), which are looked up before hono.
 */
export function graphqlRequestOf(body: string): GraphqlRequest | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const { query, variables, operationName } = parsed;
  if (typeof query !== "string" || query.length === 0 || query.length > MAX_QUERY_BYTES) return undefined;
  if (variables !== undefined && variables !== null && !isRecord(variables)) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") return undefined;
  return { query, variables, operationName };
}
