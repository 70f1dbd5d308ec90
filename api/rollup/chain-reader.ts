/**
 * What the explorer shows from the base layer itself, read with the api's JSON-RPC client: the transaction
 * that added an input (the InputBox's `InputAdded` log, looked up in the one block the node names), and the
 * latest claim of the application's History (found through CartesiDApp → consensus → History).
 */
import { parseAbi, type Address, type Hex, type PublicClient } from "viem";

const ABI = parseAbi([
  "event InputAdded(address indexed dapp, uint256 indexed inputIndex, address sender, bytes input)",
  "event NewClaimToHistory(address indexed dapp, (bytes32 epochHash, uint128 firstIndex, uint128 lastIndex) claim)",
  "function getConsensus() view returns (address)",
  "function getHistory() view returns (address)",
]);

export interface LatestClaim {
  epochHash: Hex;
  firstIndex: number;
  lastIndex: number;
  blockNumber: number;
}

/** The transaction that added input `inputIndex` in block `blockNumber`, or undefined when the chain has no such log. */
export async function inputTransaction(client: PublicClient, inputBox: Address, dapp: Address, inputIndex: number, blockNumber: number): Promise<Hex | undefined> {
  const logs = await client.getLogs({
    address: inputBox,
    event: ABI[0],
    args: { dapp, inputIndex: BigInt(inputIndex) },
    fromBlock: BigInt(blockNumber),
    toBlock: BigInt(blockNumber),
  });
  return logs[0]?.transactionHash ?? undefined;
}

/** The History's latest claim for the application, or null when none was made (or no History is found). */
export async function latestClaim(client: PublicClient, dapp: Address): Promise<LatestClaim | null> {
  const consensus = await client.readContract({ address: dapp, abi: ABI, functionName: "getConsensus" });
  const history = await client.readContract({ address: consensus, abi: ABI, functionName: "getHistory" });
  const logs = await client.getLogs({ address: history, event: ABI[1], args: { dapp }, fromBlock: 0n, toBlock: "latest" });
  const last = logs[logs.length - 1];
  if (last === undefined) return null;
  const { claim } = last.args;
  if (claim === undefined) return null;
  return { epochHash: claim.epochHash, firstIndex: Number(claim.firstIndex), lastIndex: Number(claim.lastIndex), blockNumber: Number(last.blockNumber) };
}
