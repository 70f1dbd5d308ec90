/**
 * A v2 devnode's NODE_PORT: what the Cartesi CLI 2 devnet proxy serves on one port — JSON-RPC at
 * `POST /rpc` and inspect at `POST /inspect/<application>` — plus the devnode's own `/metrics`,
 * `/healthz`, `GET /epochs` and `POST /epoch/close`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { toHex, type Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { BodyTooLargeError, readBody, sendJson, sendText } from "../http.ts";
import type { DevnodeMetrics } from "../metrics.ts";
import type { InspectOutcome, RollupModel } from "../model.ts";
import type { V2EpochManager } from "./epochs.ts";
import { RpcError, V2Rpc } from "./rpc.ts";

/** The node's limits: 1 MiB for a JSON-RPC request, 2 MiB for an inspect payload. */
const RPC_MAX_BYTES = 1024 * 1024;
const INSPECT_MAX_BYTES = 2 * 1024 * 1024;
const CORS = { "access-control-allow-origin": "*" };

/** How long `POST /epoch/close` waits for the inputs already seen to be processed first. */
const SETTLE_WAIT_MS = 10_000;

interface RpcRequest {
  jsonrpc?: unknown;
  method?: unknown;
  params?: unknown;
  id?: unknown;
}

/** The node writes JSON with Go's encoder: one line, newline-terminated. */
function sendRpc(res: ServerResponse, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...CORS });
  res.end(text);
}

function answer(rpc: V2Rpc, request: RpcRequest): unknown {
  const id = request.id ?? null;
  if (typeof request.method !== "string") return { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id };
  try {
    return { jsonrpc: "2.0", result: rpc.call(request.method, request.params), id };
  } catch (error) {
    if (error instanceof RpcError) return { jsonrpc: "2.0", error: { code: error.code, message: error.message }, id };
    console.error(`[devnode] JSON-RPC ${request.method}:`, error);
    return { jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id };
  }
}

/** The dapp's exception payload as the reason text: its UTF-8 when it is text, else its hex. */
function exceptionText(payload: Hex): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(payload.slice(2), "hex"));
  } catch {
    return payload;
  }
}

/** The v2 inspect answer: `reports` is null when the dapp gave none, as the node's encoder writes it. */
function inspectAnswer(res: ServerResponse, outcome: InspectOutcome): void {
  if (!outcome.ok) {
    const status = outcome.reason === "no_dapp" || outcome.reason === "shutdown" ? 503 : 500;
    return sendText(res, status, outcome.reason === "no_dapp" ? "Machine not ready" : outcome.message, CORS);
  }
  const exception = outcome.exceptionPayload !== null;
  sendJson(
    res,
    200,
    {
      // A dapp that raised an exception during an inspect: the node answers "Exception" and says why.
      status: exception ? "Exception" : outcome.status,
      ...(exception ? { exception: exceptionText(outcome.exceptionPayload as Hex) } : {}),
      reports: outcome.reports.length === 0 ? null : outcome.reports.map((payload) => ({ payload })),
      processed_input_count: outcome.processedInputCount,
    },
    CORS,
  );
}

export function createV2NodeServer(model: RollupModel, rpc: V2Rpc, epochs: V2EpochManager, metrics: DevnodeMetrics): Server {
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = (req.url ?? "/").split("?")[0] as string;
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res.writeHead(204, { ...CORS, "access-control-allow-methods": "POST, OPTIONS", "access-control-allow-headers": "Content-Type", "access-control-max-age": "86400" });
      return void res.end();
    }
    if (url === "/rpc") {
      if (method !== "POST") return sendText(res, 405, "Method not allowed", { ...CORS, allow: "POST" });
      const body = await readBody(req, RPC_MAX_BYTES);
      let request: unknown;
      try {
        request = JSON.parse(body.toString("utf8"));
      } catch {
        return sendText(res, 400, "Invalid JSON", CORS);
      }
      if (typeof request !== "object" || request === null || Array.isArray(request)) {
        return sendRpc(res, { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id: null });
      }
      return sendRpc(res, answer(rpc, request as RpcRequest));
    }
    if (url === "/inspect" || url.startsWith("/inspect/")) {
      if (method !== "POST") return sendText(res, 405, "Method not allowed", { ...CORS, allow: "POST" });
      const application = decodeURIComponent(url.slice("/inspect/".length));
      if (application === "") return sendText(res, 400, "Missing application address", CORS);
      if (!rpc.names(application)) return sendText(res, 404, "Application not found", CORS);
      const payload = await readBody(req, INSPECT_MAX_BYTES);
      const started = performance.now();
      const outcome = await model.inspect(toHex(payload));
      metrics.observeInspect(outcome.ok ? outcome.status : outcome.reason, (performance.now() - started) / 1000);
      return inspectAnswer(res, outcome);
    }
    if (url === "/metrics" && method === "GET") {
      const body = await metrics.text();
      res.writeHead(200, { "content-type": metrics.registry.contentType, "content-length": Buffer.byteLength(body) });
      return void res.end(body);
    }
    if (url === "/epoch/close" && method === "POST") {
      const deadline = Date.now() + SETTLE_WAIT_MS;
      while (Date.now() < deadline) {
        const status = model.status();
        if (status.queuedInputs === 0 && status.state !== "advancing") break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const closed = await epochs.close();
      return sendJson(res, 200, { closed, ...epochs.status(), ...epochs.addresses }, CORS);
    }
    if (url === "/epochs" && method === "GET") return sendJson(res, 200, { ...epochs.status(), ...epochs.addresses }, CORS);
    if (url === "/healthz" && method === "GET") return sendJson(res, 200, { status: "ok", rollups: "v2", ...model.status() }, CORS);
    sendText(res, 404, "not found", CORS);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof BodyTooLargeError) return sendText(res, 413, "Payload too large", CORS);
      console.error("[devnode] v2 node server:", error);
      sendText(res, 500, messageOf(error), CORS);
    });
  });
  server.keepAliveTimeout = 65_000;
  return server;
}
