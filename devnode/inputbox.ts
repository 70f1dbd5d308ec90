/**
 * The Cartesi Rollups v1 InputBox: its ABI (the part this project uses) and its runtime bytecode from the
 * `@cartesi/rollups` artifacts, which the devnode places at the canonical address on a local chain.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseAbi, type Hex } from "viem";
import { z } from "zod";

export const inputBoxAbi = parseAbi([
  "function addInput(address _dapp, bytes _input) returns (bytes32)",
  "function getNumberOfInputs(address _dapp) view returns (uint256)",
  "function getInputHash(address _dapp, uint256 _index) view returns (bytes32)",
  "event InputAdded(address indexed dapp, uint256 indexed inputIndex, address sender, bytes input)",
]);

export const inputAddedEvent = inputBoxAbi[3];

const ARTIFACT = "@cartesi/rollups/export/artifacts/contracts/inputs/InputBox.sol/InputBox.json";

/** The InputBox runtime bytecode (it has no constructor state, so `hardhat_setCode` is a full deployment). */
export function inputBoxRuntimeBytecode(): Hex {
  const path = createRequire(import.meta.url).resolve(ARTIFACT);
  const artifact = z
    .object({ deployedBytecode: z.string().regex(/^0x[0-9a-fA-F]+$/) })
    .parse(JSON.parse(readFileSync(path, "utf8")));
  return artifact.deployedBytecode as Hex;
}

/** The v2 InputBox's event: `input` is the EvmAdvance call the contract built (devnode/v2/inputs.ts). */
export const v2InputAddedEvent = parseAbi(["event InputAdded(address indexed appContract, uint256 indexed index, bytes input)"])[0];
