/**
 * The v2 validator's claims (devnode/validator.ts does the checking): the claims the application's
 * consensus took, in order: under an Authority every ClaimSubmitted (its owner's word is the claim);
 * under a Quorum every ClaimAccepted (a member's vote alone decides nothing: wrong votes are quorum-votes.ts's
 * business, and only an accepted root stops a reader). A v2 claim names an epoch by its last block and carries the
 * outputs Merkle root after the last input mined up to that block; this node computes the same root over
 * its own record once it has read the chain past that block and its dapp has processed those inputs.
 * The Authority itself refuses a claim for a block not yet mined or not at an epoch's end, so a v2 claim
 * cannot name inputs that are not on chain: the only lie left is the root, and that is what is compared.
 */
import type { Address, Hex } from "viem";
import type { ClaimBook, ClaimOnChain, Judgement } from "../validator.ts";
import { ClaimEventCursor, type V2Application, type V2ApplicationState } from "./application.ts";
import type { V2Store } from "./record.ts";


export interface V2ClaimOnChain extends ClaimOnChain {
  lastBlock: number;
  /** Who sent it: the Authority's owner, or the Quorum itself for an accepted claim (no one member decided it). */
  submitter: Address;
}

/**
 * The outputs root this node computes for the epoch ending at `lastBlock`, once it has read the chain
 * past that block and its dapp has processed the epoch's inputs; otherwise what it still waits for.
 */
export function computedRootAt(
  store: V2Store,
  epochLength: number,
  lastBlock: number,
  processedInputs: number,
): { kind: "wait"; waiting: { lastInput: number; processedInputs: number; lastBlock: number; readThroughBlock: number } } | { kind: "computed"; firstInput: number; lastInput: number; computed: Hex } {
  const firstBlock = lastBlock - epochLength + 1;
  const firstInput = store.inputsThroughBlock(firstBlock - 1);
  const upper = store.inputsThroughBlock(lastBlock);
  const readThroughBlock = Number(store.nextBlock() ?? 0n) - 1;
  if (readThroughBlock < lastBlock || processedInputs < upper) {
    return { kind: "wait", waiting: { lastInput: upper - 1, processedInputs, lastBlock, readThroughBlock } };
  }
  return { kind: "computed", firstInput, lastInput: upper - 1, computed: store.outputsRootAt(store.outputsBefore(upper)) };
}

export class ConsensusClaims implements ClaimBook<V2ClaimOnChain> {
  readonly rollups = "v2";
  readonly hashName = "outputs root";
  /** Every claim read so far. */
  private readonly seen: V2ClaimOnChain[] = [];
  private readonly cursor: ClaimEventCursor;

  constructor(
    private readonly store: V2Store,
    app: Pick<V2Application, "claimEvents" | "latestBlock">,
    private readonly state: Pick<V2ApplicationState, "application" | "authority" | "epochLength" | "consensus">,
    /** How many inputs the dapp has finished (in index order). */
    private readonly processedInputs: () => number,
  ) {
    this.cursor = new ClaimEventCursor(app, state.consensus === "quorum" ? "ClaimAccepted" : "ClaimSubmitted", () => state);
  }

  async claim(index: number): Promise<V2ClaimOnChain | undefined> {
    if (index >= this.seen.length) await this.readNewClaims();
    return this.seen[index];
  }

  private readNewClaims(): Promise<void> {
    return this.cursor.readNew((claims) => {
      for (const claim of claims) this.seen.push({ hash: claim.outputsRoot, lastBlock: claim.lastBlock, submitter: claim.submitter ?? this.state.authority });
    });
  }

  async judge(claim: V2ClaimOnChain): Promise<Judgement> {
    return computedRootAt(this.store, this.state.epochLength, claim.lastBlock, this.processedInputs());
  }

  describe(claim: V2ClaimOnChain, firstInput: number, lastInput: number): string {
    const blocks = `blocks ${claim.lastBlock - this.state.epochLength + 1}..${claim.lastBlock}`;
    return lastInput < firstInput ? `${blocks}, no inputs` : `${blocks}, inputs ${firstInput}..${lastInput}`;
  }
}
