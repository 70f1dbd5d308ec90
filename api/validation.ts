/**
 * Request validation as route middleware: a JSON body checked against a zod schema (failures become
 * INVALID_REQUEST naming the field), and path parameters checked by shape (INVALID_PARAMETER).
 */
import { createMiddleware } from "hono/factory";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { isAddress } from "../common/address.ts";
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

/** Parses and validates the JSON body; the handler reads it with `c.get("body")`. */
export function jsonBody<S extends z.ZodType>(schema: S) {
  return createMiddleware<{ Variables: { body: z.output<S> } }>(async (c, next) => {
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
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new ApiError("INVALID_REQUEST", "The request body is not valid JSON", {
        field: "body",
        issue: `malformed JSON: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    const result = schema.safeParse(raw);
    if (!result.success) throw invalidRequest(result.error, raw);
    c.set("body", result.data);
    await next();
  });
}

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

/** Path parameters that must be addresses; they reach handlers lower-cased. */
export function addressParams(...names: string[]) {
  return createMiddleware(async (c, next) => {
    for (const name of names) {
      const value = c.req.param(name) ?? "";
      if (!isAddress(value)) throw invalidParameter(name, value, "a 0x-prefixed 20-byte hex address");
    }
    await next();
  });
}

