/** Endpoints 11–13: owners grant and revoke access per schema; anyone checks access. */
import { Hono } from "hono";
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { writeIdOf } from "../../common/ids.ts";
import { requireRole, type AuthVariables } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressParams, HEX32_RE, hex32Schema, jsonBody, limitBody } from "../validation.ts";

const grantSchema = z.object({
  requester: addressSchema,
  schemaId: hex32Schema,
  expiresAt: z.number().int().positive(),
});

export function grantRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "grants", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");
  return new Hono<{ Variables: AuthVariables }>()
    .post("/grant", limited, user, limitBody, jsonBody(grantSchema), async (c) => {
      const { requester, schemaId, expiresAt } = c.get("body");
      if (expiresAt <= services.now()) {
        throw new ApiError("INVALID_REQUEST", "expiresAt must be in the future", {
          field: "expiresAt",
          issue: "must be a Unix time (seconds) later than now",
        });
      }
      // The api's wallet relays as operator, naming the token's address as the owner.
      const submitted = await services.write(
        "grant_access",
        { requester, schema_id: schemaId, expires_at: expiresAt, owner: c.get("auth").sub },
        { schemaId },
      );
      return c.json({
        success: true,
        data: { grantId: writeIdOf("grant_access", submitted.inputIndex, submitted.item), txHash: submitted.txHash },
      });
    })
    .delete("/grant/:grantId", limited, user, async (c) => {
      const grantId = c.req.param("grantId");
      // Grant ids are hashes: anything else names no grant.
      if (!HEX32_RE.test(grantId)) throw new ApiError("NOT_FOUND", `Grant not found: ${grantId}`);
      await services.write("revoke_grant", {
        grant_id: grantId.toLowerCase() as `0x${string}`,
        owner: c.get("auth").sub,
      });
      return c.json({ success: true });
    })
    .get("/access/:owner/:requester", limited, addressParams("owner", "requester"), async (c) => {
      const result = await services.reader.query("check_access", {
        owner: c.req.param("owner").toLowerCase(),
        requester: c.req.param("requester").toLowerCase(),
        at: services.now(),
      });
      return c.json({
        success: true,
        data: {
          hasAccess: result.has_access,
          grants: result.grants.map((g) => ({ grantId: g.grant_id, schemaId: g.schema_id, expiresAt: g.expires_at })),
        },
      });
    });
}
