/**
 * The specification's rollup query interface (`GET /inspect/<percent-encoded JSON>`, `POST /inspect` with
 * the raw query, the Accepted/Rejected envelope: DECISIONS.md sections 9 and 15) over a Cartesi Rollups v2
 * node, which answers inspects only at `POST /inspect/<application>` in its own shape. A thin adapter: the
 * query goes to the node as it came, and the node's answer comes back in the specification's envelope.
 * The v2 devnode serves it beside the node's own inspect; `npm run inspect-adapter` serves it in front of a
 * real v2 node (docs/rollups-v2.md).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendJson, sendText } from "../http.ts";
import { decodeInspectPath, envelopeJson } from "../inspect.ts";

/** A v2 node's inspect answer: its HTTP status and, for a 200, its JSON body; otherwise its text. */
export type V2InspectAnswer = { status: 200; body: V2InspectBody } | { status: number; text: string };

/** The JSON a v2 node answers an inspect with (internal/inspect in cartesi/rollups-node). */
export interface V2InspectBody {
  status: string;
  /** The dapp's exception payload, as hex (the node's `exception_data`), when the inspect was refused. */
  exception_data?: string | null;
  /** A reason in words (the node's `error`, or the devnode's `exception` text). */
  error?: string | null;
  exception?: string | null;
  reports: { payload: string }[] | null;
  processed_input_count: number;
}

/** Sends one inspect payload to a v2 node and returns its answer. */
export type V2Inspect = (payload: Buffer) => Promise<V2InspectAnswer>;

/** The largest query the adapter takes (the v2 node's own limit on an inspect payload). */
export const SPEC_INSPECT_MAX_BYTES = 2 * 1024 * 1024;

const CORS = { "access-control-allow-origin": "*" };

function hexOfText(text: string): `0x${string}` {
  return `0x${Buffer.from(text, "utf8").toString("hex")}`;
}

/**
 * The specification's envelope for a v2 answer: Accepted with the reports (`[]` for none), or Rejected
 * with the dapp's exception payload as hex and no reports.
 */
export function specEnvelope(body: V2InspectBody): string {
  const accepted = body.status === "Accepted";
  if (accepted) {
    const reports = (body.reports ?? []).map((r) => r.payload as `0x${string}`);
    return envelopeJson("Accepted", null, reports, body.processed_input_count);
  }
  const exception =
    typeof body.exception_data === "string" && /^0x(?:[0-9a-fA-F]{2})*$/.test(body.exception_data)
      ? (body.exception_data.toLowerCase() as `0x${string}`)
      : hexOfText(body.exception ?? body.error ?? body.status);
  return envelopeJson("Rejected", exception, [], body.processed_input_count);
}

/**
 * Serves `GET /inspect/<query>` and `POST /inspect` for `inspect`; answers false for any other path, so
 * the caller can route it elsewhere.
 */
export async function serveSpecInspect(req: IncomingMessage, res: ServerResponse, inspect: V2Inspect): Promise<boolean> {
  const url = req.url ?? "/";
  const method = req.method ?? "GET";
  const path = url.split("?")[0] as string;
  let payload: Buffer;
  if (method === "GET" && url.startsWith("/inspect/")) payload = decodeInspectPath(url.slice("/inspect/".length));
  else if (method === "POST" && path === "/inspect") payload = await readBody(req, SPEC_INSPECT_MAX_BYTES);
  else return false;
  const answer = await inspect(payload);
  if (answer.status !== 200 || !("body" in answer)) {
    sendJson(res, answer.status, { error: { code: answer.status === 503 ? "NOT_READY" : "NODE_ERROR", message: "text" in answer ? answer.text : "" } }, CORS);
    return true;
  }
  const body = specEnvelope(answer.body);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...CORS });
  res.end(body);
  return true;
}

/** A v2 node's inspect over HTTP: `POST <nodeUrl>/inspect/<application>`. */
export function v2InspectOverHttp(nodeUrl: string, application: string, timeoutMs = 30_000): V2Inspect {
  const target = `${nodeUrl.replace(/\/+$/, "")}/inspect/${encodeURIComponent(application)}`;
  return async (payload) => {
    let response: Response;
    try {
      response = await fetch(target, { method: "POST", body: new Uint8Array(payload), headers: { "content-type": "application/octet-stream" }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      return { status: 502, text: `the v2 node does not answer: ${error instanceof Error ? error.message : String(error)}` };
    }
    const text = await response.text();
    if (response.status !== 200) return { status: response.status, text };
    try {
      return { status: 200, body: JSON.parse(text) as V2InspectBody };
    } catch {
      return { status: 502, text: "the v2 node's inspect answer is not JSON" };
    }
  };
}

/** A whole adapter server's request handler: the two spec paths, and 404 for everything else. */
export function specInspectRoute(inspect: V2Inspect): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (await serveSpecInspect(req, res, inspect)) return;
    const method = req.method ?? "GET";
    if ((req.url ?? "").startsWith("/inspect")) return sendText(res, 405, "method not allowed", CORS);
    sendText(res, 404, `not found: ${method} ${req.url ?? "/"}`, CORS);
  };
}
