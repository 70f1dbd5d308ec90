/**
 * Extension: the TLS attestors the rollup trusts (docs/provider.md). Admins register one by address (a
 * `set_tls_attestor` input); anyone can list them. A schema that requires proof takes only claims signed
 * by one of them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ADDRESS_RE, normalizeAddress } from "../../common/address.ts";
import { requireRole } from "../auth/middleware.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, envelope, errorResponses, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { jsonBody } from "../validation.ts";

const registrationSchema = z
  .object({
    address: z
      .string()
      .regex(ADDRESS_RE, "expected a 0x-prefixed 20-byte hex address")
      .transform(normalizeAddress)
      .openapi({ type: "string", description: "the address the attestor signs claims with" }),
    name: z.string().min(1).max(200).optional(),
    enabled: z.boolean().default(true).openapi({ description: "false removes the attestor" }),
  })
  .openapi("AttestorRegistration");

const attestorView = z.object({ address: addressOut, name: z.string(), addedAt: unixSeconds });

const registerTraits: OperationTraits = {
  group: "admin",
  auth: "admin",
  body: true,
  errors: ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
};
const listTraits: OperationTraits = { group: "schemas", errors: ["ROLLUP_UNAVAILABLE"] };

export const registerAttestorRoute = createRoute({
  method: "post",
  path: "/api/core/attestors",
  summary: "Extension: register (or with enabled: false, remove) a TLS attestor the rollup trusts (admin)",
  ...operationTraits(registerTraits),
  request: jsonRequest(registrationSchema),
  responses: {
    200: jsonContent(envelope(z.object({ address: addressOut, enabled: z.boolean() })), "Registered or removed"),
    ...errorResponses(registerTraits),
  },
});

export const attestorsRoute = createRoute({
  method: "get",
  path: "/api/core/attestors",
  summary: "Extension: the TLS attestors the rollup trusts, in registration order",
  ...operationTraits(listTraits),
  responses: {
    200: jsonContent(envelope(z.array(attestorView)), "Every registered attestor"),
    ...errorResponses(listTraits),
  },
});

export function attestorRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const admin = requireRole(services.config.jwtSecret, "admin");
  return router()
    .openapi(
      { ...registerAttestorRoute, middleware: [rateLimit(services.limiter, "admin", clientOf), admin, jsonBody] },
      async (c) => {
        const { address, name, enabled } = c.req.valid("json");
        await services.write("set_tls_attestor", { address, enabled, ...(name === undefined ? {} : { name }) });
        return c.json({ success: true as const, data: { address, enabled } }, 200);
      },
    )
    .openapi({ ...attestorsRoute, middleware: [rateLimit(services.limiter, "schemas", clientOf)] }, async (c) => {
      const attestors = await services.reader.query("tls_attestors", {});
      return c.json(
        { success: true as const, data: attestors.map((a) => ({ address: a.address, name: a.name, addedAt: a.added_at })) },
        200,
      );
    });
}
