/**
 * Extensions (DECISIONS.md sections 13 and 17): `GET /attestation/:claimId/proof`, the attestation's notice
 * and its proof, and `GET /attestation/:claimId/revocation/proof`, its revocation's notice and proof: on a v1 node the v1 proof for `CartesiDApp.validateNotice(notice, proof)`, read through GraphQL
 * (v1 fields only); on a v2 node the notice as a v2 output with `{outputIndex, outputHashesSiblings}` for
 * `Application.validateOutput(output, proof)`, read through JSON-RPC. Either works against a real node of
 * its version; the api adds no trust of its own: the contract is the judge.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Hex } from "viem";
import type { AttestationContracts } from "../onchain.ts";
import { decodeBatchNotice, isBatchNotice, placeInBatch } from "../../common/attestation-batch.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { attestationIdOf } from "../validation.ts";
import { addressOut, claimIdParams, envelope, errorResponses, id32, jsonContent, operationTraits, router, type OperationTraits } from "../operations.ts";

/** A node closes epochs every few seconds; a client polls no faster than this. */
export const PROOF_RETRY_AFTER_SECONDS = 5;

/** The two notices an attestation can have: the one that created it, and the one that revoked it. */
export type AttestationEvent = "attestation:created" | "attestation:revoked";

/** A JSON notice about the attestation, or the batch notice of the input that made or revoked it. */
type Sought = AttestationEvent | { batch: AttestationEvent };

function soughtNotice<T extends { payload: Hex }>(notices: readonly T[], claimId: string, sought: Sought): T | undefined {
  return typeof sought === "string" ? attestationNotice(notices, claimId, sought) : notices.find((n) => isBatchNotice(n.payload));
}

/** The notice of `event` about `claimId`: its JSON names the attestation (`data.claimId`). */
export function attestationNotice<T extends { payload: Hex }>(notices: readonly T[], claimId: string, event: AttestationEvent = "attestation:created"): T | undefined {
  return notices.find((notice) => {
    try {
      const parsed = JSON.parse(hexToUtf8(notice.payload)) as { event?: unknown; data?: { claimId?: unknown } };
      return parsed.event === event && typeof parsed.data?.claimId === "string" && parsed.data.claimId.toLowerCase() === claimId;
    } catch {
      return false;
    }
  });
}

const onChainTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "NOT_FOUND", "ROLLUP_UNAVAILABLE", "RPC_UNAVAILABLE"] };
const proofTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "PROOF_NOT_READY", "ROLLUP_UNAVAILABLE"] };
const batchProofTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "NOT_FOUND", "PROOF_NOT_READY", "ROLLUP_UNAVAILABLE"] };
const revocationProofTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "NOT_REVOKED", "PROOF_NOT_READY", "ROLLUP_UNAVAILABLE"] };
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

/** A notice and its proof, in the shape of the stack's Rollups version. */
export const noticeProofSchema = z.union([
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
    z.object({
      claimId: id32,
      applicationAddress: addressOut,
      inputIndex: z.number().int().openapi({ description: "index of the input that created it" }),
      noticeIndex: z.number().int().openapi({ description: "v2: the notice's index among all the application's outputs (= proof.outputIndex)" }),
      notice: hex.openapi({ description: "0x hex: the notice payload (UTF-8 JSON {event, data})" }),
      output: hex.openapi({ description: "0x hex: the v2 output, the call Notice(notice), as Application.validateOutput takes it" }),
      proof: z.object({
        outputIndex: z.number().int(),
        outputHashesSiblings: z.array(id32).openapi({ description: "the 63 siblings, leaf level first" }),
      }),
    }),
    ]);

export type NoticeProof = z.infer<typeof noticeProofSchema>;

const batchAt = {
  at: z.number().int().openapi({ description: "its place in the batch notice: among the attestations it made (for the registry's checkAttestation), or among its revocations" }),
};
const batchNoticeText = hex.openapi({ description: "0x hex: the input's batch notice (docs/eas.md, \"The batch notice\"), as the registry's record(notice, proof) takes it" });

/** A batch notice and its proof, in the shape of the stack's Rollups version, and where the attestation stands in it. */
export const batchProofSchema = z.union([
  (noticeProofSchema.options[0] as z.ZodObject<z.ZodRawShape>).extend({ notice: batchNoticeText, ...batchAt }),
  (noticeProofSchema.options[1] as z.ZodObject<z.ZodRawShape>).extend({ notice: batchNoticeText, ...batchAt }),
]);

export const proofRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/proof",
  summary:
    "Extension (DECISIONS.md section 13): the attestation's notice and its proof — on Rollups v1 ready for CartesiDApp.validateNotice(notice, proof), on Rollups v2 (ROLLUPS=v2) the output and proof for Application.validateOutput(output, proof) — at applicationAddress; PROOF_NOT_READY (with Retry-After) while its epoch is not claimed",
  ...operationTraits(proofTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(noticeProofSchema), "The notice and its proof"),
    ...errorResponses(proofTraits),
  },
});

export const revocationProofRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/revocation/proof",
  summary:
    "Extension (DECISIONS.md section 17): the notice of the attestation's revocation (attestation:revoked) and its proof, in the same shapes as /proof, for a contract that must learn the revocation (the gate, the IEAS registry); NOT_REVOKED while it stands",
  ...operationTraits(revocationProofTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(noticeProofSchema), "The revocation's notice and its proof"),
    ...errorResponses(revocationProofTraits),
  },
});

export const batchProofRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/batch",
  summary:
    "Extension (issue 44): the batch notice of the input that made the attestation, with its proof, for the registry's record(notice, proof), which records every attestation of the input at once, and its stateless checkAttestation(notice, proof, at); PROOF_NOT_READY while its epoch is not claimed; NOT_FOUND for an attestation no contract can hold (docs/eas.md)",
  ...operationTraits(batchProofTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(batchProofSchema), "The batch notice, its proof, and the attestation's place in it"),
    ...errorResponses(batchProofTraits),
  },
});

export const revocationBatchProofRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/revocation/batch",
  summary: "Extension (issue 44): the batch notice of the input that revoked the attestation, with its proof, for the registry's record(notice, proof); NOT_REVOKED while it stands",
  ...operationTraits(revocationProofTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(batchProofSchema), "The batch notice, its proof, and the revocation's place in it"),
    ...errorResponses(revocationProofTraits),
  },
});

/** The batch notice of input `inputIndex` with its proof, and where `claimId` stands in it as `event` says. */
async function batchProof(services: ApiServices, claimId: Hex, inputIndex: number, event: AttestationEvent) {
  const found = await noticeProof(services, claimId, inputIndex, { batch: event });
  const at = placeInBatch(decodeBatchNotice(found.notice as Hex), claimId, event === "attestation:created" ? "created" : "revoked");
  if (at === undefined) throw new ApiError("NOT_FOUND", `Attestation ${claimId} is in no batch notice: no contract can hold it (one bucketed field, a whole half-life: docs/eas.md)`);
  return { ...found, at };
}

/**
 * The notice of `event` about `claimId` that input `inputIndex` emitted (or the input's batch notice), with
 * its proof; PROOF_NOT_READY while its epoch is not claimed. Read through the node's reader only: works the
 * same against a real node.
 */
export async function noticeProof(services: ApiServices, claimId: Hex, inputIndex: number, event: Sought): Promise<NoticeProof> {
  const unavailable = (error: unknown): never => {
    throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup's reader did not answer", {
      url: services.node.url,
      error: error instanceof Error ? error.message : String(error),
    });
  };
  const notReady = (): ApiError =>
    new ApiError("PROOF_NOT_READY", "The notice's epoch is not claimed on the base layer yet", {
      claim_id: claimId,
      input_index: inputIndex,
      retry_after: PROOF_RETRY_AFTER_SECONDS,
    }).withHeaders({ "Retry-After": String(PROOF_RETRY_AFTER_SECONDS) });
  const missing = (): ApiError =>
    typeof event === "string"
      ? new ApiError("INTERNAL_ERROR", `Input ${inputIndex} holds no ${event} notice for attestation ${claimId}`)
      : new ApiError("NOT_FOUND", `Input ${inputIndex} holds no batch notice: attestation ${claimId} is one no contract can hold (docs/eas.md)`);
  const common = { claimId, applicationAddress: services.config.dappAddress.toLowerCase() as Hex, inputIndex };
  if (services.proofs.rollups === "v2") {
    const notice = soughtNotice(await services.proofs.reader.noticesWithProofs(inputIndex).catch(unavailable), claimId, event);
    if (notice === undefined) throw missing();
    if (notice.siblings === null) throw notReady();
    return { ...common, noticeIndex: notice.index, notice: notice.payload, output: notice.output, proof: { outputIndex: notice.index, outputHashesSiblings: notice.siblings } };
  }
  const notice = soughtNotice(await services.proofs.reader.noticesWithProofs(inputIndex).catch(unavailable), claimId, event);
  if (notice === undefined) throw missing();
  if (notice.proof === null) throw notReady();
  return { ...common, noticeIndex: notice.index, notice: notice.payload, proof: notice.proof };
}

export const onChainRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/onchain",
  summary:
    "Extension: the attestation's state on the base layer, in the registry (EAS's read interface) and the gate the stack deployed beside its application (docs/eas.md): recorded there, valid there, and when its revocation was recorded there. 404 NOT_FOUND when the api knows of no registry (REGISTRY_ADDRESS)",
  ...operationTraits(onChainTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          registry: z.object({
            address: addressOut,
            recorded: z.boolean(),
            valid: z.boolean().describe("IEAS.isAttestationValid: recorded, not revoked, not expired at the chain's latest block"),
            revokedAt: z.number().int().nullable().describe("when the rollup revoked it, as recorded there (null: no revocation recorded)"),
          }),
          gate: z.object({
            address: addressOut,
            recorded: z.boolean().describe("the gate holds it as its owner's latest for its schema"),
            attestorCount: z.number().int().describe("how many TLS attestors proved what the gate holds for its owner and schema"),
            revokedAt: z.number().int().nullable(),
          }),
        }),
      ),
      "On-chain state",
    ),
    ...errorResponses(onChainTraits),
  },
});

export function proofRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  return router()
    .openapi({ ...proofRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      return c.json({ success: true as const, data: await noticeProof(services, claimId, view.input_index, "attestation:created") }, 200);
    })
    .openapi({ ...onChainRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const contracts = services.onchain;
      if (contracts === undefined) throw new ApiError("NOT_FOUND", "No registry is configured: set REGISTRY_ADDRESS and GATE_ADDRESS (npm start deploys them)");
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      return c.json({ success: true as const, data: { claimId, ...(await onChainState(services, contracts, claimId, view.owner, view.schema_id)) } }, 200);
    })
    .openapi({ ...revocationProofRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      if (view.revocation === null) throw new ApiError("NOT_REVOKED", "The attestation has not been revoked", { claim_id: claimId });
      return c.json({ success: true as const, data: await noticeProof(services, claimId, view.revocation.input_index, "attestation:revoked") }, 200);
    })
    .openapi({ ...batchProofRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      return c.json({ success: true as const, data: await batchProof(services, claimId, view.input_index, "attestation:created") }, 200);
    })
    .openapi({ ...revocationBatchProofRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      const view = await services.reader.query("attestation", { attestation_id: claimId });
      if (view.revocation === null) throw new ApiError("NOT_REVOKED", "The attestation has not been revoked", { claim_id: claimId });
      return c.json({ success: true as const, data: await batchProof(services, claimId, view.revocation.input_index, "attestation:revoked") }, 200);
    });
}

/** What the registry and the gate hold of `claimId`, read from the chain. */
async function onChainState(services: ApiServices, contracts: AttestationContracts, claimId: Hex, owner: string, schemaId: string) {
  try {
    const [recorded, valid, revokedAt, held, gateRevokedAt] = await Promise.all([
      contracts.registryHolds(claimId),
      contracts.registryValid(claimId),
      contracts.registryRevokedAt(claimId),
      contracts.gateHeld(owner, schemaId),
      contracts.gateRevokedAt(claimId),
    ]);
    const inGate = held?.claimId === claimId;
    return {
      registry: { address: contracts.addresses.registry.toLowerCase(), recorded, valid, revokedAt },
      gate: { address: contracts.addresses.gate.toLowerCase(), recorded: inGate, attestorCount: inGate ? (held?.attestorCount ?? 0) : 0, revokedAt: gateRevokedAt },
    };
  } catch {
    throw new ApiError("RPC_UNAVAILABLE", "The chain did not answer for the registry and the gate", { url: services.config.rpcUrl });
  }
}
