/**
 * Extension (issue 52, docs/nullifiers.md): the nullifier key set the attestors hold in shares. Admins
 * register one (a `set_nullifier_keys` input, judged by the dapp: consistent commitments, t ≥ 2, each
 * index held by one registered attestor, the group key of any earlier set kept); anyone reads the
 * registered one, public keys only, to check the nullifiers that claims carry.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ADDRESS_RE, normalizeAddress } from "../../common/address.ts";
import { MAX_PUBLISHED_SHARES, MAX_SHARE_INDEX } from "../../common/nullifier.ts";
import { SUITE_ID } from "../../common/oprf-ristretto255.ts";
import { requireRole } from "../auth/middleware.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, id32, envelope, errorResponses, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { hex32Schema, jsonBody } from "../validation.ts";

/** An encoded group element: 32 bytes, like an id (its content is the dapp's to judge). */
const element = (description: string) => hex32Schema.openapi({ description });
const elementOut = (description: string) => id32.openapi({ description });
const shareIndex = z.int().min(1).max(MAX_SHARE_INDEX).openapi({ description: "the share's index: the x of its Shamir share, never 0" });

const registrationSchema = z
  .object({
    keySet: z
      .object({
        version: z.literal(1),
        suite: z.literal(SUITE_ID),
        threshold: z.int().min(2).max(MAX_PUBLISHED_SHARES).openapi({ description: "t: how many attestors' evaluations make a nullifier" }),
        groupKey: element("K = k·G, which every later key set must keep"),
        commitments: z.array(z.object({ index: shareIndex, commitment: element("K_i = k_i·G") })).min(2).max(MAX_PUBLISHED_SHARES),
      })
      .openapi({ description: "the dealer's commitments.json (npm run nullifier-keys -- deal)" }),
    attestors: z
      .array(z.object({ index: shareIndex, address: z.string().regex(ADDRESS_RE, "expected a 0x-prefixed 20-byte hex address").transform(normalizeAddress).openapi({ type: "string" }) }))
      .min(2)
      .max(MAX_PUBLISHED_SHARES)
      .openapi({ description: "which registered attestor holds each share, one share each" }),
  })
  .openapi("NullifierKeyRegistration");

const keySetView = z.object({
  threshold: z.int(),
  groupKey: elementOut("K = k·G"),
  commitments: z.array(z.object({ index: z.int(), commitment: elementOut("K_i = k_i·G"), attestor: addressOut })),
  registeredAt: unixSeconds,
});

const registerTraits: OperationTraits = {
  group: "admin",
  auth: "admin",
  body: true,
  errors: ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
};
const readTraits: OperationTraits = { group: "schemas", errors: ["NOT_FOUND", "ROLLUP_UNAVAILABLE"] };

export const registerNullifierKeysRoute = createRoute({
  method: "post",
  path: "/api/core/nullifier-keys",
  summary: "Extension: register the nullifier key set the attestors hold in shares, or a re-sharing of it (admin)",
  ...operationTraits(registerTraits),
  request: jsonRequest(registrationSchema),
  responses: {
    200: jsonContent(envelope(z.object({ threshold: z.int(), groupKey: elementOut("K = k·G") })), "Registered"),
    ...errorResponses(registerTraits),
  },
});

export const nullifierKeysRoute = createRoute({
  method: "get",
  path: "/api/core/nullifier-keys",
  summary: "Extension: the registered nullifier key set (public keys only); 404 before one is registered",
  ...operationTraits(readTraits),
  responses: {
    200: jsonContent(envelope(keySetView), "The registered key set"),
    ...errorResponses(readTraits),
  },
});

export function nullifierKeyRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const admin = requireRole(services.config.jwtSecret, "admin");
  return router()
    .openapi({ ...registerNullifierKeysRoute, middleware: [rateLimit(services.limiter, "admin", clientOf), admin, jsonBody] }, async (c) => {
      const { keySet, attestors } = c.req.valid("json");
      await services.write("set_nullifier_keys", { keySet, attestors });
      return c.json({ success: true as const, data: { threshold: keySet.threshold, groupKey: keySet.groupKey } }, 200);
    })
    .openapi({ ...nullifierKeysRoute, middleware: [rateLimit(services.limiter, "schemas", clientOf)] }, async (c) => {
      const keys = await services.reader.query("nullifier_keys", {});
      return c.json({ success: true as const, data: { threshold: keys.threshold, groupKey: keys.group_key, commitments: keys.commitments, registeredAt: keys.registered_at } }, 200);
    });
}
