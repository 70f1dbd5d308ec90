/**
 * `npm run verify -- <claimId>`: fetches the attestation's notice and proof from the api
 * (GET /api/core/attestation/:claimId/proof) and asks the chain, by eth_call at the application address:
 * `CartesiDApp.validateNotice(notice, proof)` for a Rollups v1 proof, `Application.validateOutput(output,
 * proof)` for a v2 one (the api's answer says which). Prints the contract's verdict. Exit 0: proven; 1: the
 * contract refused it; 3: its epoch is not claimed yet (try again after Retry-After).
 *
 * `npm run verify -- --receipt <file>` (docs/receipts.md): a receipt as the api served it (`{signer,
 * receipt}`) checked first as signed by the operator's receipt signer for this chain and registry (what
 * `GET /api/core/status` publishes), then, once its epoch is claimed, field by field against the notice the
 * chain proves (common/receipt-verdict.ts, which the api's POST /api/core/verify/receipt shares): VALID (exit
 * 0), REVOKED (exit 4: the rollup revoked it since), MISMATCH naming each field that differs (exit 1:
 * evidence against the operator), INVALID for a signature that does not hold (exit 1), or SIGNED and not yet
 * provable (exit 3). A revocation's receipt is checked against the proven revocation the same way.
 */
import { readFileSync } from "node:fs";
import { createPublicClient, http, type Address, type Hex, type PublicClient } from "viem";
import { z } from "zod";
import { AttestationApiError, AttestationClient, isV2Proof, type AttestationProof } from "../client/index.ts";
import { messageOf } from "../common/errors.ts";
import { judgeOf, noticeRefusal } from "../common/notice-check.ts";
import type { Receipt } from "../common/receipt.ts";
import { judgeReceipt, VERDICT_EXIT, type ProvenNotice, type ReceiptEvidence } from "../common/receipt-verdict.ts";
import type { NoticeEvent } from "../common/wire.ts";
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run verify -- <claimId> | --receipt <file>    (API_URL, default http://127.0.0.1:8001; RPC_URL or CHAIN_PORT for the chain)";

const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
/** What the api serves as a receipt; anything else in the file is refused with what is wrong. */
const signedReceiptFile = z.object({
  signer: address,
  receipt: z.object({
    version: z.literal(2),
    uid: hex32,
    domain: z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: address }),
    primaryType: z.literal("Attest"),
    types: z.object({ Attest: z.array(z.object({ name: z.string(), type: z.string() })) }),
    message: z.object({
      version: z.literal(2),
      schema: hex32,
      recipient: address,
      time: z.number().int().nonnegative(),
      expirationTime: z.number().int().nonnegative(),
      revocable: z.boolean(),
      refUID: hex32,
      data: z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/),
      salt: hex32,
    }),
    signature: z.object({ v: z.number().int(), r: hex32, s: hex32 }),
  }),
});

type Event = NoticeEvent["event"];
type DataOf<E extends Event> = Extract<NoticeEvent, { event: E }>["data"];
/** A notice as the chain judged it; a proven one keeps what the api served, for `verify <claimId>` to print. */
type Proven<E extends Event> = Exclude<ProvenNotice<DataOf<E>>, { kind: "proven" }> | { kind: "proven"; data: DataOf<E>; where: string; found: AttestationProof };

/**
 * A notice and its proof from the api, judged by the application contract on the chain. `absent` is the
 * api's answer that the rollup holds no such notice (`absentCodes`).
 */
async function proveOnChain<E extends Event>(chain: PublicClient, rpcUrl: string, fetch: () => Promise<AttestationProof>, event: E, absentCodes: readonly string[]): Promise<Proven<E>> {
  let found: AttestationProof;
  try {
    found = await fetch();
  } catch (error) {
    if (error instanceof AttestationApiError && error.code === "PROOF_NOT_READY") {
      return { kind: "not-yet", message: `${error.message} (retry in ${String(error.details?.["retry_after"] ?? "a few")} s)` };
    }
    if (error instanceof AttestationApiError && absentCodes.includes(error.code)) return { kind: "absent", message: `the api answers ${error.code}: ${error.message}` };
    throw error;
  }
  const where = judgeOf(found, rpcUrl);
  const refusal = await noticeRefusal(chain, found);
  if (refusal !== undefined) return { kind: "refused", where, reason: refusal };
  const notice = JSON.parse(noticeText(found)) as NoticeEvent;
  if (notice.event !== event) return { kind: "refused", where, reason: `the proven notice is ${notice.event}, not ${event}` };
  return { kind: "proven", data: notice.data as DataOf<E>, where, found };
}

function noticeText(found: AttestationProof): string {
  return Buffer.from(found.notice.slice(2), "hex").toString("utf8");
}

async function verifyClaim(client: AttestationClient, chain: PublicClient, rpcUrl: string, claimId: string): Promise<number> {
  const proven = await proveOnChain(chain, rpcUrl, () => client.attestationProof(claimId), "attestation:created", []);
  if (proven.kind === "not-yet") {
    console.log(`not yet provable: ${proven.message}`);
    return 3;
  }
  // No code is taken as absent here: an unknown claim id is the api's error, printed as such.
  if (proven.kind !== "proven") {
    console.log(proven.kind === "refused" ? `REFUSED by ${proven.where}: ${proven.reason}` : `REFUSED: ${proven.message}`);
    return 1;
  }
  const { found, where } = proven;
  console.log(`VALID: ${where} accepts the notice of attestation ${found.claimId}`);
  const position = isV2Proof(found) ? `output ${found.proof.outputIndex}` : `notice ${found.noticeIndex}, claim context ${found.proof.context}`;
  console.log(`  input ${found.inputIndex}, ${position}`);
  console.log(`  notice ${noticeText(found)}`);
  return 0;
}

async function verifyReceipt(client: AttestationClient, chain: PublicClient, rpcUrl: string, file: string): Promise<number> {
  let parsed: z.infer<typeof signedReceiptFile>;
  try {
    const result = signedReceiptFile.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!result.success) throw new Error(result.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; "));
    parsed = result.data;
  } catch (error) {
    throw new UsageError(`--receipt ${file}: not a receipt as the api serves it ({signer, receipt}): ${messageOf(error)}`);
  }
  // The operator's signer and domain, as its api publishes them: a receipt signed by anyone else is no receipt of its.
  const { signer, domain } = (await client.status()).receipts;
  const evidence: ReceiptEvidence = {
    published: { signer: signer as Address, domain: domain === null ? null : { chainId: domain.chainId, registry: domain.verifyingContract as Address } },
    attestationNotice: (claimId) => proveOnChain(chain, rpcUrl, () => client.attestationProof(claimId), "attestation:created", ["ATTESTATION_NOT_FOUND"]),
    revocationNotice: (claimId) => proveOnChain(chain, rpcUrl, () => client.revocationProof(claimId), "attestation:revoked", ["ATTESTATION_NOT_FOUND", "NOT_REVOKED"]),
    revokedAt: async (claimId) => (await client.attestation(claimId)).revocation?.revokedAt ?? null,
  };
  const judged = await judgeReceipt(parsed.signer as Address, parsed.receipt as Receipt, evidence);
  console.log(`${judged.verdict}: ${judged.reason}`);
  for (const d of judged.mismatches) console.log(`  ${d.field}: the receipt says ${JSON.stringify(d.receipt)}, the proven notice ${JSON.stringify(d.proven)}`);
  return VERDICT_EXIT[judged.verdict];
}

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--receipt"]);
  const apiUrl = z.url({ protocol: /^https?$/ }).safeParse(process.env.API_URL ?? "http://127.0.0.1:8001");
  if (!apiUrl.success) throw new UsageError(`API_URL: not an http(s) URL: ${process.env.API_URL ?? ""}`);
  const { rpcUrl } = loadEndpoints(process.env);
  const client = new AttestationClient({ baseUrl: apiUrl.data });
  const chain = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  const file = options.get("--receipt");
  if (file !== undefined) {
    if (positional.length > 0) throw new UsageError("--receipt takes the receipt's file alone, no claim id");
    return verifyReceipt(client, chain, rpcUrl, file);
  }
  const [claimId] = positional;
  if (positional.length !== 1 || claimId === undefined) throw new UsageError("expected exactly one claim id");
  if (!/^0x[0-9a-fA-F]{64}$/.test(claimId)) throw new UsageError(`a claim id is 0x and 64 hex digits, not ${claimId}`);
  return verifyClaim(client, chain, rpcUrl, claimId);
}, USAGE);
