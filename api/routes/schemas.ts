/** Endpoints 4–5: provider schemas, read from the rollup and shaped into the api's view. */
import { Hono } from "hono";
import type { Hex } from "viem";
import type { SchemaSummary } from "../../common/wire.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { ApiError } from "../errors.ts";
import { HEX32_RE } from "../validation.ts";

export function allSchemas(services: ApiServices): Promise<SchemaSummary[]> {
  return services.reader.queryAll("all_provider_schemas", { include_description: true });
}

export function schemaRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "schemas", clientOf);
  return new Hono()
    .get("/schemas", limited, async (c) => {
      const schemas = await allSchemas(services);
      return c.json({
        success: true,
        data: schemas.map((s) => ({
          schema_id: s.schema_id,
          name: s.name,
          description: s.description ?? "",
          provider_type: s.provider_type,
        })),
      });
    })
    .get("/schemas/:schemaId", limited, async (c) => {
      const raw = c.req.param("schemaId");
      // Ids are content hashes: anything else names no schema, so it is "not found" without a round trip.
      if (!HEX32_RE.test(raw)) throw new ApiError("SCHEMA_NOT_FOUND", "Provider schema not found", { schema_id: raw });
      const schemaId = raw.toLowerCase() as Hex;
      const s = await services.reader.query("provider_schema", { schema_id: schemaId, include_description: true });
      return c.json({
        success: true,
        data: {
          schema_id: s.schema_id,
          name: s.name,
          description: s.description ?? "",
          provider_type: s.provider_type,
          bucket_definitions: s.bucket_definitions,
        },
      });
    });
}
