/**
 * Extension (docs/graphql.md): EAS's GraphQL on the api, `POST /graphql` and `GET /graphql?query=`, as
 * GraphQL servers take them, answered from the index of the rollup's notices (api/index/queries.ts: the
 * indexer's, or the api's own read of a PostgreSQL index). A query refused by the spec's rules or the limits
 * (api/graphql/schema.ts) is answered 400 with GraphQL's own `errors`, before anything is read. Rate group
 * `schemas`: these are reads.
 */
import { createRoute, z, type RouteConfigToTypedResponse } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MAX_QUERY_BYTES, type GraphqlRequest } from "../graphql/request.ts";
import { currentReadNeeds } from "../rollup/read-context.ts";
import { errorResponses, jsonContent, jsonRequest, operationTraits, router, type OperationTraits } from "../operations.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { jsonBody } from "../validation.ts";

const requestSchema = z.object({
  query: z.string().min(1).max(MAX_QUERY_BYTES),
  variables: z.record(z.string(), z.unknown()).nullable().optional(),
  operationName: z.string().nullable().optional(),
});

const resultSchema = z
  .object({
    data: z.record(z.string(), z.unknown()).nullable().optional(),
    errors: z.array(z.object({ message: z.string() }).passthrough()).optional(),
  })
  .openapi("GraphQLResult", { description: "GraphQL's answer: data, and errors (each with its message, locations and path)" });

/** The last input the index held when it answered a request that named one. */
export const INDEX_INPUT_HEADER = "X-Index-Input";

const traits: OperationTraits = { group: "schemas", errors: ["INVALID_REQUEST", "INDEX_UNAVAILABLE", "INDEX_BEHIND"] };
const responses = {
  200: jsonContent(resultSchema, "The query ran: its data (and the errors of the fields that failed, if any)"),
  400: jsonContent(resultSchema.or(z.object({ success: z.literal(false) }).passthrough()), "Refused before any read: a syntax error, an unknown field, a wrong type, or a limit (depth, root fields, take)"),
  ...Object.fromEntries(Object.entries(errorResponses(traits)).filter(([status]) => status !== "400")),
};

export const graphqlPostRoute = createRoute({
  method: "post",
  path: "/graphql",
  summary: "Extension (docs/graphql.md): EAS's GraphQL (attestation, attestations, aggregateAttestation, groupByAttestation, schema, schemata, ...) over the index of the rollup's notices",
  ...operationTraits(traits),
  request: jsonRequest(requestSchema),
  responses,
});

export const graphqlGetRoute = createRoute({
  method: "get",
  path: "/graphql",
  summary: "Extension (docs/graphql.md): the same GraphQL as a GET, `?query=` with `variables` as JSON",
  ...operationTraits(traits),
  request: { query: z.object({ query: z.string().min(1).max(MAX_QUERY_BYTES), variables: z.string().max(MAX_QUERY_BYTES).optional(), operationName: z.string().optional() }) },
  responses,
});

export function graphqlRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "schemas", clientOf);
  // Read-your-writes as the client asks it (X-Min-Input-Index): the answer sees that input or is refused.
  // The answer is JSON text already (often one kept): it is sent as it is.
  const run = async (c: Context, request: GraphqlRequest) => {
    const answer = await services.index.graphql(request, currentReadNeeds()?.minInputIndex ?? -1);
    if (answer.indexInput !== undefined) c.header(INDEX_INPUT_HEADER, String(answer.indexInput));
    return c.body(answer.text, answer.status === 400 ? 400 : 200, { "content-type": "application/json" }) as unknown as RouteConfigToTypedResponse<typeof graphqlPostRoute>;
  };
  return router()
    .openapi({ ...graphqlPostRoute, middleware: [limited, jsonBody] }, (c) => run(c, c.req.valid("json")))
    .openapi({ ...graphqlGetRoute, middleware: [limited] }, async (c) => {
      const params = c.req.valid("query");
      let variables: Record<string, unknown> | undefined;
      if (params.variables !== undefined) {
        try {
          variables = z.record(z.string(), z.unknown()).parse(JSON.parse(params.variables));
        } catch {
          return c.json({ errors: [{ message: "variables: expected a JSON object" }] }, 400);
        }
      }
      return run(c, { query: params.query, variables, operationName: params.operationName });
    });
}
