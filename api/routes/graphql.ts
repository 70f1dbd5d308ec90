/**
 * Extension (docs/graphql.md): EAS's GraphQL on the api, `POST /graphql` and `GET /graphql?query=`, as
 * GraphQL servers take them. graphql-js parses, validates (the spec's rules and this api's limits:
 * api/graphql/schema.ts) and executes; a query refused by any of them is answered 400 with GraphQL's own
 * `errors`, before anything is read. Rate group `schemas`: these are reads.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { execute, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionResult } from "graphql";
import { ApiError } from "../errors.ts";
import { graphqlRoot } from "../graphql/resolve.ts";
import { limitsRule, schema } from "../graphql/schema.ts";
import { errorResponses, jsonContent, jsonRequest, operationTraits, router, type OperationTraits } from "../operations.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { jsonBody } from "../validation.ts";

/** Longest query text taken, and most tokens parsed: a huge document is refused before it costs anything. */
const MAX_QUERY_BYTES = 16 * 1024;
const MAX_TOKENS = 2_000;

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

const traits: OperationTraits = { group: "schemas", errors: ["INVALID_REQUEST"] };
const responses = {
  200: jsonContent(resultSchema, "The query ran: its data (and the errors of the fields that failed, if any)"),
  400: jsonContent(resultSchema.or(z.object({ success: z.literal(false) }).passthrough()), "Refused before any read: a syntax error, an unknown field, a wrong type, or a limit (depth, root fields, take)"),
  ...Object.fromEntries(Object.entries(errorResponses(traits)).filter(([status]) => status !== "400")),
};

export const graphqlPostRoute = createRoute({
  method: "post",
  path: "/graphql",
  summary: "Extension (docs/graphql.md): EAS's GraphQL (attestation, attestations, aggregateAttestation, schema, schemata) over the rollup's state",
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

/** A field's failure as GraphQL says it, with the api's error code where there is one. */
function formatted(error: GraphQLError): Record<string, unknown> {
  const original = error.originalError;
  const extensions = original instanceof ApiError ? { code: original.code, ...(original.details === undefined ? {} : { details: original.details }) } : error.extensions;
  return { ...error.toJSON(), ...(Object.keys(extensions).length === 0 ? {} : { extensions }) };
}

export function graphqlRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "schemas", clientOf);
  const root = graphqlRoot(services);
  const run = async (query: string, variables: Record<string, unknown> | null | undefined, operationName: string | null | undefined): Promise<{ status: 200 | 400; body: z.infer<typeof resultSchema> }> => {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_TOKENS });
    } catch (error) {
      return { status: 400, body: { errors: [formatted(error instanceof GraphQLError ? error : new GraphQLError(String(error)))] as { message: string }[] } };
    }
    const invalid = validate(schema, document, [...specifiedRules, limitsRule]);
    if (invalid.length > 0) return { status: 400, body: { errors: invalid.map(formatted) as { message: string }[] } };
    const result: ExecutionResult = await execute({ schema, document, rootValue: root, variableValues: variables ?? undefined, operationName: operationName ?? undefined });
    const errors = result.errors?.map(formatted) as { message: string }[] | undefined;
    // No data at all: the request itself was wrong (a variable of the wrong type, take out of range...).
    if (result.data == null) return { status: 400, body: { errors: errors ?? [] } };
    return { status: 200, body: { data: result.data as Record<string, unknown>, ...(errors === undefined ? {} : { errors }) } };
  };
  return router()
    .openapi({ ...graphqlPostRoute, middleware: [limited, jsonBody] }, async (c) => {
      const body = c.req.valid("json");
      const { status, body: answer } = await run(body.query, body.variables, body.operationName);
      return c.json(answer, status);
    })
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
      const { status, body: answer } = await run(params.query, variables, params.operationName);
      return c.json(answer, status);
    });
}
