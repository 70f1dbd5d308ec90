/**
 * `npm run verify -- <claimId>`: fetches the attestation's notice and proof from the api
 * (GET /api/core/attestation/:claimId/proof) and asks the chain, by eth_call at the application address:
 * `CartesiDApp.validateNotice(notice, proof)` for a Rollups v1 proof, `Application.validateOutput(output,
 * proof)` for a v2 one (the api's answer says which). Prints the contract's verdict. Exit 0: proven; 1: the
 * contract refused it; 3: its epoch is not claimed yet (try again after Retry-After).
 */
import { createPublicClient, http, type Hex } from "viem";
import { z } from "zod";
import { AttestationApiError, AttestationClient, isV2Proof, type AttestationProof } from "../client/index.ts";
import { messageOf } from "../common/errors.ts";
import { CARTESI_DAPP_ABI } from "../devnode/v1/contracts.ts";
import { contractProof } from "../devnode/v1/proofs.ts";
import { v2Abi } from "../devnode/v2/contracts.ts";
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run verify -- <claimId>    (API_URL, default http://127.0.0.1:8001; RPC_URL or CHAIN_PORT for the chain)";

runScript(async () => {
  const { positional } = parseArgs(process.argv.slice(2), []);
  const [claimId] = positional;
  if (positional.length !== 1 || claimId === undefined) throw new UsageError("expected exactly one claim id");
  if (!/^0x[0-9a-fA-F]{64}$/.test(claimId)) throw new UsageError(`a claim id is 0x and 64 hex digits, not ${claimId}`);
  const apiUrl = z.url({ protocol: /^https?$/ }).safeParse(process.env.API_URL ?? "http://127.0.0.1:8001");
  if (!apiUrl.success) throw new UsageError(`API_URL: not an http(s) URL: ${process.env.API_URL ?? ""}`);
  const { rpcUrl } = loadEndpoints(process.env);

  let found: AttestationProof;
  try {
    found = await new AttestationClient({ baseUrl: apiUrl.data }).attestationProof(claimId);
  } catch (error) {
    if (error instanceof AttestationApiError && error.code === "PROOF_NOT_READY") {
      console.log(`not yet provable: ${error.message} (retry in ${String(error.details?.["retry_after"] ?? "a few")} s)`);
      return 3;
    }
    throw error;
  }
  const chain = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  const v2 = isV2Proof(found);
  const where = `${v2 ? "Application" : "CartesiDApp"} ${found.applicationAddress} on ${rpcUrl}`;
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
    console.log(`REFUSED by ${where}: ${messageOf(error).split("\n")[0] ?? ""}`);
    return 1;
  }
  console.log(`VALID: ${where} accepts the notice of attestation ${found.claimId}`);
  const position = isV2Proof(found) ? `output ${found.proof.outputIndex}` : `notice ${found.noticeIndex}, claim context ${found.proof.context}`;
  console.log(`  input ${found.inputIndex}, ${position}`);
  console.log(`  notice ${Buffer.from(found.notice.slice(2), "hex").toString("utf8")}`);
  return 0;
}, USAGE);
