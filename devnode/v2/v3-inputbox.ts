/**
 * The InputBox of the Rollups contracts after 2.2.0 (v3) is where the newest @cartesi/viem (2.0.0-alpha.31)
 * sends `addInput`. Its contracts are not on npm, so a devnode cannot deploy them, and the 2.2.0 Application
 * it runs reads inputs from the 2.2.0 InputBox only. Left empty, that address would take such a transaction
 * and succeed with no input at all. So on a chain it manages, the devnode places there code that refuses
 * every call with an `Error(string)` saying where inputs go instead, and logs every transaction it sees
 * sent there (docs/rollups-v2.md, "Which clients work").
 */
import { concat, createPublicClient, createTestClient, encodeErrorResult, getAddress, http, numberToHex, parseAbi, size, type Address, type Block, type Hex, type PublicClient } from "viem";
import { messageOf } from "../../common/errors.ts";
import type { Log } from "../log.ts";
import type { BlockWatch } from "./inputs.ts";

/** Where @cartesi/viem 2.0.0-alpha.31 sends inputs (its `inputBoxAddress`). */
export const V3_INPUT_BOX_ADDRESS: Address = "0x346B3df038FE9f8380071eC6514D5a83aD143939";

/** The reason every call to the v3 address reverts with. */
function v3InputBoxRefusal(inputBox: Address): string {
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
function revertingCode(message: string): Hex {
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

/**
 * Watches the blocks the follower reads for transactions sent to the v3 address, and says in the log why
 * they added no input. Clients that estimate gas first (viem does) get the revert before sending anything;
 * a transaction sent with its own gas limit is mined, reverted, and logged here.
 *
 * Off the follower's path: `follow` only notes the blocks, which are read one at a time behind it (a
 * missed line costs nothing an input needs, and one request at a time leaves the chain to the follower).
 * A failed read is logged once and retried with the next blocks told. After a restart the follower goes
 * on from the record's next block, so blocks an earlier run watched are not read again.
 */
export class V3InputBoxWatch implements BlockWatch {
  private readonly client: PublicClient;
  /** Transactions already logged: a rescan of the same blocks (a rewind) does not log them twice. */
  private readonly logged = new Set<Hex>();
  /** Blocks told and not read yet, as one range: what is told while a read runs joins it. */
  private pending: { from: bigint; to: bigint } | undefined;
  private reading = false;
  private failing = false;

  constructor(
    rpcUrl: string,
    private readonly inputBox: Address,
    private readonly log: Log,
  ) {
    this.client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  }

  follow(fromBlock: bigint, toBlock: bigint): void {
    const p = this.pending;
    this.pending = p === undefined ? { from: fromBlock, to: toBlock } : { from: p.from < fromBlock ? p.from : fromBlock, to: p.to > toBlock ? p.to : toBlock };
    if (!this.reading) void this.readPending();
  }

  /** Reads what is pending until nothing is; never rejects, so nothing waits on it. */
  private async readPending(): Promise<void> {
    this.reading = true;
    try {
      while (this.pending !== undefined) {
        const { from, to } = this.pending;
        this.pending = undefined;
        let at = from;
        try {
          for (; at <= to; at++) this.check(await this.client.getBlock({ blockNumber: at, includeTransactions: true }));
          this.failing = false;
        } catch (error) {
          if (!this.failing) this.log(`could not read block ${at} for transactions to the v3 InputBox address (retried with the next blocks): ${messageOf(error)}`);
          this.failing = true;
          this.follow(at, to);
          return;
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private check(block: Block<bigint, true>): void {
    for (const tx of block.transactions) {
      if (tx.to?.toLowerCase() !== V3_INPUT_BOX_ADDRESS.toLowerCase() || this.logged.has(tx.hash)) continue;
      if (this.logged.size >= 1024) this.logged.clear();
      this.logged.add(tx.hash);
      this.log(`transaction ${tx.hash} from ${getAddress(tx.from)} (block ${block.number}) went to the v3 InputBox address and added no input: ${v3InputBoxRefusal(this.inputBox)}`);
    }
  }
}
