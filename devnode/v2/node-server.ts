/**
 * A v2 devnode's NODE_PORT: what the Cartesi CLI 2 devnet proxy serves on one port — JSON-RPC at
 * `POST /rpc` and inspect at `POST /inspect/<application>` — plus the devnode's own `/metrics`,
 * `/healthz`, `GET /epochs` and `POST /epoch/close`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { toHex, type Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { BodyTooLargeError, readBody, sendJson, sendText } from "../http.ts";
import { createDevnodeLog, unexpected, type Log } from "../log.ts";
import type { DevnodeMetrics } from "../metrics.ts";
import type { RollupModel } from "../model.ts";
import type { InspectOutcome } from "../queues.ts";
import type { Reader } from "../reader.ts";
import type { ValidatorStatus } from "../validator.ts";
import type { V2EpochManager } from "./epochs.ts";
import type { QuorumVotes } from "./quorum-votes.ts";
import { serveSpecInspect, type V2InspectAnswer } from "./spec-inspect.ts";
import { isApplicationId, listLimitOf, RPC_ERRORS, RpcError } from "./rpc-params.ts";
import type { V2Rpc } from "./rpc.ts";

/** The node's limits: 1 MiB for a JSON-RPC request, 2 MiB for an inspect payload. */
const RPC_MAX_BYTES = 1024 * 1024;
const INSPECT_MAX_BYTES = 2 * 1024 * 1024;
const CORS = { "access-control-allow-origin": "*" };

/** How long `POST /epoch/close` waits for the inputs already seen to be processed first. */
const SETTLE_WAIT_MS = 10_000;

/** The node's limits on a batch: at most 100 requests, and list limits summing to at most 10,000. */
const MAX_BATCH = 100;
const BATCH_LIST_BUDGET = 10_000;

/** One JSON-RPC answer as Go's json.Encoder writes it: one line and a newline. */
function rpcLine(id: unknown, outcome: { result: unknown } | { error: { code: number; message: string } }): string {
  return `${JSON.stringify({ jsonrpc: "2.0", ...outcome, id: id ?? null })}\n`;
}
const rpcError = (id: unknown, code: number, message: string): string => rpcLine(id, { error: { code, message } });

/**
 * Go decodes a request into a struct of strings: a `jsonrpc` or `method` of another type fails the
 * decoding (a parse error), `null` leaves it empty.
 */
function decodes(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const { jsonrpc, method } = value as Record<string, unknown>;
  return [jsonrpc, method].every((field) => field === undefined || field === null || typeof field === "string");
}

/** One request, as the node's handleRequest judges it. */
function answerOne(rpc: V2Rpc, request: Record<string, unknown>, logError: Log): string {
  const { id, jsonrpc, method, params } = request;
  if (!(id === undefined || id === null || typeof id === "string" || typeof id === "number")) return rpcError(null, RPC_ERRORS.invalidRequest, "Invalid request ID");
  if (jsonrpc !== "2.0") return rpcError(id, RPC_ERRORS.invalidRequest, "Unsupported JSON-RPC version");
  if (typeof method !== "string" || method === "") return rpcError(id, RPC_ERRORS.invalidRequest, "Invalid Request");
  try {
    return rpcLine(id, { result: rpc.call(method, params) });
  } catch (error) {
    if (error instanceof RpcError) return rpcError(id, error.code, error.message);
    unexpected(logError, `JSON-RPC ${method}`, error);
    return rpcError(id, RPC_ERRORS.internal, "Internal server error");
  }
}

/** A whole request body (already trimmed, not empty): one request, a batch, or neither. */
function answerBody(rpc: V2Rpc, text: string, logError: Log): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return rpcError(null, RPC_ERRORS.parse, "Parse error");
  }
  if (text.startsWith("{")) return decodes(parsed) ? answerOne(rpc, parsed, logError) : rpcError(null, RPC_ERRORS.parse, "Parse error");
  if (!text.startsWith("[") || !Array.isArray(parsed)) return rpcError(null, RPC_ERRORS.invalidRequest, "Invalid Request");
  if (parsed.length === 0 || parsed.length > MAX_BATCH) return rpcError(null, RPC_ERRORS.invalidBatch, `invalid request batch size (expected [1..${MAX_BATCH}])`);
  const budget = parsed.reduce<number>((sum, item) => (decodes(item) && item.jsonrpc === "2.0" && typeof item.method === "string" ? sum + listLimitOf(item.method, item.params) : sum), 0);
  if (budget > BATCH_LIST_BUDGET) return rpcError(null, RPC_ERRORS.batchListItemLimit, "Batch list item limit exceeded");
  return `[${parsed.map((item) => (decodes(item) ? answerOne(rpc, item, logError) : rpcError(null, RPC_ERRORS.invalidRequest, "Invalid Request"))).join(",")}]`;
}

function sendRpc(res: ServerResponse, text: string): void {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...CORS });
  res.end(text);
}

/**
 * The v2 inspect answer as the newest node writes it (internal/inspect, `InspectResponse`): `reports`
 * always an array; a dapp that raised an exception is `Exception` with the node's `error` text and the
 * dapp's payload as `exception_data`; an inspect the node could not complete (a timeout, the dapp gone
 * mid-way) is `Failed`; no machine is 503 `Machine not ready`.
 */
function v2Answer(outcome: InspectOutcome, processedInputCount: number): V2InspectAnswer {
  if (!outcome.ok) {
    if (outcome.reason === "no_dapp" || outcome.reason === "shutdown") return { status: 503, text: "Machine not ready" };
    return { status: 200, body: { status: "Failed", error: "The node could not complete the inspection", reports: [], processed_input_count: processedInputCount } };
  }
  const reports = outcome.reports.map((payload) => ({ payload }));
  if (outcome.exceptionPayload !== null) {
    return {
      status: 200,
      body: {
        status: "Exception",
        error: "The machine raised an exception while inspecting",
        exception_data: outcome.exceptionPayload,
        reports,
        processed_input_count: outcome.processedInputCount,
      },
    };
  }
  return { status: 200, body: { status: outcome.status, reports, processed_input_count: outcome.processedInputCount } };
}

/** The one path segment after `/inspect/`, decoded; undefined for another path or a malformed escape. */
function inspectSegment(url: string): string | undefined {
  if (!url.startsWith("/inspect/")) return undefined;
  try {
    return decodeURIComponent(url.slice("/inspect/".length));
  } catch {
    return undefined;
  }
}

/** The node answers errors as Go's http.Error does: plain text, a newline, no sniffing. */
function sendNodeText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  sendText(res, status, `${text}\n`, { ...CORS, "x-content-type-options": "nosniff", ...headers });
}

function inspectAnswer(res: ServerResponse, answer: V2InspectAnswer): void {
  if ("text" in answer) return sendNodeText(res, answer.status, answer.text);
  // Go's json.Encoder: one line and a newline.
  const text = `${JSON.stringify(answer.body)}\n`;
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...CORS });
  res.end(text);
}

/**
 * The node's routes; with a validator (DEVNODE_ROLE=validator), `GET /validator` gives its verdicts and
 * `POST /epoch/close` is not there: a validator closes nothing. A validator is a reader too
 * (devnode/reader.ts): `GET /reader`, `POST /snapshot`, and every inspect route refused while it must
 * serve no reads. `GET /consensus` says who claims (the Authority, or a Quorum and its members) and
 * each epoch's votes (devnode/v2/quorum-votes.ts).
 */
export function createV2NodeServer(
  model: RollupModel,
  rpc: V2Rpc,
  epochs: V2EpochManager,
  metrics: DevnodeMetrics,
  consensus: QuorumVotes,
  validator?: { status(): ValidatorStatus },
  reader?: Reader,
  /** Where an unexpected failure is reported (the node's labelled log). */
  logError: Log = createDevnodeLog("plain").error,
): Server {
  const inspect = async (payload: Buffer): Promise<V2InspectAnswer> => {
    const started = performance.now();
    const outcome = await model.inspect(toHex(payload));
    metrics.observeInspect(outcome.ok ? outcome.status : outcome.reason, (performance.now() - started) / 1000);
    return v2Answer(outcome, model.processedInputCount);
  };
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = (req.url ?? "/").split("?")[0] as string;
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res.writeHead(204, { ...CORS, "access-control-allow-methods": "GET, POST, OPTIONS", "access-control-allow-headers": "Content-Type", "access-control-max-age": "86400" });
      return void res.end();
    }
    if (url === "/rpc") {
      // The node takes any HTTP method here, reads at most 1 MiB, and answers everything else in JSON-RPC.
      let body: Buffer;
      try {
        body = await readBody(req, RPC_MAX_BYTES);
      } catch (error) {
        if (error instanceof BodyTooLargeError) return sendNodeText(res, 413, "Payload too large");
        throw error;
      }
      const text = body.toString("utf8").trim();
      if (text === "") return sendNodeText(res, 400, "Empty request body");
      return sendRpc(res, answerBody(rpc, text, logError));
    }
    const application = inspectSegment(url);
    // The node's `/inspect/{dapp}` takes POST alone, before it looks the application up: any other method
    // is 405 with Allow: POST. A GET whose segment is a query, not an application's name or address, is
    // the specification's interface below.
    if (application !== undefined && method !== "POST" && isApplicationId(application)) return sendNodeText(res, 405, "Method not allowed", { allow: "POST" });
    // Every read: the specification's GET /inspect/<query> and POST /inspect, and the node's POST /inspect/<application>.
    const read = (method === "GET" || method === "POST") && (url.startsWith("/inspect/") || (method === "POST" && url === "/inspect"));
    if (read && reader?.refuseRead(res) === true) return;
    // The specification's query interface (GET /inspect/<query>, POST /inspect), as the adapter serves it
    // in front of any v2 node: over this node's own inspect.
    if (await serveSpecInspect(req, res, inspect)) return;
    if (url.startsWith("/inspect/")) {
      // The node's route is `/inspect/{dapp}`: one path segment, no more and no less.
      if (application === undefined || application === "" || application.includes("/")) return sendNodeText(res, 404, "404 page not found");
      if (method !== "POST") return sendNodeText(res, 405, "Method not allowed", { allow: "POST" });
      let payload: Buffer;
      try {
        payload = await readBody(req, INSPECT_MAX_BYTES);
      } catch (error) {
        if (error instanceof BodyTooLargeError) return sendNodeText(res, 413, "Payload too large");
        throw error;
      }
      if (!rpc.names(application)) return sendNodeText(res, 404, "Application not found");
      return inspectAnswer(res, await inspect(payload));
    }
    if (url === "/inspect") return sendNodeText(res, 404, "404 page not found");
    if (url === "/metrics" && method === "GET") {
      const body = await metrics.text();
      res.writeHead(200, { "content-type": metrics.registry.contentType, "content-length": Buffer.byteLength(body) });
      return void res.end(body);
    }
    if (validator !== undefined && url === "/validator" && method === "GET") return sendJson(res, 200, validator.status(), CORS);
    if (validator === undefined && url === "/epoch/close" && method === "POST") {
      const deadline = Date.now() + SETTLE_WAIT_MS;
      while (Date.now() < deadline) {
        const status = model.status();
        if (status.queuedInputs === 0 && status.state !== "advancing") break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const closed = await epochs.close();
      return sendJson(res, 200, { closed, ...epochs.status(), ...epochs.addresses }, CORS);
    }
    if (url === "/consensus" && method === "GET") {
      try {
        await consensus.refresh();
      } catch (error) {
        // The chain did not answer: what was read before still stands, and says how old it is by its blocks.
        return sendJson(res, 200, { ...consensus.status(), error: messageOf(error) }, CORS);
      }
      return sendJson(res, 200, consensus.status(), CORS);
    }
    if (url === "/epochs" && method === "GET") return sendJson(res, 200, { ...epochs.status(), ...epochs.addresses }, CORS);
    if (url === "/healthz" && method === "GET") return sendJson(res, 200, { status: "ok", rollups: "v2", ...model.status() }, CORS);
    if (reader !== undefined && (await reader.route(req, res, url, method))) return;
    sendText(res, 404, "not found", CORS);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof BodyTooLargeError) return sendText(res, 413, "Payload too large", CORS);
      unexpected(logError, "v2 node server", error);
      sendText(res, 500, messageOf(error), CORS);
    });
  });
  server.keepAliveTimeout = 65_000;
  return server;
}
