/**
 * The Cartesi Rollups v1 InputBox: its ABI (the part this project uses), its runtime bytecode from the
 * `@cartesi/rollups` artifacts, which the devnode places at the canonical address on a local chain, and
 * its `InputAdded` logs as the chain follower (devnode/chain.ts) reads them.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseAbi, type Hex } from "viem";
import { z } from "zod";
import type { InputBoxDialect } from "../chain.ts";

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

/** The v1 InputBox as the chain follower reads it: its log names the sender; the block gives the time. */
export const v1InputBox: InputBoxDialect = {
  runtimeBytecode: inputBoxRuntimeBytecode,
  async logged(client, { inputBox, dapp, fromBlock, toBlock }) {
    const logs = await client.getLogs({ address: inputBox, fromBlock, toBlock, strict: true, event: inputAddedEvent, args: { dapp } });
    return logs.map((log) => ({
      index: Number(log.args.inputIndex),
      sender: log.args.sender,
      payload: log.args.input,
      blockNumber: log.blockNumber,
      txHash: log.transactionHash,
      logIndex: log.logIndex,
    }));
  },
};
