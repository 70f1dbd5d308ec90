/**
 * A v1 devnode's NODE_PORT, the query interface: `GET /inspect/<percent-encoded payload>`, `POST /inspect`
 * (raw body), `/graphql`, and the devnode's own `/metrics`, `GET /epochs`, `POST /epoch/close`,
 * `GET /validator` and `GET /healthz` (for the stack's readiness checks); a validator's `GET /reader` and
 * `POST /snapshot` (devnode/reader.ts), whose inspects it may refuse. The inspect path is the hot one:
 * no disk, no validation library, one JSON.stringify per answer. (A v2 devnode's is v2/node-server.ts.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type * as GraphQL from "graphql";
import type { DocumentNode, GraphQLError } from "graphql";
import { createHandler } from "graphql-http/lib/use/http";
import type { Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { BodyTooLargeError, readBody, sendJson, sendText } from "../http.ts";
import { decodeInspectPath, envelopeJson } from "../inspect.ts";
import { createDevnodeLog, unexpected, type Log } from "../log.ts";
import type { DevnodeMetrics } from "../metrics.ts";
import type { RollupModel } from "../model.ts";
import type { InspectOutcome } from "../queues.ts";
import type { Reader } from "../reader.ts";
import type { EpochValidator } from "../validator.ts";
import type { EpochManager } from "./epochs.ts";
import type { GraphqlApi } from "./graphql.ts";

const CORS = { "access-control-allow-origin": "*" };

// The same (CommonJS) graphql instance the schema (devnode/v1/graphql.ts) and graphql-http use: a document
// or schema from the other module format is refused as "from another realm".
const { parse, validate } = createRequire(import.meta.url)("graphql") as typeof GraphQL;

/** Distinct query texts whose parsed and validated documents are kept. */
const CACHED_DOCUMENTS = 256;

/**
 * Parsing and validating a GraphQL query cost more than running it: clients (the api's follower and
 * verdict watch) send the same few texts thousands of times. A text is parsed once and its document
 * validated once against the one schema; a text that does not parse is not kept.
 */
function memoizedDocuments(): { parse: typeof parse; validate: typeof validate } {
  const documents = new Map<string, DocumentNode>();
  const verdicts = new WeakMap<DocumentNode, ReadonlyArray<GraphQLError>>();
  return {
    parse(source, options) {
      const text = typeof source === "string" ? source : source.body;
      const known = documents.get(text);
      if (known !== undefined) return known;
      const document = parse(source, options);
      if (documents.size >= CACHED_DOCUMENTS) documents.clear();
      documents.set(text, document);
      return document;
    },
    validate(schema, document, rules, options, typeInfo) {
      // graphql-http passes a fresh copy of the specified rules each time (it adds none here): one schema,
      // one rule set, so a document's verdict is its own.
      if (typeInfo !== undefined) return validate(schema, document, rules, options, typeInfo);
      const known = verdicts.get(document);
      if (known !== undefined) return known;
      const errors = validate(schema, document, rules, options);
      verdicts.set(document, errors);
      return errors;
    },
  };
}
const INSPECT_PREFIX = "/inspect/";

function toHex(bytes: Buffer): Hex {
  return `0x${bytes.toString("hex")}`;
}

function answerInspect(res: ServerResponse, outcome: InspectOutcome): void {
  if (!outcome.ok) {
    const status = outcome.reason === "timeout" ? 504 : 503;
    return sendJson(res, status, { error: { code: outcome.reason.toUpperCase(), message: outcome.message } }, CORS);
  }
  const body = envelopeJson(outcome.status, outcome.exceptionPayload, outcome.reports, outcome.processedInputCount);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...CORS });
  res.end(body);
}

/** How long `POST /epoch/close` waits for the inputs already seen on the chain to be processed first. */
const CLOSE_WAIT_MS = 10_000;

async function settledModel(model: RollupModel): Promise<void> {
  const deadline = Date.now() + CLOSE_WAIT_MS;
  for (;;) {
    const status = model.status();
    if ((status.queuedInputs === 0 && status.state !== "advancing") || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function createQueryServer(
  model: RollupModel,
  graphql: GraphqlApi,
  epochs?: EpochManager,
  metrics?: DevnodeMetrics,
  validator?: EpochValidator,
  reader?: Reader,
  /** Where an unexpected failure is reported (the node's labelled log). */
  logError: Log = createDevnodeLog("plain").error,
): Server {
  const graphqlHandler = createHandler({ schema: graphql.schema, rootValue: graphql.rootValue, ...memoizedDocuments() });
  const inspect = async (payload: Buffer): Promise<InspectOutcome> => {
    const started = performance.now();
    const outcome = await model.inspect(toHex(payload));
    metrics?.observeInspect(outcome.ok ? outcome.status : outcome.reason, (performance.now() - started) / 1000);
    return outcome;
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? "/";
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res.writeHead(204, {
        ...CORS,
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "content-type, accept",
        "access-control-max-age": "86400",
      });
      return void res.end();
    }
    if (url.startsWith(INSPECT_PREFIX) || url === "/inspect" || url.startsWith("/inspect?")) {
      if ((method === "GET" || method === "POST") && reader?.refuseRead(res) === true) return;
      if (method === "GET") {
        const payload = url.startsWith(INSPECT_PREFIX) ? decodeInspectPath(url.slice(INSPECT_PREFIX.length)) : Buffer.alloc(0);
        return answerInspect(res, await inspect(payload));
      }
      if (method === "POST") return answerInspect(res, await inspect(await readBody(req)));
      return sendText(res, 405, "method not allowed", CORS);
    }
    if (url === "/metrics" && method === "GET" && metrics !== undefined) {
      const body = await metrics.text();
      res.writeHead(200, { "content-type": metrics.registry.contentType, "content-length": Buffer.byteLength(body) });
      return void res.end(body);
    }
    if (url === "/graphql" || url.startsWith("/graphql?")) {
      res.setHeader("access-control-allow-origin", "*");
      return graphqlHandler(req, res);
    }
    if (epochs !== undefined && url === "/epoch/close" && method === "POST") {
      // Devnode-only, like /healthz: closes an epoch now over every input it has read from the chain.
      await settledModel(model);
      const closed = await epochs.close();
      return sendJson(res, 200, { closed, ...epochs.status(), ...epochs.addresses }, CORS);
    }
    if (epochs !== undefined && url === "/epochs" && method === "GET") {
      return sendJson(res, 200, { ...epochs.status(), ...epochs.addresses }, CORS);
    }
    if (validator !== undefined && url === "/validator" && method === "GET") {
      // Devnode-only: a validator's verdicts on the claims on chain (npm run validate reads it).
      return sendJson(res, 200, validator.status(), CORS);
    }
    if (url === "/healthz" && method === "GET") {
      return sendJson(res, 200, { status: "ok", ...model.status() }, CORS);
    }
    if (reader !== undefined && (await reader.route(req, res, url.split("?")[0] as string, method))) return;
    sendText(res, 404, "not found", CORS);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof BodyTooLargeError) return sendText(res, 413, error.message, CORS);
      unexpected(logError, "query server", error);
      sendText(res, 500, messageOf(error), CORS);
    });
  });
  // Benchmarks and the api reuse connections; outlive common client idle timeouts.
  server.keepAliveTimeout = 65_000;
  return server;
}
