/**
 * One GraphQL request against the index, as both the indexer's `/graphql` and the api's (reading a
 * PostgreSQL server itself) answer it: parse, validate with the spec's rules and the limits
 * (api/graphql/schema.ts), execute (api/graphql/resolve.ts). A query refused by any of them is answered 400
 * before anything is read. A document seen before skips parsing and validation: EAS's applications send the
 * same few queries with other variables.
 */
import { execute, GraphQLError, Kind, parse, specifiedRules, validate, visit, type DocumentNode } from "graphql";
import { answerCache, type IndexVersion } from "./answers.ts";
import { MAX_QUERY_BYTES, type GraphqlRequest } from "./request.ts";
import { indexRoot, type IndexReads } from "./resolve.ts";
import { limitsRule, MAX_SKIP, MAX_TAKE, schema } from "./schema.ts";

/** Most tokens parsed: a huge document is refused before it costs anything (so is a long one: MAX_QUERY_BYTES). */
const MAX_TOKENS = 2_000;
/** Validated documents kept, by their text. */
const CACHED_DOCUMENTS = 256;

const READ_FAILURES = new Set(["QUERY_TIMEOUT", "INDEX_UNAVAILABLE"]);

export interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; [key: string]: unknown }[];
  extensions?: Record<string, unknown>;
}

export interface GraphqlAnswer {
  status: 200 | 400;
  body: GraphqlBody;
  /** `body` as JSON, when it is at hand (an answer kept): sent as it is, never serialized again. */
  text?: string;
}

/** An error as GraphQL says it; a read's failure carries a code, never the SQL. */
export function formatted(error: GraphQLError): { message: string; [key: string]: unknown } {
  const original = error.originalError;
  if (original !== undefined && !(original instanceof GraphQLError) && error.extensions.code === undefined) {
    const timeout = /statement timeout/i.test(original.message);
    const message = timeout ? "the query took longer than the index allows (its statement timeout): narrow it" : "the index could not answer";
    return { message, ...(error.locations === undefined ? {} : { locations: error.locations }), ...(error.path === undefined ? {} : { path: error.path }), extensions: { code: timeout ? "QUERY_TIMEOUT" : "INDEX_UNAVAILABLE" } };
  }
  return error.toJSON() as { message: string };
}

/** The variables a document gives `take` or `skip` by, with the most each may be. */
type PagingVariables = readonly { name: string; argument: "take" | "skip"; max: number }[];

function pagingVariables(document: DocumentNode): PagingVariables {
  const found: { name: string; argument: "take" | "skip"; max: number }[] = [];
  visit(document, {
    Argument(node) {
      if (node.value.kind !== Kind.VARIABLE || (node.name.value !== "take" && node.name.value !== "skip")) return;
      found.push({ name: node.value.name.value, argument: node.name.value, max: node.name.value === "take" ? MAX_TAKE : MAX_SKIP });
    },
  });
  return found;
}

/** A take or skip given by a variable, checked as a literal one is (schema.ts), before anything is read. */
function variablePaging(paging: PagingVariables, variables: Record<string, unknown>): string | undefined {
  for (const { name, argument, max } of paging) {
    const value = variables[name];
    if (typeof value === "number" && (value < 0 || value > max)) return `${argument}: ${value} is out of range (0..${max})`;
  }
  return undefined;
}

/**
 * The checks a request passes before anything is read: parsing, the spec's rules, the limits, and the
 * variables' paging. Documents that passed are kept by their text, with the variables their paging takes.
 */
export function graphqlGate(): (request: GraphqlRequest) => DocumentNode | GraphqlAnswer {
  const documents = new Map<string, { document: DocumentNode; paging: PagingVariables }>();
  const documentOf = (query: string): { document: DocumentNode; paging: PagingVariables } | GraphqlAnswer => {
    const cached = documents.get(query);
    if (cached !== undefined) return cached;
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_TOKENS });
    } catch (error) {
      return { status: 400, body: { errors: [formatted(error instanceof GraphQLError ? error : new GraphQLError(String(error)))] } };
    }
    const invalid = validate(schema, document, [...specifiedRules, limitsRule]);
    if (invalid.length > 0) return { status: 400, body: { errors: invalid.map(formatted) } };
    if (documents.size >= CACHED_DOCUMENTS) documents.delete(documents.keys().next().value as string);
    const checked = { document, paging: pagingVariables(document) };
    documents.set(query, checked);
    return checked;
  };
  return (request) => {
    if (request.query.length > MAX_QUERY_BYTES) return { status: 400, body: { errors: [{ message: `the query is ${request.query.length} bytes; at most ${MAX_QUERY_BYTES}` }] } };
    const checked = documentOf(request.query);
    if (!("document" in checked)) return checked;
    const problem = variablePaging(checked.paging, request.variables ?? {});
    return problem === undefined ? checked.document : { status: 400, body: { errors: [{ message: problem, extensions: { code: "BAD_USER_INPUT" } }] } };
  };
}

/** Whether the gate let a request through: its document, or the answer that refused it. */
export const passed = (checked: DocumentNode | GraphqlAnswer): checked is DocumentNode => "kind" in checked;

/**
 * Runs requests against the index. With `version` (the index's, api/graphql/answers.ts) answers are kept
 * until the index changes; without it, or for a `fresh` request, every request reads.
 */
export type GraphqlRun = ((request: GraphqlRequest, fresh?: boolean) => Promise<GraphqlAnswer>) & {
  /** The bytes of the answer kept for a request's `body`, if any (answerCache's `peek`): no read, no gate. */
  kept(body: Buffer): Buffer | undefined;
};

export function graphqlExecutor(index: IndexReads, version?: IndexVersion): GraphqlRun {
  const gate = graphqlGate();
  const answers = version === undefined ? undefined : answerCache(version);
  const run = async (request: GraphqlRequest, fresh = false): Promise<GraphqlAnswer> => {
    const document = gate(request);
    if (!passed(document)) return document;
    // `fresh`: the caller has seen the index hold what it needs; a kept answer may predate the news of it.
    const cached = fresh ? undefined : answers?.get(request);
    if (cached?.answer !== undefined) return cached.answer;
    const answer = await executeDocument(index, document, request);
    cached?.keep?.(answer);
    return answer;
  };
  return Object.assign(run, { kept: (body: Buffer) => answers?.peek(body) });
}

async function executeDocument(index: IndexReads, document: DocumentNode, request: GraphqlRequest): Promise<GraphqlAnswer> {
  const result = await execute({ schema, document, rootValue: indexRoot(index), variableValues: request.variables ?? undefined, operationName: request.operationName ?? undefined });
  const errors = result.errors?.map(formatted);
  // No data and no failed read: the request itself was wrong (a variable of the wrong type...).
  const readFailed = errors?.some((e) => READ_FAILURES.has(String((e.extensions as { code?: unknown } | undefined)?.code))) === true;
  if (result.data == null && !readFailed) return { status: 400, body: { errors: errors ?? [] } };
  return { status: 200, body: { data: (result.data ?? null) as Record<string, unknown> | null, ...(errors === undefined ? {} : { errors }) } };
}
