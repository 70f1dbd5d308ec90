/**
 * The devnode's view of the chain: it makes sure the InputBox is there, brings a fresh local chain back
 * in line with the record (re-submitting the recorded inputs from their original senders), and follows
 * `InputAdded` events for the dapp, recording each new input and queueing it for the dapp in order.
 * What differs between the Rollups versions' InputBoxes (their code, their logs, what a v2 record keeps
 * of an input) the version passes in as an InputBoxDialect (v1/inputs.ts, v2/inputs.ts).
 */
import {
  BaseError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  parseAbi,
  parseEther,
  ResponseBodyTooLargeError,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
} from "viem";
import { messageOf } from "../common/errors.ts";
import type { DevnodeConfig } from "./config.ts";
import { subscribeNewHeads, type HeadSubscription } from "./heads.ts";
import type { Log } from "./log.ts";
import type { RollupModel } from "./model.ts";
import type { DevnodeStore, InputRecord } from "./store.ts";

/** Larger block ranges are split: public RPC endpoints cap eth_getLogs ranges. */
const MAX_LOG_RANGE = 10_000n;
/**
 * Block headers fetched together per JSON-RPC batch. An automining chain gives every input its own
 * block, and one eth_getBlockByNumber round trip per input capped the chain path near 100 inputs/s
 * (npm run bench); a batch per 256 blocks removes that cap.
 */
const BLOCK_BATCH = 256;

function isTooLarge(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof ResponseBodyTooLargeError) !== null;
}

/** The chain and the record disagree in a way the devnode must not paper over. */
export class ChainMismatchError extends Error {
  override readonly name = "ChainMismatchError";
}

type ChainSettings = Pick<
  DevnodeConfig,
  "rpcUrl" | "chainMode" | "inputBoxAddress" | "dappAddress" | "inputBoxBlock" | "pollIntervalMs" | "wsRpcUrl" | "rollups"
>;

/**
 * The two InputBox calls the follower makes. v1 and v2 declare them alike (`addInput(address, bytes)`,
 * `getNumberOfInputs(address)`), so they encode and decode the same on either version's InputBox.
 */
const inputBoxCalls = parseAbi([
  "function addInput(address app, bytes payload) returns (bytes32)",
  "function getNumberOfInputs(address app) view returns (uint256)",
]);

/** An input as the InputBox's log tells it, before the record's checks. */
export interface LoggedInput {
  index: number;
  sender: Address;
  payload: Hex;
  blockNumber: bigint;
  txHash: Hex;
  /** The InputAdded log's index in its block. */
  logIndex: number;
  /** The block's timestamp (seconds) when the log carries it (v2's EvmAdvance); otherwise it is read from the block (v1). */
  timestamp?: number;
  /** The version's own fields of the input's record (v2: prevrandao, transaction, log index, outputs hash), kept beside InputRecord's. */
  extra?: object;
}

/** Where a version's InputBox differs: passed in by the version, so the follower imports none. */
export interface InputBoxDialect {
  /** The InputBox's runtime code, placed at its address on a managed chain that lacks it. */
  runtimeBytecode(): Hex;
  /** The dapp's inputs the InputBox at `inputBox` logged in blocks [fromBlock, toBlock], in order. */
  logged(client: PublicClient, range: { inputBox: Address; dapp: Address; fromBlock: bigint; toBlock: bigint }): Promise<LoggedInput[]>;
  /**
   * A recorded input read again (a rescan): where the chain holds it now, which a fresh chain changes when
   * it takes the input again. Absent when the record keeps nothing of where an input sits (v1); a v2 epoch
   * is a range of blocks, and a v2 input names its transaction and log.
   */
  seenAgain?(index: number, log: LoggedInput): void;
}

/** How far and how lately the follower has read the chain: what tells a current reader from one left behind. */
export interface ChainReads {
  /** The last block whose InputBox logs are read, or null before the first scan. */
  chainBlock: number | null;
  /** Unix ms of the last sync or poll the chain answered in full, or null before one. */
  chainReadAt: number | null;
}

/** While new blocks are pushed, the poll only catches what a lost notification would miss. */
const SUBSCRIBED_POLL_MS = 1_000;

/** The chain at `rpcUrl` as viem needs it to sign and send: its id asked once, the rest generic. */
export async function chainAt(rpcUrl: string): Promise<Chain> {
  const id = await createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) }).getChainId();
  return defineChain({ id, name: `chain-${id}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
}

/** Waits until the RPC at `rpcUrl` answers (the chain may still be starting), up to `timeoutMs`; its chain id. */
export async function waitForChain(rpcUrl: string, timeoutMs: number): Promise<number> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await client.getChainId();
    } catch (error) {
      if (Date.now() > deadline) throw new ChainMismatchError(`no chain answers at ${rpcUrl}: ${messageOf(error)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export class InputFollower {
  private readonly client: PublicClient;
  private readonly headers: PublicClient;
  private next: bigint;
  /** Number of inputs in the record: the index the next new input must carry. */
  private recorded: number;
  private readonly blockTimes = new Map<bigint, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A poll is running; `again`: a new block was announced meanwhile, so poll once more right after. */
  private polling = false;
  private again = false;
  private heads: HeadSubscription | undefined;
  private rpcDown = false;
  private readAt: number | null = null;
  /** Some block was scanned (now or by an earlier run): only then does `next - 1` name a block read. */
  private scanned: boolean;
  /** Blocks per eth_getLogs: MAX_LOG_RANGE, halved while answers are too large. */
  private logRange = MAX_LOG_RANGE;
  /** Runs after every sync with the record (the v1 application and its claims are put back then). */
  afterSync: (() => Promise<void>) | undefined;

  constructor(
    private readonly settings: ChainSettings,
    private readonly store: DevnodeStore,
    private readonly model: RollupModel,
    private readonly inputBox: InputBoxDialect,
    private readonly log: Log,
    private readonly onFatal: (error: Error) => void,
  ) {
    this.client = createPublicClient({ transport: http(settings.rpcUrl, { retryCount: 0 }) });
    // Only for block headers: requests issued together travel as one JSON-RPC batch. (A batching
    // transport delays every request by a timer tick, so the poll keeps its own client.)
    this.headers = createPublicClient({ transport: http(settings.rpcUrl, { retryCount: 0, batch: { batchSize: BLOCK_BATCH } }) });
    this.next = store.nextBlock() ?? BigInt(settings.inputBoxBlock);
    this.recorded = store.inputCount();
    this.scanned = store.nextBlock() !== undefined;
  }

  reads(): ChainReads {
    return { chainBlock: this.scanned && this.next > 0n ? Number(this.next - 1n) : null, chainReadAt: this.readAt };
  }

  /** Waits until the RPC answers (the chain may still be starting), up to `timeoutMs`. */
  waitForChain(timeoutMs: number): Promise<number> {
    return waitForChain(this.settings.rpcUrl, timeoutMs);
  }

  /**
   * Makes the chain hold what the record holds: the InputBox at its address and, on a managed chain that
   * restarted empty, the recorded inputs re-submitted in order (they are not fed to the dapp again).
   */
  async sync(): Promise<void> {
    const { inputBoxAddress, dappAddress, chainMode } = this.settings;
    const code = await this.client.getCode({ address: inputBoxAddress });
    if (code === undefined || code === "0x") {
      if (chainMode === "external") {
        throw new ChainMismatchError(
          `no InputBox contract at ${inputBoxAddress} on ${this.settings.rpcUrl}: deploy the Cartesi Rollups ${this.settings.rollups} ` +
            `InputBox there or set INPUTBOX_ADDRESS`,
        );
      }
      await this.testClient().setCode({ address: inputBoxAddress, bytecode: this.inputBox.runtimeBytecode() });
      this.log(`${this.settings.rollups} InputBox placed at ${inputBoxAddress}`);
    }
    const onChain = Number(
      await this.client.readContract({
        address: inputBoxAddress,
        abi: inputBoxCalls,
        functionName: "getNumberOfInputs",
        args: [dappAddress],
      }),
    );
    const latest = await this.client.getBlockNumber();
    if (onChain < this.recorded) {
      if (chainMode === "external") {
        throw new ChainMismatchError(
          `the chain holds ${onChain} inputs for ${dappAddress} but the record ${this.recorded}: ` +
            `this DATA_DIR belongs to another chain (start with --reset or another DATA_DIR)`,
        );
      }
      await this.resubmit(this.store.inputsFrom(onChain));
      // Rescan from the start: re-submitted inputs are checked against the record, not fed again.
      this.rewind();
    } else if (this.next > latest + 1n) {
      // The chain is behind our scan position (a different chain with as many inputs): check it all again.
      this.rewind();
    }
    await this.afterSync?.();
    this.readAt = Date.now();
  }

  start(): void {
    if (this.settings.wsRpcUrl !== undefined) this.heads = subscribeNewHeads(this.settings.wsRpcUrl, () => this.pollNow(), this.log);
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.heads?.close();
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Polls at once (or right after the poll running now): a new block was announced. */
  private pollNow(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.runPoll();
  }

  private rewind(): void {
    this.next = BigInt(this.settings.inputBoxBlock);
    this.blockTimes.clear();
    this.store.setNextBlock(this.next);
  }

  private testClient() {
    return createTestClient({ mode: "hardhat", transport: http(this.settings.rpcUrl) });
  }

  private async resubmit(inputs: readonly InputRecord[]): Promise<void> {
    if (inputs.length === 0) return;
    this.log(`fresh chain: re-submitting ${inputs.length} recorded input(s) from ${inputs[0]?.index} on`);
    const test = this.testClient();
    const wallet = createWalletClient({ transport: http(this.settings.rpcUrl) });
    for (const input of inputs) {
      await test.impersonateAccount({ address: input.msgSender });
      const balance = await this.client.getBalance({ address: input.msgSender });
      if (balance < parseEther("1")) await test.setBalance({ address: input.msgSender, value: parseEther("1") });
      const hash = await wallet.writeContract({
        chain: null,
        account: input.msgSender,
        address: this.settings.inputBoxAddress,
        abi: inputBoxCalls,
        functionName: "addInput",
        args: [this.settings.dappAddress, input.payload],
      });
      const receipt = await this.client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      await test.stopImpersonatingAccount({ address: input.msgSender });
      if (receipt.status !== "success") {
        throw new ChainMismatchError(`re-submitting input ${input.index} failed (transaction ${hash})`);
      }
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.runPoll(), delayMs);
  }

  private runPoll(): void {
    this.timer = undefined;
    this.polling = true;
    this.poll().then(
      () => {
        this.polling = false;
        // Only a whole poll counts: a chain that answers the block number and then hangs is not being read.
        this.readAt = Date.now();
        if (this.again) {
          this.again = false;
          this.pollNow();
        } else this.schedule(this.heads?.live === true ? Math.max(this.settings.pollIntervalMs, SUBSCRIBED_POLL_MS) : this.settings.pollIntervalMs);
      },
      (error: unknown) => {
        this.polling = false;
        this.again = false;
        if (error instanceof ChainMismatchError) {
          this.stop();
          this.onFatal(error);
          return;
        }
        if (!this.rpcDown) this.log(`chain unreachable at ${this.settings.rpcUrl}: ${messageOf(error)} (retrying)`);
        this.rpcDown = true;
        this.schedule(Math.max(this.settings.pollIntervalMs, 500));
      },
    );
  }

  private async poll(): Promise<void> {
    const latest = await this.client.getBlockNumber({ cacheTime: 0 });
    if (this.rpcDown) {
      this.rpcDown = false;
      this.log("chain reachable again");
    }
    if (latest + 1n < this.next) {
      // Block numbers went backwards: the chain restarted under us. Put the InputBox and the inputs back.
      this.log(`the chain restarted (block ${latest} < ${this.next - 1n}): syncing it with the record`);
      await this.sync();
    }
    while (!this.stopped && this.next <= latest) {
      const to = this.next + this.logRange - 1n < latest ? this.next + this.logRange - 1n : latest;
      try {
        await this.scan(this.next, to);
      } catch (error) {
        // The logs of a long range of busy blocks can exceed what the RPC client accepts in one answer
        // (viem: 10 MiB, ~6,000 inputs): halve the range and scan again instead of retrying the same
        // request forever. A single block that is still too large is a real failure.
        if (!isTooLarge(error) || to === this.next) throw error;
        this.logRange = (to - this.next + 1n) / 2n;
        continue;
      }
      // Grow back after a success, so one burst does not slow every later scan.
      if (this.logRange < MAX_LOG_RANGE) this.logRange = this.logRange * 2n < MAX_LOG_RANGE ? this.logRange * 2n : MAX_LOG_RANGE;
    }
  }

  private async scan(from: bigint, to: bigint): Promise<void> {
    const { inputBoxAddress: inputBox, dappAddress: dapp } = this.settings;
    const logs = await this.inputBox.logged(this.client, { inputBox, dapp, fromBlock: from, toBlock: to });
    const fresh: InputRecord[] = [];
    // Counted locally and committed with the store write, so a failed scan is simply retried.
    let expected = this.recorded;
    const blocks: bigint[] = [];
    for (const log of logs) {
      const { index, sender, payload } = log;
      if (index < this.recorded) {
        this.check(index, sender, payload);
        this.inputBox.seenAgain?.(index, log);
        continue;
      }
      if (index !== expected) {
        throw new ChainMismatchError(
          `input ${index} arrived but ${expected} was expected next (is INPUTBOX_BLOCK after the first input?)`,
        );
      }
      const input: InputRecord = { index, status: "UNPROCESSED", msgSender: sender, payload, blockNumber: Number(log.blockNumber), timestamp: log.timestamp ?? 0 };
      fresh.push(log.extra === undefined ? input : Object.assign(input, log.extra));
      if (log.timestamp === undefined) blocks.push(log.blockNumber);
      expected++;
    }
    if (blocks.length > 0) {
      const times = await this.blockTimesOf(blocks);
      for (const [i, input] of fresh.entries()) input.timestamp = times.get(blocks[i] as bigint) as number;
    }
    this.store.addInputs(fresh, to + 1n);
    this.recorded = expected;
    this.next = to + 1n;
    this.scanned = true;
    for (const input of fresh) this.model.enqueueAdvance(input);
  }

  /** An input the record already holds must be the same input (sender and payload). */
  private check(index: number, sender: Address, payload: Hex): void {
    const recorded = this.store.getInput(index);
    if (
      recorded === undefined ||
      recorded.msgSender.toLowerCase() !== sender.toLowerCase() ||
      recorded.payload.toLowerCase() !== payload.toLowerCase()
    ) {
      throw new ChainMismatchError(
        `input ${index} on the chain differs from the recorded one: this DATA_DIR belongs to another chain ` +
          `(start with --reset or another DATA_DIR)`,
      );
    }
  }

  /** Timestamps (seconds) of `blockNumbers`, from the cache or fetched BLOCK_BATCH at a time in one batch each. */
  private async blockTimesOf(blockNumbers: readonly bigint[]): Promise<Map<bigint, number>> {
    const times = new Map<bigint, number>();
    const missing: bigint[] = [];
    for (const blockNumber of new Set(blockNumbers)) {
      const cached = this.blockTimes.get(blockNumber);
      if (cached !== undefined) times.set(blockNumber, cached);
      else missing.push(blockNumber);
    }
    for (let at = 0; at < missing.length; at += BLOCK_BATCH) {
      const chunk = missing.slice(at, at + BLOCK_BATCH);
      const fetched = await Promise.all(chunk.map((blockNumber) => this.headers.getBlock({ blockNumber })));
      for (const [i, block] of fetched.entries()) {
        const seconds = Number(block.timestamp);
        const blockNumber = chunk[i] as bigint;
        times.set(blockNumber, seconds);
        if (this.blockTimes.size > 1024) this.blockTimes.clear();
        this.blockTimes.set(blockNumber, seconds);
      }
    }
    return times;
  }
}
