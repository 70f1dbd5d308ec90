/**
 * Request validation beside the routes' declared schemas: the body's size and JSON syntax, and how a zod
 * failure becomes INVALID_REQUEST naming the field or INVALID_PARAMETER (api/operations.ts hooks them in).
 */
import { createMiddleware } from "hono/factory";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { ApiError } from "./errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;

export const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new ApiError("INVALID_REQUEST", `The request body exceeds ${MAX_BODY_BYTES} bytes`, {
      field: "body",
      issue: `larger than ${MAX_BODY_BYTES} bytes`,
    });
  },
});

export const HEX32_RE = /^0x[0-9a-fA-F]{64}$/;
export const hex32Schema = z
  .string()
  .regex(HEX32_RE, "expected a 0x-prefixed 32-byte hex id")
  .transform((v) => v.toLowerCase() as `0x${string}`);

/**
 * The body's syntax, before the route's declared schema checks its content: JSON media type, not empty,
 * well-formed, each failure an INVALID_REQUEST naming what is wrong. A body sent without a Content-Type
 * is read as JSON, as it always was: the request is re-labelled so the declared validator reads it too.
 */
export const jsonSyntax = createMiddleware(async (c, next) => {
  const contentType = c.req.header("content-type");
  if (contentType !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
    throw new ApiError("INVALID_REQUEST", "The body must be JSON", {
      field: "Content-Type",
      issue: `expected application/json, got ${contentType}`,
    });
  }
  const text = await c.req.text();
  if (text.trim() === "") {
    throw new ApiError("INVALID_REQUEST", "The request body is empty", { field: "body", issue: "required" });
  }
  try {
    JSON.parse(text);
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
