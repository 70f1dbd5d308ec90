/**
 * Request validation beside the routes' declared schemas: the body's size and JSON syntax, and how a zod
 * failure becomes INVALID_REQUEST naming the field or INVALID_PARAMETER (api/operations.ts hooks them in).
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
// The OpenAPI-extended zod: routes describe these schemas with `.openapi(...)`, whichever module loads first.
import { z } from "@hono/zod-openapi";
import { ApiError } from "./errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;

export const HEX32_RE = /^0x[0-9a-fA-F]{64}$/;

/**
 * An attestation id as a route names it, lower-cased. Ids are hashes: anything else names no
 * attestation, answered ATTESTATION_NOT_FOUND (with the id as sent) without a round trip to the rollup.
 */
export function attestationIdOf(raw: string): `0x${string}` {
  if (!HEX32_RE.test(raw)) throw new ApiError("ATTESTATION_NOT_FOUND", "Attestation not found", { claim_id: raw });
  return raw.toLowerCase() as `0x${string}`;
}
export const hex32Schema = z
  .string()
  .regex(HEX32_RE, "expected a 0x-prefixed 32-byte hex id")
  .transform((v) => v.toLowerCase() as `0x${string}`);

function tooLarge(): ApiError {
  return new ApiError("INVALID_REQUEST", `The request body exceeds ${MAX_BODY_BYTES} bytes`, {
    field: "body",
    issue: `larger than ${MAX_BODY_BYTES} bytes`,
  });
}

/** A JSON media type: application/json, or a +json one. */
export const JSON_MEDIA_TYPE = /^application\/([\w.+-]*\+)?json\b/i;

/** A request whose body was read before hono saw it (api/graphql/kept-listener.ts); @hono/node-server reads it too. */
export type WithRawBody = IncomingMessage & { rawBody?: Buffer };

interface NodeBindings {
  incoming?: WithRawBody;
}

/** The node request behind a Hono context when @hono/node-server serves it (absent in app.request tests). */
function incomingOf(c: Context): WithRawBody | undefined {
  return (c.env as NodeBindings | undefined)?.incoming;
}

/** Hono's limit, for bodies of unknown length: it reads through a counting stream and stops at the limit. */
const limitStream = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => { throw tooLarge(); } });

/**
 * The body as text, at most MAX_BODY_BYTES. A body of declared length is read straight from node's
 * request (node's parser holds it to that length): going through the WHATWG Request (a ReadableStream, an
 * AbortController, a size-counting copy of the stream) cost ~10% of the api's CPU per claim at 64
 * clients. A chunked body, of unknown length, goes through Hono's limit, which stops reading at the limit.
 */
async function bodyText(c: Context): Promise<string> {
  const length = c.req.header("content-length");
  const incoming = incomingOf(c);
  // Read already, within the limit, by the listener in front of hono.
  if (incoming?.rawBody instanceof Buffer) return incoming.rawBody.toString("utf8");
  if (length === undefined || incoming === undefined || incoming.readableDidRead) {
    let text = "";
    await limitStream(c, async () => {
      text = await c.req.text();
    });
    return text;
  }
  if (Number(length) > MAX_BODY_BYTES) throw tooLarge();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8")));
    incoming.once("error", reject);
  });
}

/**
 * The body's size and syntax, before the route's declared schema checks its content: JSON media type, at
 * most MAX_BODY_BYTES, not empty, well-formed, each failure an INVALID_REQUEST naming what is wrong. The
 * body is parsed once here and handed to the declared validator from Hono's body cache. A body sent
 * without a Content-Type is read as JSON, as it always was: the request is re-labelled so the declared
 * validator reads it too.
 */
export const jsonBody = createMiddleware(async (c, next) => {
  const contentType = c.req.header("content-type");
  if (contentType !== undefined && !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError("INVALID_REQUEST", "The body must be JSON", {
      field: "Content-Type",
      issue: `expected application/json, got ${contentType}`,
    });
  }
  const text = await bodyText(c);
  if (text.trim() === "") {
    throw new ApiError("INVALID_REQUEST", "The request body is empty", { field: "body", issue: "required" });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ApiError("INVALID_REQUEST", "The request body is not valid JSON", {
      field: "body",
      issue: `malformed JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  if (contentType === undefined) {
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    c.req.raw = new Request(c.req.url, { method: c.req.method, headers, body: text });
  }
  const cache = c.req.bodyCache as Record<string, Promise<unknown>>;
  cache.json = Promise.resolve(parsed);
  cache.text = Promise.resolve(text);
  await next();
});

/** The first issue, as `{field, issue}`; a field absent from the body is reported as "required". */
export function invalidRequest(error: z.ZodError, raw: unknown): ApiError {
  const issue = error.issues[0];
  const path = issue?.path ?? [];
  const field = path.length === 0 ? "body" : path.map(String).join(".");
  const missing = path.length > 0 && valueAt(raw, path) === undefined;
  const text = missing ? "required" : (issue?.message ?? "invalid");
  return new ApiError(
    "INVALID_REQUEST",
    missing ? `Missing required field: ${field}` : `Invalid field ${field}: ${text}`,
    { field, issue: text },
  );
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current = raw;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

export function invalidParameter(parameter: string, value: string, expected: string): ApiError {
  return new ApiError("INVALID_PARAMETER", `Invalid ${parameter}: expected ${expected}`, {
    parameter,
    value,
    expected,
  });
}
