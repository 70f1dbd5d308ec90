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

/**
 * CartesiDApp's ABI plus the errors its calls can revert with from the history and library it asks
 * (`InvalidClaimIndex` from History.getClaim, `InputIndexOutOfClaimBounds` from the validation library), so a
 * refused proof decodes to a named error. The devnode's v1 contracts use it too.
 */
export function cartesiDAppAbi(): Abi {
  const errors = [`${V1}/history/History.sol/History.json`, `${V1}/library/LibOutputValidation.sol/LibOutputValidation.json`].flatMap((file) => abiOf(file).filter((item) => item.type === "error"));
  return [...abiOf(`${V1}/dapp/CartesiDApp.sol/CartesiDApp.json`), ...errors];
}

/** A v1 proof as `CartesiDApp.validateNotice(notice, proof)` takes it through viem (uint64 fields as bigint). */
export function v1ContractProof(validity: OutputValidityProof, context: Hex) {
  return {
    validity: { ...validity, inputIndexWithinEpoch: BigInt(validity.inputIndexWithinEpoch), outputIndexWithinInput: BigInt(validity.outputIndexWithinInput) },
    context,
  };
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
      await chain.readContract({
        address: found.applicationAddress as Address,
        abi: cartesiDAppAbi(),
        functionName: "validateNotice",
        // JSON carries the proof's hashes as strings; they are the contract's bytes32 values.
        args: [found.notice as Hex, v1ContractProof(found.proof.validity as OutputValidityProof, found.proof.context as Hex)],
      });
    }
  } catch (error) {
    return messageOf(error).split("\n")[0] ?? "";
  }
  return undefined;
}
