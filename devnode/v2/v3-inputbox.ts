/**
 * The InputBox of the Rollups contracts after 2.2.0 (v3) is where the newest @cartesi/viem (2.0.0-alpha.31)
 * sends `addInput`. Its contracts are not on npm, so a devnode cannot deploy them, and the 2.2.0 Application
 * it runs reads inputs from the 2.2.0 InputBox only. Left empty, that address would take such a transaction
 * and succeed with no input at all. So on a chain it manages, the devnode places there code that refuses
 * every call with an `Error(string)` saying where inputs go instead, and logs every transaction it sees
 * sent there (docs/rollups-v2.md, "Which clients work").
 */
import { concat, createPublicClient, createTestClient, encodeErrorResult, getAddress, http, numberToHex, parseAbi, size, type Address, type Hex, type PublicClient } from "viem";
import type { Log } from "../log.ts";

/** Where @cartesi/viem 2.0.0-alpha.31 sends inputs (its `inputBoxAddress`). */
export const V3_INPUT_BOX_ADDRESS: Address = "0x346B3df038FE9f8380071eC6514D5a83aD143939";

/** The reason every call to the v3 address reverts with. */
export function v3InputBoxRefusal(inputBox: Address): string {
  return (
    `the v3 InputBox (${V3_INPUT_BOX_ADDRESS}) is not deployed on this devnode: it runs the Rollups 2.2.0 contracts, ` +
    `whose InputBox is at ${inputBox} (where @cartesi/viem 2.0.0-alpha.29 sends addInput)`
  );
}

const ERROR_STRING = parseAbi(["error Error(string)"]);

/**
 * Runtime code that reverts every call with `Error(message)`, assembled by hand (no compiler needed for
 * fifteen bytes): `PUSH2 n, PUSH2 15, PUSH1 0, CODECOPY` copies the n bytes of revert data that follow
 * the code into memory at 0, and `PUSH2 n, PUSH1 0, REVERT` reverts with them.
 */
export function revertingCode(message: string): Hex {
  const data = encodeErrorResult({ abi: ERROR_STRING, errorName: "Error", args: [message] });
  const n = numberToHex(size(data), { size: 2 }).slice(2);
  const code = `0x61${n}61000f600039` + `61${n}6000fd`;
  return concat([code as Hex, data]);
}

/** Places the refusing code at the v3 address of a managed chain, unless something is there already. */
export async function placeV3InputBoxStandIn(rpcUrl: string, reader: PublicClient, inputBox: Address, log: Log): Promise<void> {
  const code = await reader.getCode({ address: V3_INPUT_BOX_ADDRESS });
  if (code !== undefined && code !== "0x") return;
  await createTestClient({ mode: "hardhat", transport: http(rpcUrl) }).setCode({ address: V3_INPUT_BOX_ADDRESS, bytecode: revertingCode(v3InputBoxRefusal(inputBox)) });
  log(`the v3 InputBox address ${V3_INPUT_BOX_ADDRESS} refuses every call on this chain (its contracts are not on npm): inputs go to the 2.2.0 InputBox ${inputBox}`);
}

/** Blocks fetched together per JSON-RPC batch, as the follower fetches block headers. */
const BLOCK_BATCH = 256;

/**
 * Watches the blocks the follower reads for transactions sent to the v3 address, and says in the log why
 * they added no input. Clients that estimate gas first (viem does) get the revert before sending anything;
 * a transaction sent with its own gas limit is mined, reverted, and logged here.
 */
export class V3InputBoxWatch {
  private readonly client: PublicClient;
  private readonly logged = new Set<Hex>();

  constructor(
    rpcUrl: string,
    private readonly inputBox: Address,
    private readonly log: Log,
  ) {
    this.client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, batch: { batchSize: BLOCK_BATCH } }) });
  }

  /** Reads blocks [fromBlock, toBlock] with their transactions and logs each one sent to the v3 address once. */
  async scan(fromBlock: bigint, toBlock: bigint): Promise<void> {
    for (let at = fromBlock; at <= toBlock; at += BigInt(BLOCK_BATCH)) {
      const last = at + BigInt(BLOCK_BATCH) - 1n < toBlock ? at + BigInt(BLOCK_BATCH) - 1n : toBlock;
      const numbers = Array.from({ length: Number(last - at) + 1 }, (_, i) => at + BigInt(i));
      const blocks = await Promise.all(numbers.map((blockNumber) => this.client.getBlock({ blockNumber, includeTransactions: true })));
      for (const block of blocks) {
        for (const tx of block.transactions) {
          if (tx.to?.toLowerCase() !== V3_INPUT_BOX_ADDRESS.toLowerCase() || this.logged.has(tx.hash)) continue;
          if (this.logged.size >= 1024) this.logged.clear();
          this.logged.add(tx.hash);
          this.log(`transaction ${tx.hash} from ${getAddress(tx.from)} (block ${block.number}) went to the v3 InputBox address and added no input: ${v3InputBoxRefusal(this.inputBox)}`);
        }
      }
    }
  }
}
