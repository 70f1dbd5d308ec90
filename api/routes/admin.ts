/** Endpoints 6–7: admin registrations of provider schemas and encryption keys, relayed as rollup inputs. */
import { createRoute, z } from "@hono/zod-openapi";
import { bucketDefinitionProblem } from "../../common/buckets.ts";
import { keyIdOf, type SchemaContent } from "../../common/ids.ts";
import { MAX_QUORUM, PROOF_KINDS, proofSchemaIssues } from "../../common/tls-claim.ts";
import { MAX_VALIDITY_PERIOD } from "../../common/validity.ts";
import { SEALINGS } from "../../common/wire.ts";
import { requireRole } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { envelope, errorResponses, id32, jsonContent, jsonRequest, operationTraits, router, type OperationTraits } from "../operations.ts";
import { jsonBody } from "../validation.ts";

export const bucketDefinitionSchema = z
  .object({
    boundaries: z.array(z.number()),
    labels: z.array(z.string()),
  })
  .superRefine((def, ctx) => {
    const problem = bucketDefinitionProblem(def);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi("BucketDefinition");

export const schemaRegistrationSchema = z.object({
  provider: z.string().min(1),
  flowType: z.string().min(1),
  domain: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.-]+$/, "expected a host name (no scheme, port or path)")
    .transform((d) => d.toLowerCase()),
  bucketDefinitions: z.record(z.string().min(1), bucketDefinitionSchema),
  dataKeys: z.array(z.string().min(1)),
  freshnessHalfLife: z.number().positive(),
  name: z.string().max(200).optional(),
  description: z.string().max(2000).optional(),
  proof: z
    .enum(PROOF_KINDS)
    .optional()
    .openapi({ description: 'extension: "attestor" makes every claim of the schema carry TLS attestors\' signed claims that the value lies in its bucket, which the rollup checks (default "none")' }),
  attestorQuorum: z
    .int()
    .min(1)
    .max(MAX_QUORUM)
    .optional()
    .openapi({ description: `extension, with proof "attestor": how many distinct registered attestors must sign each claim (1 to ${MAX_QUORUM}, default 1)` }),
  accountIdField: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: 'extension, with proof "attestor": the field of the provider\'s answer that names the account (a dot path); the schema is then unique per account: one account backs one owner (docs/nullifiers.md). Needs the nullifier key set registered and an attestorQuorum of at least its threshold' }),
  validityPeriod: z
    .int()
    .min(1)
    .max(MAX_VALIDITY_PERIOD)
    .optional()
    .openapi({ description: "extension: seconds each attestation of the schema stays valid (its expiresAt = its timestamp + this); absent: attestations never expire" }),
  requireSignedConsent: z
    .boolean()
    .optional()
    .openapi({ description: "extension: grants and revokes of the schema's data need the owner's own consent (its EIP-712 signature, or sent from its wallet); the api's relay alone is refused" }),
  sealing: z
    .enum(SEALINGS)
    .optional()
    .openapi({ description: 'extension: whose keys open its attestations\' data — "admin" (the registered encryption key; default), "owner" (the owner\'s own key, POST /api/core/owner-key; the api needs no secret key to serve grantees) or "owner+admin"' }),
}).superRefine((body, ctx) => {
  for (const issue of proofSchemaIssues(body)) ctx.addIssue({ code: "custom", ...issue });
}).openapi("SchemaRegistration");

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEY_EXPECTED = "a base64-encoded 32-byte NaCl public key with algorithm nacl-box";

const encryptionKeySchema = z
  .object({
    publicKey: z.unknown().openapi({ type: "string", description: "base64 of a 32-byte NaCl public key" }),
    algorithm: z.unknown().openapi({ type: "string", enum: ["nacl-box"] }),
  })
  .superRefine((v, ctx) => {
    // Presence is checked here so a missing field is INVALID_REQUEST naming it; a present but bad key
    // is the handler's INVALID_KEY_FORMAT.
    if (v.publicKey === undefined) ctx.addIssue({ code: "custom", path: ["publicKey"], message: "required" });
    else if (v.algorithm === undefined) ctx.addIssue({ code: "custom", path: ["algorithm"], message: "required" });
  })
  // z.unknown() reads as optional; both fields are required (the refinement above says so on the wire).
  .openapi({ required: ["publicKey", "algorithm"] });

const WRITE_ERRORS = ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"] as const;
const schemaTraits: OperationTraits = { group: "admin", auth: "admin", body: true, errors: WRITE_ERRORS };
const keyTraits: OperationTraits = { ...schemaTraits, errors: ["INVALID_KEY_FORMAT", ...WRITE_ERRORS] };

export const registerSchemaRoute = createRoute({
  method: "post",
  path: "/api/core/provider-schema",
  summary: "Register a provider schema (admin)",
  ...operationTraits(schemaTraits),
  request: jsonRequest(schemaRegistrationSchema),
  responses: {
    200: jsonContent(envelope(z.object({ schema_id: id32 })), "Registered"),
    ...errorResponses(schemaTraits),
  },
});

export const registerKeyRoute = createRoute({
  method: "post",
  path: "/api/core/encryption-key",
  summary: "Register an encryption public key (admin)",
  ...operationTraits(keyTraits),
  request: jsonRequest(encryptionKeySchema),
  responses: {
    200: jsonContent(envelope(z.object({ keyId: id32 })), "Registered"),
    ...errorResponses(keyTraits),
  },
});

/** Why a key is not acceptable, in words that never need the key itself. */
function keyFormatProblem(publicKey: unknown, algorithm: unknown): string | undefined {
  if (algorithm !== "nacl-box") return `algorithm ${JSON.stringify(algorithm)}`;
  if (typeof publicKey !== "string") return `publicKey of type ${publicKey === null ? "null" : typeof publicKey}`;
  if (!BASE64_RE.test(publicKey)) return "publicKey that is not base64";
  const length = Buffer.from(publicKey, "base64").length;
  if (length !== 32) return `publicKey of ${length} bytes`;
  return undefined;
}

export function adminRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "admin", clientOf);
  const admin = requireRole(services.config.jwtSecret, "admin");
  const middleware = [limited, admin, jsonBody];
  return router()
    .openapi({ ...registerSchemaRoute, middleware }, async (c) => {
      const body = c.req.valid("json");
      const content: SchemaContent = {
        provider: body.provider,
        flowType: body.flowType,
        domain: body.domain,
        bucketDefinitions: body.bucketDefinitions,
        dataKeys: body.dataKeys,
        freshnessHalfLife: body.freshnessHalfLife,
        // "none" stays out of the content: schemas without proof keep the ids they always had.
        ...(body.proof === "attestor" ? { proof: "attestor" as const } : {}),
        // A quorum of 1 stays out too: single-attestor schemas keep their ids.
        ...(body.proof === "attestor" && body.attestorQuorum !== undefined && body.attestorQuorum > 1 ? { attestorQuorum: body.attestorQuorum } : {}),
        ...(body.validityPeriod === undefined ? {} : { validityPeriod: body.validityPeriod }),
        ...(body.requireSignedConsent === true ? { requireSignedConsent: true } : {}),
        ...(body.sealing === undefined || body.sealing === "admin" ? {} : { sealing: body.sealing }),
        ...(body.accountIdField === undefined ? {} : { accountIdField: body.accountIdField }),
      };
      await services.write("register_schema", {
        ...content,
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.description === undefined ? {} : { description: body.description }),
      });
      const schemaId = services.catalog.learnSchema(content);
      return c.json({ success: true as const, data: { schema_id: schemaId } }, 200);
    })
    .openapi({ ...registerKeyRoute, middleware }, async (c) => {
      const { publicKey, algorithm } = c.req.valid("json");
      const problem = keyFormatProblem(publicKey, algorithm);
      if (problem !== undefined || typeof publicKey !== "string") {
        throw new ApiError("INVALID_KEY_FORMAT", "The key is not a base64-encoded NaCl public key", {
          expected: KEY_EXPECTED,
          received: problem ?? "invalid",
        });
      }
      const submitted = await services.write("register_encryption_key", { publicKey, algorithm: "nacl-box" });
      const keyId = keyIdOf(new Uint8Array(Buffer.from(publicKey, "base64")));
      services.catalog.learnKey(publicKey, submitted.inputIndex);
      return c.json({ success: true as const, data: { keyId } }, 200);
    });
}
