/**
 * The building blocks of every route's declaration (`createRoute`): the success envelope, the error body,
 * error responses grouped by status with their codes named, and the rate-limit/role extensions. A route
 * declares its request and response schemas once; validation and the OpenAPI document both come from it.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Env } from "hono";
import { ADDRESS_RE } from "../common/address.ts";
import { API_ERROR_STATUS, type ApiErrorCode } from "./errors.ts";
import { RATE_LIMIT_GROUPS, WINDOW_SECONDS, type RateLimitGroup } from "./rate-limit.ts";
import { HEX32_RE, invalidParameter, invalidRequest } from "./validation.ts";

export const ErrorBodySchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(Object.keys(API_ERROR_STATUS) as [ApiErrorCode, ...ApiErrorCode[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi("Error");

export const id32 = z.string().regex(HEX32_RE).openapi({ description: "0x-prefixed 32-byte hex id" });
export const addressOut = z.string().regex(ADDRESS_RE).openapi({ description: "0x-prefixed 20-byte hex address" });
export const unixSeconds = z.number().int().openapi({ description: "Unix seconds" });

/** A path parameter that must be an address; its message is the `expected` of INVALID_PARAMETER. */
export const addressParam = z.string().regex(ADDRESS_RE, "a 0x-prefixed 20-byte hex address");

/** An id path parameter: any string is accepted, a non-id is answered as "not found" by the handler. */
export const idParam = (description: string) => z.string().openapi({ description });
/** The path parameters of every `/attestation/{claimId}...` route. */
export const claimIdParams = { params: z.object({ claimId: idParam("claim id (= attestation_id)") }) };

export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}
export const emptyEnvelope = z.object({ success: z.literal(true) });

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export function jsonRequest<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { "application/json": { schema } } } } as const;
}

export interface OperationTraits {
  /** The rate-limit group the route counts against; none for the document itself. */
  group?: RateLimitGroup;
  auth?: "admin" | "user";
  body?: boolean;
  /** The route's own error codes (the auth, body, rate-limit and internal ones are added). */
  errors?: readonly ApiErrorCode[];
}

/** The error responses of an operation, one per status, each description naming its codes. */
export function errorResponses(traits: OperationTraits) {
  const codes: ApiErrorCode[] = [...(traits.errors ?? [])];
  if (traits.auth !== undefined) codes.push("AUTH_MISSING", "AUTH_INVALID", "AUTH_INSUFFICIENT");
  if (traits.body === true) codes.push("INVALID_REQUEST");
  if (traits.group !== undefined) codes.push("RATE_LIMITED");
  codes.push("INTERNAL_ERROR");
  const byStatus = new Map<number, Set<ApiErrorCode>>();
  for (const code of codes) {
    const status = API_ERROR_STATUS[code];
    const set = byStatus.get(status) ?? new Set<ApiErrorCode>();
    set.add(code);
    byStatus.set(status, set);
  }
  const responses: Record<string, ReturnType<typeof jsonContent<typeof ErrorBodySchema>>> = {};
  for (const [status, set] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = jsonContent(ErrorBodySchema, `Error: ${[...set].join(", ")}`);
  }
  return responses;
}

/** The extensions and security of an operation: its rate limit and the role its token needs. */
export function operationTraits(traits: OperationTraits) {
  return {
    ...(traits.group === undefined
      ? {}
      : { "x-rate-limit": { group: traits.group, limit: RATE_LIMIT_GROUPS[traits.group], window: `${WINDOW_SECONDS}s` } }),
    ...(traits.auth === undefined ? {} : { security: [{ bearer: [] }], "x-role": traits.auth }),
  };
}

/**
 * Zod failures of a declared request become the specification's errors: a body's as INVALID_REQUEST
 * naming the field (as `jsonBody` always did), a path or query parameter's as INVALID_PARAMETER.
 */
export function toApiErrorHook(
  result: { target: string } & ({ success: true } | { success: false; error: z.ZodError }),
): undefined {
  if (result.success) return undefined;
  // The validator hands its hook the raw input too (untyped here): the failing value is read from it.
  const input = (result as { data?: unknown }).data;
  if (result.target === "json") throw invalidRequest(result.error, input);
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? result.target);
  const raw = (input as Record<string, unknown> | undefined)?.[name];
  throw invalidParameter(name, typeof raw === "string" ? raw : String(raw), issue?.message ?? "a valid value");
}

/** A router of declared routes whose validation failures are the specification's errors. */
export function router<E extends Env = Env>() {
  return new OpenAPIHono<E>({ defaultHook: toApiErrorHook });
}
