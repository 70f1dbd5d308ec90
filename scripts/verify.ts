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
 * chain proves: VALID (exit 0), REVOKED (exit 4: the rollup revoked it since), MISMATCH naming each field
 * that differs (exit 1: evidence against the operator), INVALID for a signature that does not hold (exit 1),
 * or not yet provable (exit 3).
 */
import { readFileSync } from "node:fs";
import { createPublicClient, http, type Address, type Hex } from "viem";
import { z } from "zod";
import { AttestationApiError, AttestationClient, isV2Proof, type AttestationProof } from "../client/index.ts";
import { messageOf } from "../common/errors.ts";
import { receiptMismatches, receiptSignatureProblem, type Receipt, type ReceiptSource } from "../common/receipt.ts";
import { CARTESI_DAPP_ABI } from "../devnode/v1/contracts.ts";
import { contractProof } from "../devnode/v1/proofs.ts";
import { v2Abi } from "../devnode/v2/contracts.ts";
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

type Proven = { kind: "proven"; found: AttestationProof; where: string } | { kind: "not-yet"; message: string } | { kind: "refused"; where: string; reason: string };

/** The attestation's notice and proof from the api, judged by the application contract on the chain. */
async function proveOnChain(client: AttestationClient, rpcUrl: string, claimId: string): Promise<Proven> {
  let found: AttestationProof;
  try {
    found = await client.attestationProof(claimId);
  } catch (error) {
    if (error instanceof AttestationApiError && error.code === "PROOF_NOT_READY") {
      return { kind: "not-yet", message: `${error.message} (retry in ${String(error.details?.["retry_after"] ?? "a few")} s)` };
    }
    throw error;
  }
  const chain = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  const where = `${isV2Proof(found) ? "Application" : "CartesiDApp"} ${found.applicationAddress} on ${rpcUrl}`;
  try {
    if (isV2Proof(found)) {
      await chain.readContract({
        address: found.applicationAddress,
        abi: v2Abi("Application"),
        functionName: "validateOutput",
        args: [found.output as Hex, { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings }],
      });
    } else {
      await chain.readContract({
        address: found.applicationAddress,
        abi: CARTESI_DAPP_ABI(),
        functionName: "validateNotice",
        args: [found.notice as Hex, contractProof(found.proof.validity, found.proof.context)],
      });
    }
  } catch (error) {
    return { kind: "refused", where, reason: messageOf(error).split("\n")[0] ?? "" };
  }
  return { kind: "proven", found, where };
}

function noticeText(found: AttestationProof): string {
  return Buffer.from(found.notice.slice(2), "hex").toString("utf8");
}

async function verifyClaim(client: AttestationClient, rpcUrl: string, claimId: string): Promise<number> {
  const proven = await proveOnChain(client, rpcUrl, claimId);
  if (proven.kind === "not-yet") {
    console.log(`not yet provable: ${proven.message}`);
    return 3;
  }
  if (proven.kind === "refused") {
    console.log(`REFUSED by ${proven.where}: ${proven.reason}`);
    return 1;
  }
  const { found, where } = proven;
  console.log(`VALID: ${where} accepts the notice of attestation ${found.claimId}`);
  const position = isV2Proof(found) ? `output ${found.proof.outputIndex}` : `notice ${found.noticeIndex}, claim context ${found.proof.context}`;
  console.log(`  input ${found.inputIndex}, ${position}`);
  console.log(`  notice ${noticeText(found)}`);
  return 0;
}

async function verifyReceipt(client: AttestationClient, rpcUrl: string, file: string): Promise<number> {
  let parsed: z.infer<typeof signedReceiptFile>;
  try {
    const result = signedReceiptFile.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!result.success) throw new Error(result.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; "));
    parsed = result.data;
  } catch (error) {
    throw new UsageError(`--receipt ${file}: not a receipt as the api serves it ({signer, receipt}): ${messageOf(error)}`);
  }
  const receipt = parsed.receipt as Receipt;
  // The operator's signer and domain, as its api publishes them: a receipt signed by anyone else is no receipt of its.
  const published = (await client.status()).receipts;
  if (published.domain === null) {
    console.log("INVALID: this api publishes no receipt domain (it knows no registry)");
    return 1;
  }
  if (parsed.signer.toLowerCase() !== published.signer.toLowerCase()) {
    console.log(`INVALID: the file names ${parsed.signer} as its signer; this operator's receipt signer is ${published.signer}`);
    return 1;
  }
  const problem = await receiptSignatureProblem(receipt, published.signer as Address, { chainId: published.domain.chainId, registry: published.domain.verifyingContract as Address });
  if (problem !== undefined) {
    console.log(`INVALID: the receipt's signature does not hold: ${problem}`);
    return 1;
  }
  const claimId = receipt.message.refUID;
  const proven = await proveOnChain(client, rpcUrl, claimId);
  if (proven.kind === "not-yet") {
    console.log(`SIGNED by ${published.signer}; not yet provable: ${proven.message}`);
    return 3;
  }
  if (proven.kind === "refused") {
    console.log(`REFUSED by ${proven.where}: ${proven.reason}`);
    return 1;
  }
  const notice = JSON.parse(noticeText(proven.found)) as { event: string; data: ReceiptSource };
  const differ = receiptMismatches(receipt, notice.data);
  if (differ.length > 0) {
    console.log(`MISMATCH: the receipt of attestation ${claimId}, signed by ${published.signer}, contradicts the notice ${proven.where} proves:`);
    for (const d of differ) console.log(`  ${d.field}: the receipt says ${JSON.stringify(d.receipt)}, the proven notice ${JSON.stringify(d.proven)}`);
    return 1;
  }
  const standing = await client.attestation(claimId);
  if (standing.revocation !== null) {
    console.log(`REVOKED: the receipt of attestation ${claimId} equals its proven notice, and the rollup revoked it at ${standing.revocation.revokedAt} (npm run verify for the revocation's proof: GET /api/core/attestation/${claimId}/revocation/proof)`);
    return 4;
  }
  console.log(`VALID: the receipt of attestation ${claimId} is signed by ${published.signer} and equals, field for field, the notice ${proven.where} proves`);
  return 0;
}

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--receipt"]);
  const apiUrl = z.url({ protocol: /^https?$/ }).safeParse(process.env.API_URL ?? "http://127.0.0.1:8001");
  if (!apiUrl.success) throw new UsageError(`API_URL: not an http(s) URL: ${process.env.API_URL ?? ""}`);
  const { rpcUrl } = loadEndpoints(process.env);
  const client = new AttestationClient({ baseUrl: apiUrl.data });
  const file = options.get("--receipt");
  if (file !== undefined) {
    if (positional.length > 0) throw new UsageError("--receipt takes the receipt's file alone, no claim id");
    return verifyReceipt(client, rpcUrl, file);
  }
  const [claimId] = positional;
  if (positional.length !== 1 || claimId === undefined) throw new UsageError("expected exactly one claim id");
  if (!/^0x[0-9a-fA-F]{64}$/.test(claimId)) throw new UsageError(`a claim id is 0x and 64 hex digits, not ${claimId}`);
  return verifyClaim(client, rpcUrl, claimId);
}, USAGE);
