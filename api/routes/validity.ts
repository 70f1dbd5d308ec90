/**
 * Extensions (DECISIONS.md section 17): an attestation's life cycle and the one call a consumer needs.
 * `POST /attestation/:claimId/revoke` revokes an attestation (its owner withdraws its own; an admin token
 * revokes any) through the rollup's `revoke_attestation`; `GET /verify` asks the rollup's `verify` query
 * at the api's clock (or `at`) and adds the base-layer proof of the attestation it relied on once its
 * epoch is claimed.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Address, Hex } from "viem";
import { ADDRESS_RE } from "../../common/address.ts";
import { isPlainText, PLAIN_TEXT_RULE } from "../../common/plain-text.ts";
import { VERIFY_REASONS, type AttestationView } from "../../common/wire.ts";
import { requireRole, type AuthVariables } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, claimIdParams, envelope, errorResponses, id32, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { attestationIdOf, HEX32_RE, hex32Schema, invalidParameter, jsonBody } from "../validation.ts";
import { validityFields, validityOf } from "../validity.ts";
import { bucketLabel } from "./attestations.ts";
import { noticeProof, noticeProofSchema, type NoticeProof } from "./proofs.ts";
import { receiptOrNull, receiptOrNullSchema } from "./receipts.ts";

const WRITE_ERRORS = ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"] as const;
const revokeTraits: OperationTraits = { group: "attestations", auth: "user", body: true, errors: ["ATTESTATION_NOT_FOUND", "NOT_OWNER", "ALREADY_REVOKED", ...WRITE_ERRORS] };
const verifyTraits: OperationTraits = { group: "attestations", errors: ["INVALID_PARAMETER", "SCHEMA_NOT_FOUND", "ROLLUP_UNAVAILABLE"] };

const revocationSchema = z.object({
  reason: z
    .string()
    .max(256)
    .refine(isPlainText, PLAIN_TEXT_RULE)
    .optional()
    .openapi({ description: "why, in at most 256 characters of plain text (it goes into the revocation's notice)" }),
  supersededBy: hex32Schema.optional().openapi({ description: "the attestation (same owner and schema) that replaces this one" }),
});

export const revokeAttestationRoute = createRoute({
  method: "post",
  path: "/api/core/attestation/{claimId}/revoke",
  summary:
    "Extension: revoke an attestation — a user token withdraws one of its own, an admin token revokes any. It stays readable, marked revoked; the rollup emits an attestation:revoked notice (its proof: /revocation/proof) and the WebSocket an attestation:revoked event",
  ...operationTraits(revokeTraits),
  request: { ...claimIdParams, ...jsonRequest(revocationSchema) },
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          txHash: id32,
          revocation: validityFields.revocation,
          receipt: receiptOrNullSchema("extension: the revocation's receipt, signed once the rollup accepted it; null when none can be (docs/receipts.md)"),
        }),
      ),
      "Revoked (receipt is an extension)",
    ),
    ...errorResponses(revokeTraits),
  },
});

const attestationOut = z.object({
  claimId: id32,
  schemaId: id32,
  owner: addressOut,
  bucket: z.string(),
  bucketValues: z.record(z.string(), z.string()),
  timestamp: unixSeconds,
  inputIndex: z.number().int().nonnegative(),
  attestors: z.array(addressOut),
  ...validityFields,
});

export const verifyRoute = createRoute({
  method: "get",
  path: "/api/core/verify",
  summary:
    "Extension: does `owner` hold an attestation of `schemaId` that is valid now (or at `at`) and meets a minimum bucket (in the schema's label order), a minimum freshness and the attestors named? With the reasons when not, the attestation relied on and its base-layer proof once its epoch is claimed",
  ...operationTraits(verifyTraits),
  request: {
    query: z.object({
      owner: z.string().openapi({ description: "the owner's address" }),
      schemaId: z.string().openapi({ description: "the schema's id" }),
      minBucket: z.string().optional().openapi({ description: "the lowest acceptable label, in the schema's label order" }),
      bucketField: z.string().optional().openapi({ description: "the field minBucket is about; needed only when the schema buckets several" }),
      minFreshness: z.string().optional().openapi({ description: "the lowest acceptable freshness, in (0, 1]" }),
      attestor: z.string().optional().openapi({ description: "TLS attestor address(es) that must have proven it, comma-separated" }),
      at: z.string().optional().openapi({ description: "Unix seconds to verify at (default: the api's clock)" }),
    }),
  },
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          valid: z.boolean(),
          reasons: z.array(z.object({ code: z.enum(VERIFY_REASONS), message: z.string() })).describe("empty when valid; else why the owner's newest attestation of the schema does not qualify"),
          attestation: attestationOut.nullable().describe("the attestation relied on (the newest that qualifies), or the newest there is when none does"),
          freshness: z.number().nullable(),
          at: unixSeconds,
          checked: z.number().int().nonnegative().describe("how many of the owner's attestations of the schema were looked at (at most 1,000)"),
          proofStatus: z.enum(["ready", "pending", "none"]).describe("ready: `proof` holds the attestation's notice and proof; pending: its epoch is not claimed yet; none: no attestation"),
          proof: noticeProofSchema.nullable(),
        }),
      ),
      "The verdict",
    ),
    ...errorResponses(verifyTraits),
  },
});

function attestationOf(view: AttestationView) {
  return {
    claimId: view.attestation_id,
    schemaId: view.schema_id,
    owner: view.owner,
    bucket: bucketLabel(view),
    bucketValues: view.bucket_values,
    timestamp: view.timestamp,
    inputIndex: view.input_index,
    attestors: view.attestors,
    ...validityOf(view),
  };
}

/** The verify query's params from the request's, each refused in its own words. */
function verifyParams(query: Record<string, string | undefined>, now: number): Record<string, unknown> {
  const { owner, schemaId, minBucket, bucketField, minFreshness, attestor, at } = query;
  if (owner === undefined || !ADDRESS_RE.test(owner)) throw invalidParameter("owner", owner ?? "", "a 0x-prefixed 20-byte hex address");
  if (schemaId === undefined || !HEX32_RE.test(schemaId)) throw invalidParameter("schemaId", schemaId ?? "", "a 0x-prefixed 32-byte hex schema id");
  const params: Record<string, unknown> = { owner: owner.toLowerCase(), schema_id: schemaId.toLowerCase() };
  if (bucketField !== undefined && minBucket === undefined) throw invalidParameter("bucketField", bucketField, "only with minBucket");
  if (minBucket !== undefined) {
    if (minBucket === "") throw invalidParameter("minBucket", minBucket, "a label of the schema");
    params.min_bucket = bucketField === undefined ? minBucket : { [bucketField]: minBucket };
  }
  if (minFreshness !== undefined) {
    const value = Number(minFreshness);
    if (minFreshness.trim() === "" || !(value > 0 && value <= 1)) throw invalidParameter("minFreshness", minFreshness, "a number in (0, 1]");
    params.min_freshness = value;
  }
  if (attestor !== undefined) {
    const addresses = attestor.split(",").map((a) => a.trim());
    if (addresses.length > 16 || addresses.some((a) => !ADDRESS_RE.test(a))) throw invalidParameter("attestor", attestor, "1 to 16 comma-separated addresses");
    params.attestors = addresses.map((a) => a.toLowerCase() as Address);
  }
  if (at !== undefined) {
    if (!/^\d{1,12}$/.test(at)) throw invalidParameter("at", at, "Unix seconds");
    params.at = Number(at);
  } else params.at = now;
  return params;
}

export function validityRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");
  return router<{ Variables: AuthVariables }>()
    .openapi({ ...revokeAttestationRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const { reason, supersededBy } = c.req.valid("json");
      const auth = c.get("auth");
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      // The api's wallet may revoke any attestation in the rollup (it is an admin there): who may ask it
      // to is decided here. An owner withdraws its own; an admin token revokes any.
      if (auth.role !== "admin" && view.owner.toLowerCase() !== auth.sub.toLowerCase()) {
        throw new ApiError("NOT_OWNER", "The caller is not the attestation's owner");
      }
      if (view.revocation !== null) {
        throw new ApiError("ALREADY_REVOKED", `The attestation was already revoked at ${view.revocation.revoked_at}`, { claim_id: claimId, revoked_at: view.revocation.revoked_at });
      }
      const submitted = await services.write("revoke_attestation", {
        attestation_id: claimId,
        ...(reason === undefined ? {} : { reason }),
        ...(supersededBy === undefined ? {} : { superseded_by: supersededBy.toLowerCase() as Hex }),
      });
      const after = await services.reader.query("attestation", { attestation_id: claimId, at: services.now() });
      const receipt = await receiptOrNull(services, claimId, "revocation");
      return c.json({ success: true as const, data: { claimId, txHash: submitted.txHash, revocation: validityOf(after).revocation, receipt } }, 200);
    })
    .openapi({ ...verifyRoute, middleware: [limited] }, async (c) => {
      const params = verifyParams(c.req.valid("query"), services.now());
      const result = await services.reader.query("verify", params);
      let proof: NoticeProof | null = null;
      let proofStatus: "ready" | "pending" | "none" = "none";
      if (result.attestation !== null) {
        try {
          proof = await noticeProof(services, result.attestation.attestation_id, result.attestation.input_index, "attestation:created");
          proofStatus = "ready";
        } catch (error) {
          // Not claimed yet is an answer, not a failure: the verdict stands, its proof comes later.
          if (!(error instanceof ApiError && error.code === "PROOF_NOT_READY")) throw error;
          proofStatus = "pending";
        }
      }
      return c.json(
        {
          success: true as const,
          data: {
            valid: result.valid,
            reasons: result.reasons,
            attestation: result.attestation === null ? null : attestationOf(result.attestation),
            freshness: result.freshness,
            at: result.at,
            checked: result.checked,
            proofStatus,
            proof,
          },
        },
        200,
      );
    });
}
