/**
 * Extensions (docs/receipts.md): receipts, an attestation's and its revocation's, each an EAS off-chain
 * attestation the operator signs from what the rollup holds; and `POST /verify/receipt`, the verdict of
 * common/receipt-verdict.ts on a receipt (the one `npm run verify -- --receipt` gives), from the notices the
 * node proves and the application contract accepts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Address, Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { judgeOf, noticeRefusal } from "../../common/notice-check.ts";
import { RECEIPT_VERDICTS, judgeReceipt, type ProvenNotice, type ReceiptEvidence } from "../../common/receipt-verdict.ts";
import type { Receipt, ReceiptSource, RevocationSource } from "../../common/receipt.ts";
import type { AttestationView, NoticeEvent } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { SignedReceipt } from "../receipts.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, claimIdParams, envelope, errorResponses, id32, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { attestationIdOf, jsonBody } from "../validation.ts";
import { noticeProof, type AttestationEvent } from "./proofs.ts";

const hexBytes = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/);
/** A receipt as the api serves it (docs/receipts.md): eas-sdk's SignedOffchainAttestation (version 2) and its signer. */
export const signedReceiptSchema = z
  .object({
    signer: addressOut.describe("the operator's receipt signer: the attester eas-sdk's verifyOffchainAttestationSignature is given"),
    receipt: z.object({
      version: z.number().int().describe("eas-sdk's OffchainAttestationVersion: 2"),
      uid: id32.describe("the off-chain uid of its fields, as eas-sdk computes it"),
      domain: z.object({ name: z.string().describe('"EAS Attestation"'), version: z.string(), chainId: z.number().int(), verifyingContract: addressOut }),
      primaryType: z.literal("Attest"),
      types: z.object({ Attest: z.array(z.object({ name: z.string(), type: z.string() })) }),
      message: z.object({
        version: z.number().int(),
        schema: id32.describe("the attestation's schema id; for a revocation's receipt, EAS's uid of REVOCATION_DATA_SCHEMA"),
        recipient: addressOut.describe("the owner"),
        time: unixSeconds.describe("the attestation's time; for a revocation's receipt, the revocation's"),
        expirationTime: z.number().int().nonnegative().describe("0: never"),
        revocable: z.boolean(),
        refUID: id32.describe("the rollup's attestation id (its uid in the registry)"),
        data: hexBytes.describe("the registry's DATA_SCHEMA (provider, field, bucket, attestor, halfLife, attestors); for a revocation's receipt REVOCATION_DATA_SCHEMA (receipt, schemaId, revoker, reason, supersededBy)"),
        salt: id32,
      }),
      signature: z.object({ v: z.number().int(), r: id32, s: id32 }),
    }),
  })
  .openapi("SignedReceipt", { description: "an EAS off-chain attestation (eas-sdk Offchain, version 2) of what the rollup accepted, signed by the operator's receipt key" });

/**
 * A write's receipt, or null. A union rather than `.nullable()`: zod's nullable keeps the named component's
 * id, and the document would then call every SignedReceipt nullable.
 */
export function receiptOrNullSchema(description: string) {
  return z.union([signedReceiptSchema, z.null()]).openapi({ description });
}

const receiptTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE", "RECEIPT_UNAVAILABLE"] };
const revocationReceiptTraits: OperationTraits = { ...receiptTraits, errors: [...(receiptTraits.errors ?? []), "NOT_REVOKED"] };
const verifyReceiptTraits: OperationTraits = { group: "attestations", body: true, errors: ["ROLLUP_UNAVAILABLE", "RPC_UNAVAILABLE"] };

export const attestationReceiptRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/receipt",
  summary: "Extension (docs/receipts.md): the attestation's receipt, an EAS off-chain attestation signed by the operator, usable before its epoch is claimed",
  ...operationTraits(receiptTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(signedReceiptSchema), "The receipt and its signer"),
    ...errorResponses(receiptTraits),
  },
});

export const revocationReceiptRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/revocation/receipt",
  summary: "Extension (docs/receipts.md): the receipt of the attestation's revocation, the same signer's EAS off-chain attestation that the attestation's receipt is revoked",
  ...operationTraits(revocationReceiptTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(envelope(signedReceiptSchema), "The revocation's receipt and its signer"),
    ...errorResponses(revocationReceiptTraits),
  },
});

export const verifyReceiptRoute = createRoute({
  method: "post",
  path: "/api/core/verify/receipt",
  summary:
    "Extension (docs/receipts.md): a receipt checked against the signer and domain this api publishes, then, once its epoch is claimed, field by field against the notices the node proves and the application contract accepts: VALID, REVOKED, SIGNED (not yet provable), MISMATCH (the rollup contradicts it), INVALID or REFUSED",
  ...operationTraits(verifyReceiptTraits),
  request: jsonRequest(signedReceiptSchema),
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          verdict: z.enum(RECEIPT_VERDICTS),
          kind: z.enum(["attestation", "revocation"]).describe("an attestation's receipt, or its revocation's"),
          claimId: id32.describe("the attestation it is about (its refUID)"),
          reason: z.string().describe("the verdict in one sentence"),
          mismatches: z.array(z.object({ field: z.string(), receipt: z.unknown(), proven: z.unknown() })).describe("each field the proven notices contradict (MISMATCH)"),
          revokedAt: unixSeconds.nullable().describe("when the rollup revoked the attestation (REVOKED, and a revocation receipt's VALID)"),
        }),
      ),
      "The verdict (a receipt that does not hold is a verdict, not an error)",
    ),
    ...errorResponses(verifyReceiptTraits),
  },
});

/** The receipt of an attestation the rollup holds (its view and its schema, as the rollup answers them). */
async function receiptOf(services: ApiServices, claimId: Hex): Promise<SignedReceipt> {
  const view = await services.reader.query("attestation", { attestation_id: claimId });
  return services.receipts.sign(view, await services.schemaDetail(view.schema_id));
}

async function revocationReceiptOf(services: ApiServices, claimId: Hex): Promise<SignedReceipt> {
  const view = await services.reader.query("attestation", { attestation_id: claimId });
  return services.receipts.signRevocation(view, await services.schemaDetail(view.schema_id));
}

/** A write's answer carries its receipt when one can be signed; the write stands either way. */
export async function receiptOrNull(services: ApiServices, claimId: Hex, of: "attestation" | "revocation" = "attestation"): Promise<SignedReceipt | null> {
  try {
    return await (of === "attestation" ? receiptOf(services, claimId) : revocationReceiptOf(services, claimId));
  } catch (error) {
    if (error instanceof ApiError && error.code === "RECEIPT_UNAVAILABLE") return null;
    const route = of === "attestation" ? "receipt" : "revocation/receipt";
    services.logger.warn({ claimId, error: messageOf(error) }, `no ${of} receipt for the write's answer (GET /attestation/{id}/${route} will try again)`);
    return null;
  }
}

/** The evidence a verdict needs, from this api's reads of the rollup and its chain's judgement of the proofs. */
function evidenceOf(services: ApiServices): ReceiptEvidence {
  const views = new Map<Hex, Promise<AttestationView | undefined>>();
  const viewOf = (claimId: Hex) => {
    let view = views.get(claimId);
    if (view === undefined) {
      view = services.reader.query("attestation", { attestation_id: claimId }).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === "ATTESTATION_NOT_FOUND") return undefined;
        throw error;
      });
      views.set(claimId, view);
    }
    return view;
  };
  async function proven(claimId: Hex, event: AttestationEvent): Promise<ProvenNotice<NoticeEvent["data"]>> {
    const view = await viewOf(claimId);
    if (view === undefined) return { kind: "absent", message: `the rollup holds no attestation ${claimId}` };
    const inputIndex = event === "attestation:created" ? view.input_index : view.revocation?.input_index;
    if (inputIndex === undefined) return { kind: "absent", message: `the rollup holds no revocation of attestation ${claimId}` };
    let found;
    try {
      found = await noticeProof(services, claimId, inputIndex, event);
    } catch (error) {
      if (error instanceof ApiError && error.code === "PROOF_NOT_READY") return { kind: "not-yet", message: "the notice's epoch is not claimed on the base layer yet" };
      throw error;
    }
    const where = judgeOf(found, services.config.rpcUrl);
    let refusal: string | undefined;
    try {
      refusal = await noticeRefusal(services.submitter.publicClient, found);
    } catch (error) {
      throw new ApiError("RPC_UNAVAILABLE", "The chain did not answer for the application contract", { url: services.config.rpcUrl, error: messageOf(error) });
    }
    if (refusal !== undefined) return { kind: "refused", where, reason: refusal };
    const notice = JSON.parse(hexToUtf8(found.notice)) as NoticeEvent;
    if (notice.event !== event) return { kind: "refused", where, reason: `the proven notice is ${notice.event}, not ${event}` };
    return { kind: "proven", data: notice.data, where };
  }
  const { signer, where } = services.receipts.published();
  return {
    published: { signer, domain: where ?? null },
    // proven() checked the notice's event, so its data is that event's.
    attestationNotice: (claimId) => proven(claimId, "attestation:created") as Promise<ProvenNotice<ReceiptSource>>,
    revocationNotice: (claimId) => proven(claimId, "attestation:revoked") as Promise<ProvenNotice<RevocationSource>>,
    revokedAt: async (claimId) => (await viewOf(claimId))?.revocation?.revoked_at ?? null,
  };
}

export function receiptRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  return router()
    .openapi({ ...attestationReceiptRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      return c.json({ success: true as const, data: await receiptOf(services, claimId) }, 200);
    })
    .openapi({ ...revocationReceiptRoute, middleware: [limited] }, async (c) => {
      const claimId = attestationIdOf(c.req.valid("param").claimId);
      return c.json({ success: true as const, data: await revocationReceiptOf(services, claimId) }, 200);
    })
    .openapi({ ...verifyReceiptRoute, middleware: [limited, jsonBody] }, async (c) => {
      const { signer, receipt } = c.req.valid("json");
      const judged = await judgeReceipt(signer as Address, receipt as Receipt, evidenceOf(services));
      return c.json({ success: true as const, data: judged }, 200);
    });
}
