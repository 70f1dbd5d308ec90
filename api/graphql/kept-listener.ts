/**
 * Kept GraphQL answers, answered in front of hono (docs/index.md, "Answers kept"). An answer the index keeps
 * (api/graphql/answers.ts) is JSON text, the same for every client until the index's next commit. Sent
 * through hono it cost three times what writing it costs: the WHATWG Request and Response, the middleware
 * chain, the route's validation (measured on this machine: about 4,200 answers/s against 15,000 for node's
 * own server writing the same bytes).
 *
 * This listener takes a `POST /graphql` of declared length and JSON type with no read-your-writes need
 * (X-Min-Input-Index), reads its body, and when the index keeps its answer, sends it with what hono's path
 * adds to every answer: the request id, CORS, the rate limit (its 429 too), the replica's name, and the
 * request's metric and log line. Anything else goes on to hono: at once when it is not such a request, with
 * the body already read otherwise (a miss, or a body that is not a GraphQL request: hono's path says what is
 * wrong with it), which @hono/node-server and api/validation.ts read from `rawBody`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { answeringReplica, CORS_HEADERS, REPLICA_HEADER } from "../app.ts";
import { ApiError, errorBody } from "../errors.ts";
import { logRequest, requestIdOf } from "../log.ts";
import { clientAddress, RateLimitedError, rateLimitHeaders, type RateDecision } from "../rate-limit.ts";
import { MIN_INPUT_INDEX_HEADER } from "../rollup/read-context.ts";
import type { ApiServices } from "../services.ts";
import { JSON_MEDIA_TYPE, MAX_BODY_BYTES, type WithRawBody } from "../validation.ts";

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => unknown;

const ROUTE = "/graphql";
const MIN_INPUT_INDEX = MIN_INPUT_INDEX_HEADER.toLowerCase();

/** Whether the request is one this listener may answer, before its body is read. */
function eligible(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.url !== ROUTE || req.headers[MIN_INPUT_INDEX] !== undefined) return false;
  const type = req.headers["content-type"];
  if (type !== undefined && !JSON_MEDIA_TYPE.test(type)) return false;
  // A declared length within the limit (node's parser holds the body to it); a chunked body goes to hono.
  const length = Number(req.headers["content-length"] ?? Number.NaN);
  return Number.isSafeInteger(length) && length > 0 && length <= MAX_BODY_BYTES;
}

/** A listener that answers kept GraphQL answers itself and hands every other request to `next` (hono's). */
export function keptAnswerListener(services: ApiServices, next: RequestListener): RequestListener {
  const replica = answeringReplica(services);
  // As node's flat header list (name, value, ...): cheaper for writeHead than an object made per answer.
  const fixed: string[] = Object.entries({ "content-type": "application/json", ...CORS_HEADERS, ...(replica === undefined ? {} : { [REPLICA_HEADER]: replica }) }).flat();
  const { limiter, metrics, logger } = services;
  const trustProxy = services.config.trustProxy;

  const send = (req: IncomingMessage, res: ServerResponse, started: number, status: number, body: Buffer, headers: Record<string, string>): void => {
    const offered = req.headers["x-request-id"];
    const reqId = requestIdOf(typeof offered === "string" ? offered : undefined);
    res.writeHead(status, [...fixed, ...Object.entries(headers).flat(), "X-Request-Id", reqId, "content-length", String(body.length)]);
    res.end(body);
    const elapsed = performance.now() - started;
    metrics.observeRequest(ROUTE, "POST", status, elapsed / 1000);
    logRequest(logger, { reqId, method: "POST", route: ROUTE, status, ms: Math.round(elapsed * 10) / 10 });
  };

  const answer = async (req: WithRawBody, res: ServerResponse, started: number, body: Buffer): Promise<void> => {
    const kept = services.index.kept(body);
    let decision: RateDecision | undefined;
    if (kept !== undefined && limiter !== undefined) {
      const forwarded = req.headers["x-forwarded-for"];
      const client = clientAddress(trustProxy, Array.isArray(forwarded) ? forwarded[0] : forwarded, req.socket.remoteAddress);
      try {
        decision = await limiter.hit("schemas", client);
      } catch {
        // The store failed (at once or later): hono's path asks it again and answers what it says.
        return handOn(req, res, body);
      }
    }
    if (kept === undefined) return handOn(req, res, body);
    if (decision === undefined) return send(req, res, started, 200, kept, {});
    const headers = rateLimitHeaders(decision);
    if (decision.allowed) return send(req, res, started, 200, kept, headers);
    const refused = new RateLimitedError(decision, headers);
    send(req, res, started, refused.status, Buffer.from(JSON.stringify(errorBody(refused))), headers);
  };

  const handOn = (req: WithRawBody, res: ServerResponse, body: Buffer): void => {
    req.rawBody = body;
    void next(req, res);
  };

  return (req, res) => {
    if (!eligible(req)) return next(req, res);
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      answer(req, res, started, body).catch((error: unknown) => {
        logger.error({ err: error, method: "POST", path: ROUTE }, "unexpected fault");
        if (!res.headersSent) send(req, res, started, 500, Buffer.from(JSON.stringify(errorBody(new ApiError("INTERNAL_ERROR", "Internal server error")))), {});
      });
    });
    // A request torn off mid-body has no one to answer.
    req.once("error", () => res.destroy());
  };
}
