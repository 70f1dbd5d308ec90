/**
 * The OpenAPI 3.1 document, generated from the routes' own declarations (`createRoute` in api/routes/*.ts):
 * the same schemas validate the requests, so the document cannot describe anything the api does not do.
 * It is built without services, so `npm run client:generate` needs nothing running.
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses, jsonContent } from "./operations.ts";
import { registerKeyRoute, registerSchemaRoute } from "./routes/admin.ts";
import { attestationInputRoute, attestationRoute, attestationsByOwnerRoute, claimRoute, provenClaimRoute } from "./routes/attestations.ts";
import { attestorsRoute, registerAttestorRoute } from "./routes/attestors.ts";
import { nullifierKeysRoute, registerNullifierKeysRoute } from "./routes/nullifier-keys.ts";
import { loginRoute, nonceRoute } from "./routes/auth.ts";
import { graphqlGetRoute, graphqlPostRoute } from "./routes/graphql.ts";
import { attestationDataRoute } from "./routes/data.ts";
import { accessRoute, consentDomainRoute, grantRoute, grantsOfRoute, revokeRoute, shareKeysRoute } from "./routes/grants.ts";
import { healthcheckRoute, healthRoute, statusRoute } from "./routes/health.ts";
import { batchProofRoute, onChainRoute, proofRoute, revocationBatchProofRoute, revocationProofRoute } from "./routes/proofs.ts";
import { attestationReceiptRoute, revocationReceiptRoute, verifyReceiptRoute } from "./routes/receipts.ts";
import { schemaRoute, schemasRoute } from "./routes/schemas.ts";
import { revokeAttestationRoute, verifyRoute } from "./routes/validity.ts";
import { ownerKeyRoute, registerOwnerKeyRoute } from "./routes/keys.ts";

export const openApiRoute = createRoute({
  method: "get",
  path: "/api/core/openapi.json",
  summary: "This document",
  responses: {
    200: jsonContent(z.record(z.string(), z.unknown()), "The OpenAPI 3.1 document"),
    ...errorResponses({}),
  },
});

/** Every declared route; a test checks this list against the routes the app serves. */
export const API_ROUTES = [
  healthcheckRoute,
  statusRoute,
  healthRoute,
  schemasRoute,
  schemaRoute,
  registerSchemaRoute,
  registerKeyRoute,
  registerAttestorRoute,
  attestorsRoute,
  registerNullifierKeysRoute,
  nullifierKeysRoute,
  claimRoute,
  provenClaimRoute,
  attestationRoute,
  attestationInputRoute,
  attestationReceiptRoute,
  graphqlPostRoute,
  graphqlGetRoute,
  attestationDataRoute,
  proofRoute,
  revocationProofRoute,
  batchProofRoute,
  revocationBatchProofRoute,
  onChainRoute,
  revokeAttestationRoute,
  revocationReceiptRoute,
  verifyRoute,
  verifyReceiptRoute,
  attestationsByOwnerRoute,
  grantRoute,
  revokeRoute,
  accessRoute,
  grantsOfRoute,
  consentDomainRoute,
  registerOwnerKeyRoute,
  ownerKeyRoute,
  shareKeysRoute,
  nonceRoute,
  loginRoute,
  openApiRoute,
] as const;

export type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

export function openApiDocument(version: string): OpenApiDocument {
  // A bare app only as the holder of a registry: the generator lives behind its getOpenAPI31Document.
  const holder = new OpenAPIHono();
  holder.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", bearerFormat: "JWT" });
  for (const route of API_ROUTES) holder.openAPIRegistry.registerPath(route);
  return holder.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Attestation API",
      version,
      description:
        "Attestations recorded through a Cartesi rollup. Every success body is {success: true, data} (except /healthcheck); every error is {success: false, error: {code, message, details?}}. Events: WebSocket at /ws.",
    },
  });
}
