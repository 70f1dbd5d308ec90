/**
 * The v2 validator's claims (devnode/validator.ts does the checking): every ClaimSubmitted the
 * application's Authority emitted, in order. A v2 claim names an epoch by its last block and carries the
 * outputs Merkle root after the last input mined up to that block; this node computes the same root over
 * its own record once it has read the chain past that block and its dapp has processed those inputs.
 * The Authority itself refuses a claim for a block not yet mined or not at an epoch's end, so a v2 claim
 * cannot name inputs that are not on chain: the only lie left is the root, and that is what is compared.
 */
import type { Address } from "viem";
import type { ClaimBook, ClaimOnChain, Judgement } from "../validator.ts";
import type { V2Application, V2ApplicationState } from "./application.ts";
import type { V2Store } from "./record.ts";

/** Blocks per getLogs call: public endpoints refuse wide ranges. */
const LOG_RANGE = 10_000;

export interface V2ClaimOnChain extends ClaimOnChain {
  lastBlock: number;
  submitter: Address;
}

export class AuthorityClaims implements ClaimBook<V2ClaimOnChain> {
  readonly rollups = "v2";
  readonly hashName = "outputs root";
  /** Every claim read so far, and the last block read for them. */
  private readonly seen: V2ClaimOnChain[] = [];
  private scannedThrough = -1;

  constructor(
    private readonly store: V2Store,
    private readonly app: Pick<V2Application, "claimsSubmitted" | "latestBlock">,
    private readonly state: Pick<V2ApplicationState, "application" | "authority" | "epochLength">,
    /** How many inputs the dapp has finished (in index order). */
    private readonly processedInputs: () => number,
  ) {}

  async claim(index: number): Promise<V2ClaimOnChain | undefined> {
    if (index >= this.seen.length) await this.readNewClaims();
    return this.seen[index];
  }

  private async readNewClaims(): Promise<void> {
    const latest = await this.app.latestBlock();
    while (this.scannedThrough < latest) {
      const from = this.scannedThrough + 1;
      const to = Math.min(latest, from + LOG_RANGE - 1);
      for (const claim of await this.app.claimsSubmitted(this.state, from, to)) {
        this.seen.push({ hash: claim.outputsRoot, lastBlock: claim.lastBlock, submitter: claim.submitter });
      }
      // Only after the range is read: a failed read is read again, never skipped.
      this.scannedThrough = to;
    }
  }

  async judge(claim: V2ClaimOnChain): Promise<Judgement> {
    const firstBlock = claim.lastBlock - this.state.epochLength + 1;
    const firstInput = this.store.inputsThroughBlock(firstBlock - 1);
    const upper = this.store.inputsThroughBlock(claim.lastBlock);
    const readThroughBlock = Number(this.store.nextBlock() ?? 0n) - 1;
    const processedInputs = this.processedInputs();
    if (readThroughBlock < claim.lastBlock || processedInputs < upper) {
      return { kind: "wait", waiting: { lastInput: upper - 1, processedInputs, lastBlock: claim.lastBlock, readThroughBlock } };
    }
    const computed = this.store.outputsRootAt(this.store.outputsBefore(upper));
    return { kind: "computed", firstInput, lastInput: upper - 1, computed };
  }

  describe(claim: V2ClaimOnChain, firstInput: number, lastInput: number): string {
    const blocks = `blocks ${claim.lastBlock - this.state.epochLength + 1}..${claim.lastBlock}`;
    return lastInput < firstInput ? `${blocks}, no inputs` : `${blocks}, inputs ${firstInput}..${lastInput}`;
  }
}
