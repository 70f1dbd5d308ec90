/**
 * v2 epochs: ranges of blocks (`epochLength` of them, numbered from genesis, as the Authority counts),
 * each holding the inputs mined in its blocks. An epoch is closed once the devnode has read past its last
 * block; once the dapp has processed its inputs, its claim is the outputs Merkle root after its last input,
 * submitted through the Authority as `submitClaim(application, lastBlock, root)`. Every EPOCH_INTERVAL_MS
 * the closed epochs not yet claimed are claimed, oldest first; `close()` (POST /epoch/close) does it now,
 * mining the open epoch's remaining blocks first on a managed chain.
 *
 * Under a Quorum (docs/quorum.md) an epoch is claimed once the Quorum accepted a root for it
 * (ClaimAccepted), never on one member's vote: every node follows the acceptances, and a member (a
 * validator with a member's key) votes, oldest epoch first, for the roots its own dapp computed, once
 * each: before a vote it asks the Quorum whether its id voted in that epoch already (a restart, or its
 * key used elsewhere, which it reports).
 */
import type { Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { EpochSchedule, type EpochStatus } from "../epoch-schedule.ts";
import type { Log } from "../log.ts";
import { ClaimEventCursor, type V2Application, type V2ApplicationState } from "./application.ts";
import type { QuorumVotes } from "./quorum-votes.ts";
import type { V2Claim, V2EpochSpan, V2Store } from "./record.ts";

/** The v2 node's epoch statuses (Rollups 2.2.0 line) a devnode epoch can be in. */
export type V2EpochStatus = "OPEN" | "CLOSED" | "CLAIM_COMPUTED" | "CLAIM_SUBMITTED" | "CLAIM_ACCEPTED";

export interface V2Epoch extends V2EpochSpan {
  status: V2EpochStatus;
  /** The root a claim carries: known once the epoch's inputs are processed. */
  outputsRoot: Hex | null;
  claim: V2Claim | null;
}

const ZERO_HASH: Hex = `0x${"00".repeat(32)}`;

/** How long close() waits for the follower to read the blocks it mined and the dapp to process them (and, under a Quorum, for the members' votes). */
const CLOSE_WAIT_MS = 10_000;


export class V2EpochManager {
  /** Claims go one at a time, in order. */
  private readonly schedule: EpochSchedule;
  private claimFailing = false;
  /** Quorum: where ClaimAccepted is read up to, the epochs this member has voted in, those its key voted in elsewhere. */
  private readonly accepted: ClaimEventCursor;
  private readonly voted = new Set<number>();
  private readonly votedElsewhere = new Set<number>();

  constructor(
    private readonly store: V2Store,
    private readonly app: V2Application,
    private state: V2ApplicationState,
    private readonly managedChain: boolean,
    intervalMs: number,
    private readonly log: Log,
    /** Under a Quorum: the members' votes, judged on every round. */
    private readonly votes?: QuorumVotes,
    /** Where an accepted root that contradicts this node's own, or this member's key voting elsewhere, is reported. */
    private readonly alarm: Log = log,
  ) {
    store.epochLength = state.epochLength;
    this.accepted = new ClaimEventCursor(app, "ClaimAccepted", () => this.state);
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
      if (state.deployed) {
        this.accepted.rewind();
        this.voted.clear();
        this.votedElsewhere.clear();
        this.votes?.reset(state);
      }
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
      const status: V2EpochStatus = !closed ? "OPEN" : !processed ? "CLOSED" : claim !== null ? "CLAIM_ACCEPTED" : this.voted.has(span.index) ? "CLAIM_SUBMITTED" : "CLAIM_COMPUTED";
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
    // Under a Quorum the members decide when: wait (a while) for their acceptance of what is closed now.
    while (this.state.consensus === "quorum" && this.epochs().some((e) => e.status === "CLAIM_COMPUTED" || e.status === "CLAIM_SUBMITTED") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      claimed.push(...(await this.schedule.serialized(() => this.claimDue())));
    }
    const newest = claimed[claimed.length - 1];
    return newest === undefined ? null : this.summary(newest);
  }

  private summary(epoch: V2Epoch): NonNullable<EpochStatus["lastEpoch"]> {
    return { index: epoch.index, firstInput: epoch.lower, lastInput: epoch.upper - 1, epochHash: epoch.outputsRoot ?? ZERO_HASH, claimTx: epoch.claim?.claimTx ?? null };
  }

  /** Claims the closed, processed epochs not claimed yet, oldest first; stops at the first failure. */
  private async claimDue(): Promise<V2Epoch[]> {
    if (this.state.consensus === "quorum") return this.followQuorum();
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

  /** Quorum: votes (a member) for what it computed, then records what the Quorum accepted; the epochs accepted now. */
  private async followQuorum(): Promise<V2Epoch[]> {
    await this.votes?.refresh();
    if (this.state.canClaim) await this.vote();
    return this.followAccepted();
  }

  /** A member's votes, oldest epoch first, each once; stops at the first that fails (tried again next round). */
  private async vote(): Promise<void> {
    for (const epoch of this.epochs()) {
      if (epoch.status !== "CLAIM_COMPUTED" || epoch.outputsRoot === null || this.votedElsewhere.has(epoch.index)) continue;
      const already = await this.app.voteOf(this.state, epoch.lastBlock, epoch.outputsRoot);
      if (already === "other") {
        this.votedElsewhere.add(epoch.index);
        this.alarm(`this member's key (${this.app.account.address}) voted in epoch ${epoch.index} (ending at block ${epoch.lastBlock}) for a root this node did not compute (its own: ${epoch.outputsRoot}): someone else holds the key; this node will not vote in that epoch`);
        continue;
      }
      if (already === "this") {
        this.voted.add(epoch.index);
        continue;
      }
      try {
        const tx = await this.app.submitClaim(this.state, epoch.lastBlock, epoch.outputsRoot);
        this.voted.add(epoch.index);
        this.log(`epoch ${epoch.index} (blocks ${epoch.firstBlock}..${epoch.lastBlock}, inputs ${epoch.lower}..${epoch.upper - 1}): voted outputs root ${epoch.outputsRoot} (transaction ${tx})`);
        if (this.claimFailing) this.log("votes go through again");
        this.claimFailing = false;
      } catch (error) {
        const message = messageOf(error);
        // Accepted already, on the other members' votes: nothing left to vote for.
        if (/NotFirstClaim/.test(message)) {
          this.voted.add(epoch.index);
          continue;
        }
        if (!this.claimFailing) this.log(`voting in epoch ${epoch.index} failed: ${message} (retrying with the next round)`);
        this.claimFailing = true;
        return;
      }
    }
  }

  /** Records every root the Quorum accepted since the last look, as its epoch's claim. */
  private async followAccepted(): Promise<V2Epoch[]> {
    const accepted = new Set<number>();
    await this.accepted.readNew((events) => {
      for (const event of events) {
        const epochIndex = Math.floor(event.lastBlock / this.state.epochLength);
        if (this.store.claimOf(epochIndex) !== undefined) continue;
        this.store.addClaim({ epochIndex, outputsRoot: event.outputsRoot, claimTx: event.transactionHash, claimedAt: Date.now() });
        accepted.add(epochIndex);
      }
    });
    const epochs = this.epochs().filter((e) => accepted.has(e.index));
    for (const epoch of epochs) {
      const own = this.store.epochSpans(epoch.index)[0]?.rootAfter ?? null;
      const words = `epoch ${epoch.index} (blocks ${epoch.firstBlock}..${epoch.lastBlock}, inputs ${epoch.lower}..${epoch.upper - 1}) accepted by the Quorum: outputs root ${epoch.outputsRoot} (transaction ${epoch.claim?.claimTx})`;
      if (own !== null && own !== epoch.outputsRoot) this.alarm(`${words}; this node computes ${own}: a majority of the members voted for a root this node's dapp did not produce`);
      else this.log(words);
    }
    return epochs;
  }
}
