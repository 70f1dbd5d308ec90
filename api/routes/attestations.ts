/**
 * Endpoints 8–10: claims (the api reads the value, or relays one proven on the user's side: api/claims/)
 * and attestation reads.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { messageOf } from "../../common/errors.ts";
import { inputTransaction } from "../rollup/chain-reader.ts";
import type { Address, Hex } from "viem";
import { bucketDefinitionProblem } from "../../common/buckets.ts";
import { publishedNullifierSchema } from "../../common/nullifier.ts";
import { MAX_QUORUM, PROOF_MODES, proofFieldProblem } from "../../common/tls-claim.ts";
import type { AttestationView } from "../../common/wire.ts";
import type { AuthVariables } from "../auth/middleware.ts";
import { requireRole } from "../auth/middleware.ts";
import { makeClaim } from "../claims/claim.ts";
import { relayProvenClaim } from "../claims/relay.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import { receiptOrNull, receiptOrNullSchema } from "./receipts.ts";
import type { ApiServices } from "../services.ts";
import {
  addressOut,
  addressParam,
  claimIdParams,
  envelope,
  errorResponses,
  id32,
  jsonContent,
  jsonRequest,
  operationTraits,
  router,
  unixSeconds,
  type OperationTraits,
} from "../operations.ts";
import { attestationIdOf, HEX32_RE, hex32Schema, jsonBody } from "../validation.ts";
import { validityFields, validityOf } from "../validity.ts";

const claimSchema = z.object({
  provider: z.string().min(1).openapi({ description: 'the provider type; only "http" is supported' }),
  params: z.object({
    url: z.string().min(1),
    method: z.string().min(1).default("GET"),
    headers: z.record(z.string(), z.string()).default({}),
  }),
  bucketDefinition: z
    .object({
      field: z.string().min(1).openapi({ description: "dot path into the provider's JSON" }),
      boundaries: z.array(z.number()),
      labels: z.array(z.string()),
    })
    .superRefine((def, ctx) => {
      const problem = bucketDefinitionProblem(def);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    }),
  schemaId: hex32Schema.optional(),
  proofMode: z
    .enum(PROOF_MODES)
    .optional()
    .openapi({
      description:
        'extension, for schemas that require proof: "reveal" lets the attestor read the whole response (fast); "zk" shows it only the field and proves the rest in zero knowledge (slower). Default: the api\'s ATTESTOR_MODE',
    }),
});

/** Said by a claim's answer and an attestation's view; the nullifier's input (the account) never is. */
const uniquePerAccountField = z.boolean().describe("extension: whether its schema is unique per account: one provider account backs one owner, checked by the rollup with a nullifier (docs/nullifiers.md); never the account");

const claimTraits: OperationTraits = {
  group: "attestations",
  auth: "user",
  body: true,
  errors: [
    "SCHEMA_NOT_FOUND",
    "ENCRYPTION_KEY_MISSING",
    "OWNER_KEY_MISSING",
    "INVALID_PARAMETER",
    "PROVIDER_UNAVAILABLE",
    "PROVIDER_AUTH_FAILED",
    "PROVIDER_INVALID_RESPONSE",
    "ZKTLS_PROOF_FAILED",
    "ACCOUNT_ALREADY_BOUND",
    "ROLLUP_UNAVAILABLE",
    "ROLLUP_REJECTED",
    "INPUT_TX_FAILED",
    "RPC_UNAVAILABLE",
    "INSUFFICIENT_FUNDS",
    "NONCE_TOO_LOW",
  ],
};

export const claimRoute = createRoute({
  method: "post",
  path: "/api/core/claim",
  summary: "Read a provider value, bucket it and attest it for the token's address",
  ...operationTraits(claimTraits),
  request: jsonRequest(claimSchema),
  responses: {
    200: jsonContent(
      envelope(z.object({ claimId: id32, txHash: id32, bucket: z.string(), uniquePerAccount: uniquePerAccountField, receipt: receiptOrNullSchema("extension: the attestation's receipt, signed once the rollup accepted it; null when none can be (docs/receipts.md)") })),
      "Claimed (receipt is an extension)",
    ),
    ...errorResponses(claimTraits),
  },
});

const signedClaimSchema = z
  .object({
    claim: z.object({
      provider: z.string().min(1).max(64),
      parameters: z.string().min(2).max(16 * 1024),
      owner: z.string().regex(/^0x[0-9a-fA-F]{40}$/).transform((s) => s as Address),
      timestampS: z.int().min(0),
      context: z.string().max(16 * 1024),
      identifier: z.string().regex(HEX32_RE).transform((s) => s as Hex),
      epoch: z.int().min(0),
    }),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "expected a 0x-prefixed 65-byte hex signature").transform((s) => s as Hex),
  })
  .openapi("SignedTlsClaim", { description: "an attestor's claim, as attestor-core returns it, and its signature" });

const provenClaimSchema = z.object({
  schemaId: hex32Schema,
  field: z
    .string()
    .min(1)
    .superRefine((field, ctx) => {
      const problem = proofFieldProblem(field);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    })
    .openapi({ description: "the bucketed field's dot path" }),
  bucket: z.string().min(1).max(64).openapi({ description: "the label the claims prove the value lies in" }),
  encryptedData: z
    .string()
    .max(2 + 2 * 16 * 1024)
    .regex(/^0x(?:[0-9a-fA-F]{2})+$/, "expected non-empty 0x-prefixed hex bytes")
    .transform((s) => s as Hex)
    .openapi({ description: "the data sealed on the user's side for the registered key, or for the owner's own key where the schema seals to the owner (as encrypted_data)" }),
  proofs: z.array(signedClaimSchema).min(1).max(MAX_QUORUM).openapi({ description: "one signed claim per attestor of the schema's quorum" }),
  nullifier: publishedNullifierSchema
    .optional()
    .openapi("PublishedNullifier", { description: "extension, for a schema unique per account (required there, refused elsewhere): the nullifier's published parts, made with the attestors' key shares (docs/nullifiers.md); never the account id" }),
});

const provenClaimTraits: OperationTraits = {
  group: "attestations",
  auth: "user",
  body: true,
  errors: ["SCHEMA_NOT_FOUND", "ACCOUNT_ALREADY_BOUND", "ROLLUP_UNAVAILABLE", "ROLLUP_REJECTED", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
};

export const provenClaimRoute = createRoute({
  method: "post",
  path: "/api/core/claim/proven",
  summary:
    "Extension: record a claim proven on the user's side (npm run prove): the attestors' signed range claims and the sealed data, for the token's address; the api never sees the provider's credentials or the value",
  ...operationTraits(provenClaimTraits),
  request: jsonRequest(provenClaimSchema),
  responses: {
    200: jsonContent(envelope(z.object({ claimId: id32, txHash: id32, bucket: z.string(), uniquePerAccount: uniquePerAccountField, receipt: receiptOrNullSchema("extension: the attestation's receipt (docs/receipts.md)") })), "Recorded (receipt is an extension)"),
    ...errorResponses(provenClaimTraits),
  },
});

const attestationTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE"] };

export const attestationRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}",
  summary: "One attestation",
  ...operationTraits(attestationTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          provider: z.string(),
          bucket: z.string(),
          timestamp: unixSeconds,
          owner: addressOut,
          // Extensions: where the attestation comes from, so a reader can find its schema, input and notice.
          schemaId: id32,
          inputIndex: z.number().int().nonnegative(),
          itemIndex: z.number().int().nonnegative().nullable().describe("its position in a batch input, null when its input was not a batch"),
          attestor: addressOut.nullable().describe("the (first) TLS attestor whose signed claim the rollup checked, null when the bucket was not proven"),
          attestors: z.array(addressOut).describe("every TLS attestor whose signed claim the rollup checked ([] when the bucket was not proven)"),
          uniquePerAccount: uniquePerAccountField,
          ...validityFields,
        }),
      ),
      "The attestation (every field after owner is an extension)",
    ),
    ...errorResponses(attestationTraits),
  },
});

const inputTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE", "RPC_UNAVAILABLE"] };

export const attestationInputRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/input",
  summary: "Extension: the input that created the attestation, its block and the transaction that added it to the InputBox",
  ...operationTraits(inputTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          inputIndex: z.number().int().nonnegative(),
          itemIndex: z.number().int().nonnegative().nullable(),
          blockNumber: z.number().int().nonnegative(),
          txHash: id32,
        }),
      ),
      "The attestation's input",
    ),
    ...errorResponses(inputTraits),
  },
});

const byOwnerTraits: OperationTraits = { group: "attestations", errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"] };

export const attestationsByOwnerRoute = createRoute({
  method: "get",
  path: "/api/core/attestations/{address}",
  summary: "Attestations of an owner, in creation order",
  ...operationTraits(byOwnerTraits),
  request: { params: z.object({ address: addressParam.openapi({ description: "owner address" }) }) },
  responses: {
    200: jsonContent(
      envelope(
        z.array(
          z.object({
            claimId: id32,
            provider: z.string(),
            bucket: z.string(),
            timestamp: unixSeconds,
            status: validityFields.status,
            freshness: validityFields.freshness,
          }),
        ),
      ),
      "The owner's attestations (status and freshness, at the api's clock, are extensions)",
    ),
    ...errorResponses(byOwnerTraits),
  },
});

/** The single bucket label of an attestation (claims through this api always bucket one field). */
export function bucketLabel(view: AttestationView): string {
  return Object.values(view.bucket_values)[0] ?? "";
}

export function attestationRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");

  return router<{ Variables: AuthVariables }>()
    .openapi({ ...claimRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const body = c.req.valid("json");
      const claimed = await makeClaim(services, { ...body, owner: c.get("auth").sub, requestId: c.get("requestId") });
      return c.json({ success: true as const, data: { ...claimed, receipt: await receiptOrNull(services, claimed.claimId) } }, 200);
    })
    .openapi({ ...provenClaimRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const body = c.req.valid("json");
      const claimed = await relayProvenClaim(services, {
        owner: c.get("auth").sub,
        schemaId: body.schemaId,
        field: body.field,
        bucket: body.bucket,
        encryptedData: body.encryptedData,
        proofs: body.proofs,
        nullifier: body.nullifier,
        requestId: c.get("requestId"),
      });
      return c.json({ success: true as const, data: { ...claimed, receipt: await receiptOrNull(services, claimed.claimId) } }, 200);
    })
    .openapi({ ...attestationRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId, at: services.now() });
      const schema = await services.schemaDetail(view.schema_id);
      return c.json(
        {
          success: true as const,
          data: {
            claimId: view.attestation_id,
            provider: schema.provider_type,
            bucket: bucketLabel(view),
            timestamp: view.timestamp,
            owner: view.owner,
            schemaId: view.schema_id,
            inputIndex: view.input_index,
            itemIndex: view.item_index,
            attestor: view.attestor,
            attestors: view.attestors,
            uniquePerAccount: schema.unique_per_account,
            ...validityOf(view),
          },
        },
        200,
      );
    })
    .openapi({ ...attestationInputRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      let blockNumber: number;
      try {
        blockNumber = await services.node.inputBlock(view.input_index);
      } catch (error) {
        throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup's reader does not answer", { url: services.node.url, error: messageOf(error) });
      }
      let txHash: Hex | undefined;
      try {
        txHash = await inputTransaction(services.submitter.publicClient, services.config.inputBoxAddress, services.config.dappAddress, view.input_index, blockNumber, services.config.rollups);
      } catch (error) {
        throw new ApiError("RPC_UNAVAILABLE", `The chain's JSON-RPC does not answer: ${messageOf(error)}`, { url: services.config.rpcUrl });
      }
      if (txHash === undefined) {
        throw new ApiError("RPC_UNAVAILABLE", `The chain has no InputAdded log for the attestation's input in block ${blockNumber}`, { url: services.config.rpcUrl });
      }
      return c.json(
        { success: true as const, data: { claimId: view.attestation_id, inputIndex: view.input_index, itemIndex: view.item_index, blockNumber, txHash } },
        200,
      );
    })
    .openapi({ ...attestationsByOwnerRoute, middleware: [limited] }, async (c) => {
      const owner = c.req.valid("param").address.toLowerCase();
      const items = await services.reader.queryAll("attestations_by_owner", { owner, at: services.now() });
      const data = [];
      for (const item of items) {
        data.push({
          claimId: item.attestation_id,
          provider: await services.providerTypeOf(item.schema_id),
          bucket: bucketLabel(item),
          timestamp: item.timestamp,
          status: item.status,
          freshness: item.freshness,
        });
      }
      return c.json({ success: true as const, data }, 200);
    });
}
