/**
 * Inputs as the v2 InputBox records them: `InputAdded(appContract, index, input)`, where `input` is the
 * ABI-encoded call `EvmAdvance(chainId, appContract, msgSender, blockNumber, blockTimestamp, prevRandao,
 * index, payload)` the contract builds from the transaction's context. A v2 node hands the dapp that
 * metadata (V2AdvanceMetadata, devnode/model.ts), not the v1 one. The chain follower (devnode/chain.ts)
 * reads these logs through v2InputBox.
 */
import { decodeFunctionData, encodeFunctionData, numberToHex, parseAbi, type Address, type Hex } from "viem";
import type { InputBoxDialect } from "../chain.ts";
import type { V2AdvanceMetadata } from "../model.ts";
import { v2Abi, v2Artifact } from "./contracts.ts";
import type { V2Input, V2Store } from "./record.ts";

/** The v2 InputBox's event: `input` is the EvmAdvance call the contract built. */
export const v2InputAddedEvent = parseAbi(["event InputAdded(address indexed appContract, uint256 indexed index, bytes input)"])[0];

export interface DecodedAdvance {
  metadata: V2AdvanceMetadata;
  payload: Hex;
}

/** Malformed `input` bytes: not an EvmAdvance call (a v2 InputBox never emits one). */
export class NotAnAdvanceError extends Error {
  override readonly name = "NotAnAdvanceError";
}

export function decodeEvmAdvance(input: Hex): DecodedAdvance {
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: v2Abi("Inputs"), data: input });
  } catch (error) {
    throw new NotAnAdvanceError(`not an EvmAdvance input: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
  if (decoded.functionName !== "EvmAdvance") throw new NotAnAdvanceError(`not an EvmAdvance input: ${decoded.functionName}`);
  const [chainId, appContract, msgSender, blockNumber, blockTimestamp, prevRandao, index, payload] = decoded.args as readonly [
    bigint,
    Address,
    Address,
    bigint,
    bigint,
    bigint,
    bigint,
    Hex,
  ];
  return {
    metadata: {
      chain_id: Number(chainId),
      app_contract: appContract,
      msg_sender: msgSender,
      block_number: Number(blockNumber),
      block_timestamp: Number(blockTimestamp),
      prev_randao: numberToHex(prevRandao, { size: 32 }),
      input_index: Number(index),
    },
    payload,
  };
}

/** The EvmAdvance call a v2 InputBox builds and a v2 node feeds the machine: `decodeEvmAdvance`'s inverse. */
export function encodeEvmAdvance({ metadata: m, payload }: DecodedAdvance): Hex {
  const args = [BigInt(m.chain_id), m.app_contract, m.msg_sender, BigInt(m.block_number), BigInt(m.block_timestamp), BigInt(m.prev_randao), BigInt(m.input_index), payload];
  return encodeFunctionData({ abi: v2Abi("Inputs"), functionName: "EvmAdvance", args });
}

/** What else reads the blocks the follower reads (the v3 InputBox address's watch, v3-inputbox.ts). */
export interface BlockWatch {
  /**
   * Blocks [fromBlock, toBlock], whose logs the follower has just read. Returns at once: the watch reads
   * them on its own time, and nothing it does can fail or slow the follower.
   */
  follow(fromBlock: bigint, toBlock: bigint): void;
}

/**
 * The v2 InputBox as the chain follower reads it: the EvmAdvance in each log carries the sender, the
 * block's time and prevrandao; the record keeps an input's transaction and log index, and moves them
 * with the input when a fresh chain takes it again.
 */
export function v2InputBox(store: V2Store, watch?: BlockWatch): InputBoxDialect {
  return {
    // v2's runtime code reads its deployment block as 0 (an immutable left unset): placed at genesis.
    runtimeBytecode: () => v2Artifact("InputBox").deployedBytecode.object,
    async logged(client, { inputBox, dapp, fromBlock, toBlock }) {
      const logs = await client.getLogs({ address: inputBox, fromBlock, toBlock, strict: true, event: v2InputAddedEvent, args: { appContract: dapp } });
      const inputs = logs.map((log) => {
        // The InputBox builds the EvmAdvance itself, so one that does not decode is another contract's log.
        const { metadata, payload } = decodeEvmAdvance(log.args.input);
        const extra: Pick<V2Input, "prevRandao" | "txHash" | "logIndex" | "outputsHash"> = {
          prevRandao: metadata.prev_randao,
          txHash: log.transactionHash,
          logIndex: log.logIndex,
          outputsHash: null,
        };
        return {
          index: Number(log.args.index),
          sender: metadata.msg_sender,
          payload,
          blockNumber: log.blockNumber,
          txHash: log.transactionHash,
          logIndex: log.logIndex,
          timestamp: metadata.block_timestamp,
          extra,
        };
      });
      // Only blocks whose logs were read: a failed read is retried by the follower, and told then.
      watch?.follow(fromBlock, toBlock);
      return inputs;
    },
    seenAgain: (index, log) => {
      store.relocateInput(index, { blockNumber: Number(log.blockNumber), txHash: log.txHash, logIndex: log.logIndex });
    },
  };
}
