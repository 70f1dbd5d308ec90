/**
 * Asks the application contract whether it accepts a notice and its proof, by eth_call: Cartesi's
 * `CartesiDApp.validateNotice(notice, proof)` on Rollups v1, `Application.validateOutput(output, proof)` on
 * v2, with the ABIs of the artifacts @cartesi/rollups ships. The contract is the judge; nothing here decides.
 * Used by `npm run verify` and by the api's verify of a receipt, which must agree.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Abi, Address, Hex, PublicClient } from "viem";
import { messageOf } from "./errors.ts";
import type { OutputValidityProof } from "./wire.ts";

/** v1's validity proof as JSON carries it (hex as strings). */
type ValidityJson = { [K in keyof OutputValidityProof]: OutputValidityProof[K] extends Hex ? string : OutputValidityProof[K] extends Hex[] ? string[] : OutputValidityProof[K] };

/** A notice and its proof as the api serves them (GET /attestation/{id}/proof): v1 or v2. */
export type NoticeWithProof =
  | { applicationAddress: string; notice: string; proof: { validity: ValidityJson; context: string } }
  | { applicationAddress: string; notice: string; output: string; proof: { outputIndex: number; outputHashesSiblings: string[] } };

const require = createRequire(import.meta.url);
const abis = new Map<string, Abi>();

/** An artifact's ABI (its errors included, so a refusal is decoded into the contract's own words). */
function abiOf(file: string): Abi {
  let abi = abis.get(file);
  if (abi === undefined) {
    abi = (JSON.parse(readFileSync(require.resolve(file), "utf8")) as { abi: Abi }).abi;
    abis.set(file, abi);
  }
  return abi;
}

const V1 = "@cartesi/rollups/export/artifacts/contracts";

/** CartesiDApp's ABI with the errors of the history and library its validateNotice reverts from. */
function v1Abi(): Abi {
  const errors = [`${V1}/history/History.sol/History.json`, `${V1}/library/LibOutputValidation.sol/LibOutputValidation.json`].flatMap((file) => abiOf(file).filter((item) => item.type === "error"));
  return [...abiOf(`${V1}/dapp/CartesiDApp.sol/CartesiDApp.json`), ...errors];
}

/** Where the judgement was asked, in words: "CartesiDApp 0x… on http://…". */
export function judgeOf(found: NoticeWithProof, rpcUrl: string): string {
  return `${"output" in found ? "Application" : "CartesiDApp"} ${found.applicationAddress} on ${rpcUrl}`;
}

/** Undefined when the application contract accepts the notice and its proof; else its refusal, in one line. */
export async function noticeRefusal(chain: PublicClient, found: NoticeWithProof): Promise<string | undefined> {
  try {
    if ("output" in found) {
      await chain.readContract({
        address: found.applicationAddress as Address,
        abi: abiOf("@cartesi/rollups-v2/out/Application.sol/Application.json"),
        functionName: "validateOutput",
        args: [found.output as Hex, { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings as Hex[] }],
      });
    } else {
      const { validity, context } = found.proof;
      await chain.readContract({
        address: found.applicationAddress as Address,
        abi: v1Abi(),
        functionName: "validateNotice",
        args: [found.notice as Hex, { validity: { ...(validity as OutputValidityProof), inputIndexWithinEpoch: BigInt(validity.inputIndexWithinEpoch), outputIndexWithinInput: BigInt(validity.outputIndexWithinInput) }, context: context as Hex }],
      });
    }
  } catch (error) {
    return messageOf(error).split("\n")[0] ?? "";
  }
  return undefined;
}
