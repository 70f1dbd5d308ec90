/**
 * Extension beyond the specification: `GET /attestation/:claimId/data`, a requester reading an owner's
 * attested data, the one thing grants exist for. It is the endpoint that produces the specification's
 * NO_GRANT_FOUND, GRANT_EXPIRED and DECRYPTION_FAILED; who may read and what is handed over is
 * api/data/read.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Address } from "viem";
import { requireRole, type AuthVariables } from "../auth/middleware.ts";
import { readAttestationData } from "../data/read.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, claimIdParams, envelope, errorResponses, id32, jsonContent, operationTraits, router, type OperationTraits } from "../operations.ts";

const dataTraits: OperationTraits = {
  group: "attestations",
  auth: "user",
  errors: ["ATTESTATION_NOT_FOUND", "NO_GRANT_FOUND", "GRANT_EXPIRED", "DECRYPTION_FAILED", "ROLLUP_UNAVAILABLE"],
};

export const attestationDataRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/data",
  summary:
    "Extension beyond the specification: an attestation's sealed data, for its owner or a requester holding a live grant for its schema (the token's sub is the requester); data is the opened JSON only when the api holds ENCRYPTION_SECRET_KEY",
  ...operationTraits(dataTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          schemaId: id32,
          owner: addressOut,
          encrypted_data: z.string().openapi({ description: "0x hex: a sealed box, ephemeral public key (32) | nacl.box ciphertext, the nonce derived (since issue 37), or before it ephemeral public key (32) | nonce (24) | nacl.box ciphertext; for a schema that seals to the owner, the owner-sealed form (docs/consent.md)" }),
          sealedKey: z
            .string()
            .optional()
            .openapi({ description: "extension, owner-sealed data read by a grantee: the content key its owner sealed to the requester's key; the requester opens the data on its side (npm run open)" }),
          data: z
            .record(z.string(), z.unknown())
            .optional()
            .openapi({ description: "the opened plaintext; present only when ENCRYPTION_SECRET_KEY is configured" }),
        }),
      ),
      "The sealed data",
    ),
    ...errorResponses(dataTraits),
  },
});

export function attestationDataRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");

  // Every unrevoked grant of the owner counts (expired ones included, to name the one that expired).
  return router<{ Variables: AuthVariables }>().openapi({ ...attestationDataRoute, middleware: [limited, user] }, async (c) => {
    const data = await readAttestationData(services, c.req.valid("param").claimId, c.get("auth").sub.toLowerCase() as Address);
    return c.json({ success: true as const, data }, 200);
  });
}
