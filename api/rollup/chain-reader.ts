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

const V2_INPUT_ADDED = parseAbi(["event InputAdded(address indexed appContract, uint256 indexed index, bytes input)"])[0];

/** The transaction that added input `inputIndex` in block `blockNumber`, or undefined when the chain has no such log. */
export async function inputTransaction(
  client: PublicClient,
  inputBox: Address,
  dapp: Address,
  inputIndex: number,
  blockNumber: number,
  rollups: "v1" | "v2" = "v1",
): Promise<Hex | undefined> {
  if (rollups === "v2") {
    const logs = await client.getLogs({
      address: inputBox,
      event: V2_INPUT_ADDED,
      args: { appContract: dapp, index: BigInt(inputIndex) },
      fromBlock: BigInt(blockNumber),
      toBlock: BigInt(blockNumber),
    });
    return logs[0]?.transactionHash ?? undefined;
  }
  const logs = await client.getLogs({
    address: inputBox,
    event: ABI[0],
    args: { dapp, inputIndex: BigInt(inputIndex) },
    fromBlock: BigInt(blockNumber),
    toBlock: BigInt(blockNumber),
  });
  return logs[0]?.transactionHash ?? undefined;
}

/**
 * The History's latest claim for the application, or null when none was made (or no History is found).
 * The History is found through the application's consensus on every read (an owner may migrate it), but
 * its logs are scanned once: each read asks only for the blocks since the previous one, so a status page
 * polled for hours costs the same bounded `eth_getLogs` as on the first minute.
 */
export class LatestClaimReader {
  private history: Address | undefined;
  /** Last block whose claims are counted in `last`, for `history`. */
  private scannedTo = -1n;
  private last: LatestClaim | null = null;
  /** Reads run one at a time (callers at once share one), so the scan never goes back over itself. */
  private inFlight: Promise<LatestClaim | null> | undefined;

  constructor(
    private readonly client: PublicClient,
    private readonly dapp: Address,
  ) {}

  read(): Promise<LatestClaim | null> {
    this.inFlight ??= this.scan().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async scan(): Promise<LatestClaim | null> {
    const consensus = await this.client.readContract({ address: this.dapp, abi: ABI, functionName: "getConsensus" });
    const history = await this.client.readContract({ address: consensus, abi: ABI, functionName: "getHistory" });
    const head = await this.client.getBlockNumber();
    // Another History, or a chain that went back (a restarted local chain): scan from the start again.
    if (history !== this.history || head < this.scannedTo) {
      this.history = history;
      this.scannedTo = -1n;
      this.last = null;
    }
    if (head > this.scannedTo) {
      const logs = await this.client.getLogs({ address: history, event: ABI[1], args: { dapp: this.dapp }, fromBlock: this.scannedTo + 1n, toBlock: head });
      const newest = logs[logs.length - 1];
      const claim = newest?.args.claim;
      if (newest !== undefined && claim !== undefined) {
        this.last = { epochHash: claim.epochHash, firstIndex: Number(claim.firstIndex), lastIndex: Number(claim.lastIndex), blockNumber: Number(newest.blockNumber) };
      }
      this.scannedTo = head;
    }
    return this.last;
  }
}
