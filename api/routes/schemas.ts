/** Endpoints 4–5: provider schemas, read from the rollup and shaped into the api's view. */
import { SEALINGS } from "../../common/wire.ts";
import { createRoute, z } from "@hono/zod-openapi";
import type { Hex } from "viem";
import type { SchemaSummary } from "../../common/wire.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { ApiError } from "../errors.ts";
import { HEX32_RE } from "../validation.ts";
import { envelope, errorResponses, id32, idParam, jsonContent, operationTraits, router, type OperationTraits } from "../operations.ts";
import { bucketDefinitionSchema } from "./admin.ts";

const listTraits: OperationTraits = { group: "schemas", errors: ["ROLLUP_UNAVAILABLE"] };
const oneTraits: OperationTraits = { group: "schemas", errors: ["SCHEMA_NOT_FOUND", "ROLLUP_UNAVAILABLE"] };
const schemaSummary = z.object({ schema_id: id32, name: z.string(), description: z.string(), provider_type: z.string() });

export const schemasRoute = createRoute({
  method: "get",
  path: "/api/core/schemas",
  summary: "All provider schemas",
  ...operationTraits(listTraits),
  responses: {
    200: jsonContent(envelope(z.array(schemaSummary)), "Every schema"),
    ...errorResponses(listTraits),
  },
});

export const schemaRoute = createRoute({
  method: "get",
  path: "/api/core/schemas/{schemaId}",
  summary: "One provider schema with its bucket definitions",
  ...operationTraits(oneTraits),
  request: { params: z.object({ schemaId: idParam("schema id") }) },
  responses: {
    200: jsonContent(
      envelope(
        schemaSummary.extend({
          bucket_definitions: z.record(z.string(), bucketDefinitionSchema),
          // Extensions: the rest of the registration, and how many attestations fall in each bucket.
          data_keys: z.array(z.string()),
          freshness_half_life: z.number(),
          validity_period: z.number().int().positive().nullable().describe("seconds each attestation stays valid, null: they never expire"),
          require_signed_consent: z.boolean().describe("grants and revokes need the owner's own consent (the api's relay alone is refused)"),
          sealing: z.enum(SEALINGS).describe("whose keys open its attestations' data: admin, owner, or owner+admin"),
          bucket_counts: z
            .record(z.string(), z.record(z.string(), z.number().int().nonnegative()))
            .describe("per bucketed field, attestations per label, as the api has read them from the rollup's notices"),
        }),
      ),
      "The schema (data_keys, freshness_half_life, validity_period and bucket_counts are extensions)",
    ),
    ...errorResponses(oneTraits),
  },
});

export function allSchemas(services: ApiServices): Promise<SchemaSummary[]> {
  return services.reader.queryAll("all_provider_schemas", { include_description: true });
}

export function schemaRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "schemas", clientOf);
  return router()
    .openapi({ ...schemasRoute, middleware: [limited] }, async (c) => {
      const schemas = await allSchemas(services);
      return c.json(
        {
          success: true as const,
          data: schemas.map((s) => ({
            schema_id: s.schema_id,
            name: s.name,
            description: s.description ?? "",
            provider_type: s.provider_type,
          })),
        },
        200,
      );
    })
    .openapi({ ...schemaRoute, middleware: [limited] }, async (c) => {
      const raw = c.req.valid("param").schemaId;
      // Ids are content hashes: anything else names no schema, so it is "not found" without a round trip.
      if (!HEX32_RE.test(raw)) throw new ApiError("SCHEMA_NOT_FOUND", "Provider schema not found", { schema_id: raw });
      const schemaId = raw.toLowerCase() as Hex;
      // The counts come from the notices: one the request must see (a write answered before it, through any
      // replica) is read first, beside the schema's own read.
      const [s] = await Promise.all([services.reader.query("provider_schema", { schema_id: schemaId, include_description: true }), services.catchUpNotices()]);
      return c.json(
        {
          success: true as const,
          data: {
            schema_id: s.schema_id,
            name: s.name,
            description: s.description ?? "",
            provider_type: s.provider_type,
            bucket_definitions: s.bucket_definitions,
            data_keys: s.data_keys,
            freshness_half_life: s.freshness_half_life,
            validity_period: s.validity_period,
            require_signed_consent: s.require_signed_consent,
            sealing: s.sealing,
            bucket_counts: services.catalog.bucketCounts(schemaId),
          },
        },
        200,
      );
    });
}
