/**
 * Extension (DECISIONS.md section 13): `GET /attestation/:claimId/proof`, the attestation's notice and its
 * v1 proof, ready for `CartesiDApp.validateNotice(notice, proof)` on the base layer. Read through the
 * node's GraphQL reader only (v1 fields), so it works against a real Cartesi Rollups v1 node; the api adds
 * no trust of its own: the contract is the judge.
 */
import { Hono } from "hono";
import type { Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ProvedNotice } from "../rollup/graphql.ts";
import type { ApiServices } from "../services.ts";
import { HEX32_RE } from "../validation.ts";

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

export function proofRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  return new Hono().get("/attestation/:claimId/proof", limited, async (c) => {
    const claimId = c.req.param("claimId").toLowerCase();
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
    return c.json({
      success: true,
      data: {
        claimId,
        applicationAddress: services.config.dappAddress.toLowerCase() as Hex,
        inputIndex: view.input_index,
        noticeIndex: notice.index,
        notice: notice.payload,
        proof: notice.proof,
      },
    });
  });
}
