/**
 * v2 epochs: ranges of blocks (`epochLength` of them, numbered from genesis, as the Authority counts),
 * each holding the inputs mined in its blocks. An epoch is closed once the devnode has read past its last
 * block; once the dapp has processed its inputs, its claim is the outputs Merkle root after its last input,
 * submitted through the Authority as `submitClaim(application, lastBlock, root)`. Every EPOCH_INTERVAL_MS
 * the closed epochs not yet claimed are claimed, oldest first; `close()` (POST /epoch/close) does it now,
 * mining the open epoch's remaining blocks first on a managed chain.
 */
import type { Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { EpochSchedule, type EpochStatus } from "../epoch-schedule.ts";
import type { Log } from "../log.ts";
import type { V2Application, V2ApplicationState } from "./application.ts";
import type { V2Claim, V2EpochSpan, V2Store } from "./record.ts";

/** The v2 node's epoch statuses (Rollups 2.2.0 line) a devnode epoch can be in. */
export type V2EpochStatus = "OPEN" | "CLOSED" | "CLAIM_COMPUTED" | "CLAIM_ACCEPTED";

export interface V2Epoch extends V2EpochSpan {
  status: V2EpochStatus;
  /** The root a claim carries: known once the epoch's inputs are processed. */
  outputsRoot: Hex | null;
  claim: V2Claim | null;
}

const ZERO_HASH: Hex = `0x${"00".repeat(32)}`;

/** How long close() waits for the follower to read the blocks it mined and the dapp to process them. */
const CLOSE_WAIT_MS = 10_000;

export class V2EpochManager {
  /** Claims go one at a time, in order. */
  private readonly schedule: EpochSchedule;
  private claimFailing = false;

  constructor(
    private readonly store: V2Store,
    private readonly app: V2Application,
    private state: V2ApplicationState,
    private readonly managedChain: boolean,
    intervalMs: number,
    private readonly log: Log,
  ) {
    store.epochLength = state.epochLength;
    this.schedule = new EpochSchedule(
      intervalMs,
      () => this.schedule.serialized(() => this.claimDue()),
      (error) => this.log(`claiming epochs failed: ${messageOf(error)} (retrying)`),
    );
  }

  get addresses(): { application: string; authority: string; inputBox: string; epochLength: number } {
    return { application: this.state.application, authority: this.state.authority, inputBox: this.state.inputBox, epochLength: this.state.epochLength };
  }

  get applicationState(): V2ApplicationState {
    return this.state;
  }

  /** After (re)connecting to the chain: fresh contracts hold none of the record's claims. */
  restore(state: V2ApplicationState): Promise<void> {
    return this.schedule.serialized(async () => {
      this.state = state;
      this.store.epochLength = state.epochLength;
      if (state.deployed && this.store.forgetClaims() > 0) this.log("fresh v2 contracts: the record's epochs will be claimed again");
    });
  }

  start(): void {
    this.schedule.start();
  }

  stop(): void {
    this.schedule.stop();
  }

  /** The last block the devnode has read inputs up to. */
  private head(): number {
    return Number(this.store.nextBlock() ?? 0n) - 1;
  }

  /** Every epoch that holds inputs, with its status, oldest first (or the one numbered `index`). */
  epochs(index?: number): V2Epoch[] {
    const head = this.head();
    const claims = this.store.claims();
    return this.store.epochSpans(index).map((span) => {
      const claim = claims.get(span.index) ?? null;
      const closed = span.lastBlock <= head;
      const processed = span.pending === 0;
      const status: V2EpochStatus = !closed ? "OPEN" : !processed ? "CLOSED" : claim !== null ? "CLAIM_ACCEPTED" : "CLAIM_COMPUTED";
      const outputsRoot = claim?.outputsRoot ?? span.rootAfter;
      return { ...span, status, outputsRoot, claim };
    });
  }

  /** The epoch an input's block falls in. */
  epochIndexOfBlock(blockNumber: number): number {
    return Math.floor(blockNumber / this.state.epochLength);
  }

  /** Metrics and GET /epochs. */
  status(): EpochStatus {
    const epochs = this.epochs();
    const closed = epochs.filter((e) => e.status !== "OPEN");
    const last = closed[closed.length - 1];
    return {
      epochs: closed.length,
      claimed: closed.filter((e) => e.claim !== null).length,
      lastEpoch: last === undefined ? null : this.summary(last),
      openInputs: epochs.filter((e) => e.status === "OPEN").reduce((n, e) => n + (e.upper - e.lower), 0),
      canClaim: this.state.canClaim,
    };
  }

  /**
   * Closes the open epoch now (on a managed chain, by mining the rest of its blocks) and claims every
   * closed epoch; resolves with the newest epoch claimed now, or null when there was nothing to claim.
   */
  async close(): Promise<EpochStatus["lastEpoch"]> {
    const open = this.epochs().filter((e) => e.status === "OPEN");
    const last = open[open.length - 1];
    if (last !== undefined && this.managedChain) {
      await this.app.mineTo(last.lastBlock);
      const deadline = Date.now() + CLOSE_WAIT_MS;
      while (this.head() < last.lastBlock && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    }
    const deadline = Date.now() + CLOSE_WAIT_MS;
    while (this.epochs().some((e) => e.status === "CLOSED") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const claimed = await this.schedule.serialized(() => this.claimDue());
    const newest = claimed[claimed.length - 1];
    return newest === undefined ? null : this.summary(newest);
  }

  private summary(epoch: V2Epoch): NonNullable<EpochStatus["lastEpoch"]> {
    return { index: epoch.index, firstInput: epoch.lower, lastInput: epoch.upper - 1, epochHash: epoch.outputsRoot ?? ZERO_HASH, claimTx: epoch.claim?.claimTx ?? null };
  }

  /** Claims the closed, processed epochs not claimed yet, oldest first; stops at the first failure. */
  private async claimDue(): Promise<V2Epoch[]> {
    const claimed: V2Epoch[] = [];
    if (!this.state.canClaim) return claimed;
    for (const epoch of this.epochs()) {
      if (epoch.status !== "CLAIM_COMPUTED" || epoch.outputsRoot === null) continue;
      let claimTx: Hex;
      try {
        claimTx = await this.app.submitClaim(this.state, epoch.lastBlock, epoch.outputsRoot);
      } catch (error) {
        const message = messageOf(error);
        if (!/NotFirstClaim/.test(message)) {
          if (!this.claimFailing) this.log(`claiming epoch ${epoch.index} failed: ${message} (retrying with the next interval)`);
          this.claimFailing = true;
          return claimed;
        }
        // Claimed already (the devnode stopped between the transaction and the record): the Authority
        // holds it, the transaction is not known here.
        claimTx = ZERO_HASH;
      }
      const claim = { epochIndex: epoch.index, outputsRoot: epoch.outputsRoot, claimTx, claimedAt: Date.now() };
      this.store.addClaim(claim);
      if (this.claimFailing) this.log("claims go through again");
      this.claimFailing = false;
      this.log(`epoch ${epoch.index} (blocks ${epoch.firstBlock}..${epoch.lastBlock}, inputs ${epoch.lower}..${epoch.upper - 1}) claimed: outputs root ${epoch.outputsRoot} (transaction ${claimTx})`);
      claimed.push({ ...epoch, status: "CLAIM_ACCEPTED", claim });
    }
    return claimed;
  }
}
