/**
 * Extension (DECISIONS.md section 13): `GET /attestation/:claimId/proof`, the attestation's notice and its
 * v1 proof, ready for `CartesiDApp.validateNotice(notice, proof)` on the base layer. Read through the
 * node's GraphQL reader only (v1 fields), so it works against a real Cartesi Rollups v1 node; the api adds
 * no trust of its own: the contract is the judge.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ProvedNotice } from "../rollup/graphql.ts";
import type { ApiServices } from "../services.ts";
import { HEX32_RE } from "../validation.ts";
import { addressOut, claimIdParams, envelope, errorResponses, id32, jsonContent, operationTraits, router, type OperationTraits } from "../operations.ts";

/** A node closes epochs every few seconds; a client polls no faster than this. */
export const PROOF_RETRY_AFTER_SECONDS = 5;

/** The notice that announced `claimId`: its JSON names the attestation (`data.claimId`). */
export function attestationNotice(notices: readonly ProvedNotice[], claimId: string): ProvedNotice | undefined {
  return notices.find((notice) => {
    try {
      const parsed = JSON.parse(hexToUtf8(notice.payload)) as { event?: unknown; data?: { claimId?: unknown } };
      return parsed.event === "attestation:created" && typeof parsed.data?.claimId === "string" && parsed.data.claimId.toLowerCase() === claimId;
    } catch {
      return false;
    }
  });
}

const proofTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "PROOF_NOT_READY", "ROLLUP_UNAVAILABLE"] };
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

export const proofRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/proof",
  summary:
    "Extension (DECISIONS.md section 13): the attestation's notice and its v1 proof, ready for CartesiDApp.validateNotice(notice, proof) at applicationAddress; PROOF_NOT_READY (with Retry-After) while its epoch is not claimed",
  ...operationTraits(proofTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          applicationAddress: addressOut,
          inputIndex: z.number().int().openapi({ description: "index of the input that created it" }),
          noticeIndex: z.number().int().openapi({ description: "index of its notice within the input" }),
          notice: hex.openapi({ description: "0x hex: the notice payload (UTF-8 JSON {event, data})" }),
          proof: z.object({
            context: hex.openapi({ description: "0x hex: abi.encode(uint256 claim index in the History)" }),
            validity: z.object({
              inputIndexWithinEpoch: z.number().int(),
              outputIndexWithinInput: z.number().int(),
              outputHashesRootHash: id32,
              vouchersEpochRootHash: id32,
              noticesEpochRootHash: id32,
              machineStateHash: id32,
              outputHashInOutputHashesSiblings: z.array(id32),
              outputHashesInEpochSiblings: z.array(id32),
            }),
          }),
        }),
      ),
      "The notice and its proof",
    ),
    ...errorResponses(proofTraits),
  },
});

export function proofRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  return router().openapi({ ...proofRoute, middleware: [limited] }, async (c) => {
    const claimId = c.req.valid("param").claimId.toLowerCase();
    if (!HEX32_RE.test(claimId)) throw new ApiError("ATTESTATION_NOT_FOUND", "Attestation not found", { claim_id: claimId });
    const view = await services.reader.query("attestation", { attestation_id: claimId });
    const notices = await services.graphql.noticesWithProofs(view.input_index).catch((error: unknown) => {
      throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup's reader did not answer", {
        url: services.graphql.url,
        error: error instanceof Error ? error.message : String(error),
      });
    });
    const notice = attestationNotice(notices, claimId);
    if (notice === undefined) {
      throw new ApiError("INTERNAL_ERROR", `Input ${view.input_index} holds no notice for attestation ${claimId}`);
    }
    if (notice.proof === null) {
      throw new ApiError("PROOF_NOT_READY", "The attestation's epoch is not claimed on the base layer yet", {
        claim_id: claimId,
        input_index: view.input_index,
        retry_after: PROOF_RETRY_AFTER_SECONDS,
      }).withHeaders({ "Retry-After": String(PROOF_RETRY_AFTER_SECONDS) });
    }
    return c.json(
      {
        success: true as const,
        data: {
          claimId,
          applicationAddress: services.config.dappAddress.toLowerCase() as Hex,
          inputIndex: view.input_index,
          noticeIndex: notice.index,
          notice: notice.payload,
          proof: notice.proof,
        },
      },
      200,
    );
  });
}
