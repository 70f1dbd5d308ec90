/**
 * Inputs as the v2 InputBox records them: `InputAdded(appContract, index, input)`, where `input` is the
 * ABI-encoded call `EvmAdvance(chainId, appContract, msgSender, blockNumber, blockTimestamp, prevRandao,
 * index, payload)` the contract builds from the transaction's context. A v2 node hands the dapp that
 * metadata, not the v1 one.
 */
import { decodeFunctionData, numberToHex, type Address, type Hex } from "viem";
import { v2Abi } from "./contracts.ts";

/** The advance metadata a v2 node gives the dapp (rollup HTTP server, `data.metadata`). */
export interface V2AdvanceMetadata {
  chain_id: number;
  app_contract: Address;
  msg_sender: Address;
  block_number: number;
  /** Seconds. */
  block_timestamp: number;
  /** 0x and 64 hex digits. */
  prev_randao: Hex;
  input_index: number;
}

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
