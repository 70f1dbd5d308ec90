/**
 * Epochs as a v1 node keeps them: an epoch closes over the inputs the dapp has finished since the last
 * one (on a schedule and on demand), and each closed epoch is claimed through the Authority with the epoch
 * hash of its outputs. An epoch with no inputs is neither closed nor claimed, so epoch n is claim n in the
 * History, which is what a proof's context names. Once its epoch is claimed, every notice and voucher has
 * a proof that `CartesiDApp.validateNotice` accepts.
 */
import type { Address, Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { EpochSchedule, type EpochStatus } from "../epoch-schedule.ts";
import type { Log } from "../log.ts";
import type { DevnodeStore, EpochRecord } from "../store.ts";
import type { ApplicationState, V1Application } from "./application.ts";
import type { EpochHasher } from "./epoch-hasher.ts";
import { buildEpochProofs, encodeClaim, encodeProofContext, type EpochInputOutputs, type EpochProofs, type OutputValidityProof } from "./proofs.ts";

export interface OutputProof {
  validity: OutputValidityProof;
  context: Hex;
}

/** Proof trees kept in memory: an explorer or a verifier usually asks about the latest epochs. */
const CACHED_EPOCHS = 8;

export class EpochManager {
  /** Closing and claiming run one at a time, in order (the History takes claims only in order). */
  private readonly schedule: EpochSchedule;
  private readonly trees = new Map<number, EpochProofs>();
  private claimFailing = false;

  constructor(
    private readonly store: DevnodeStore,
    private readonly app: V1Application,
    private state: ApplicationState,
    /** How many inputs the dapp has finished (they are finished in index order). */
    private readonly processedInputs: () => number,
    intervalMs: number,
    private readonly log: Log,
    /** Where epoch hashes are computed; without one, on this thread. */
    private readonly hasher?: EpochHasher,
  ) {
    this.schedule = new EpochSchedule(intervalMs, () => this.close(), (error) => this.log(`closing an epoch failed: ${messageOf(error)} (retrying)`));
  }

  get addresses(): ApplicationState {
    return this.state;
  }

  start(): void {
    this.schedule.start();
  }

  stop(): void {
    this.schedule.stop();
  }

  /** Closes an epoch over the inputs processed since the last one (if any) and claims what is unclaimed. */
  close(): Promise<EpochRecord | null> {
    return this.schedule.serialized(async () => {
      const closed = await this.closeNow();
      await this.claimPending();
      return closed === null ? null : (this.store.epochs().find((e) => e.index === closed.index) ?? closed);
    });
  }

  /** After the chain came back empty (or the contracts were placed again): submit every recorded claim again. */
  restore(state: ApplicationState): Promise<void> {
    return this.schedule.serialized(async () => {
      this.state = state;
      await this.claimPending({ resubmit: true });
    });
  }

  status(): EpochStatus {
    const epochs = this.store.epochs();
    const last = epochs[epochs.length - 1];
    return {
      epochs: epochs.length,
      claimed: epochs.filter((e) => e.claimTx !== null).length,
      lastEpoch: last ?? null,
      openInputs: this.processedInputs() - (last === undefined ? 0 : last.lastInput + 1),
      canClaim: this.state.canClaim,
    };
  }

  /** The v1 proof of an output, or null while the output's epoch is open or unclaimed. */
  proof(kind: "notice" | "voucher", inputIndex: number, outputIndex: number): OutputProof | null {
    const epoch = this.store.epochOfInput(inputIndex);
    if (epoch === undefined || epoch.claimTx === null) return null;
    const tree = this.tree(epoch);
    const within = inputIndex - epoch.firstInput;
    const validity = kind === "notice" ? tree.noticeProof(within, outputIndex) : tree.voucherProof(within, outputIndex);
    return { validity, context: encodeProofContext(epoch.index) };
  }

  private async closeNow(): Promise<EpochRecord | null> {
    const last = this.store.lastEpoch();
    const first = last === undefined ? 0 : last.lastInput + 1;
    const end = this.processedInputs() - 1;
    if (end < first) return null;
    const index = last === undefined ? 0 : last.index + 1;
    // Off the event loop when a hasher is given (devnode/v1/epoch-hasher.ts): the trees are built from the
    // committed record, and inputs first..end are committed before they count as processed.
    const epochHash = this.hasher === undefined ? this.tree({ index, firstInput: first, lastInput: end, epochHash: "0x", claimTx: null }).epochHash : await this.hasher.epochHash(first, end);
    const epoch: EpochRecord = { index, firstInput: first, lastInput: end, epochHash, claimTx: null };
    this.store.addEpoch(epoch);
    this.log(`epoch ${index} closed: inputs ${first}..${end}, epoch hash ${epochHash}`);
    return epoch;
  }

  /** Claims the recorded epochs the History lacks, in order. With `resubmit`, claimed ones are checked too. */
  private async claimPending(options: { resubmit?: boolean } = {}): Promise<void> {
    if (!this.state.canClaim) return;
    for (const epoch of this.store.epochs()) {
      if (epoch.claimTx !== null && options.resubmit !== true) continue;
      const onChain = await this.app.claimedEpochHash(this.state, epoch.index);
      if (onChain !== undefined) {
        if (onChain.toLowerCase() !== epoch.epochHash.toLowerCase()) {
          throw new Error(`claim ${epoch.index} on chain has epoch hash ${onChain}, the record ${epoch.epochHash}`);
        }
        continue;
      }
      try {
        const claimData = encodeClaim(this.state.dapp, epoch.epochHash, epoch.firstInput, epoch.lastInput);
        const tx = await this.app.submitClaim(this.state.authority, claimData);
        this.store.setEpochClaimed(epoch.index, tx);
        if (this.claimFailing) this.log("claims go through again");
        this.claimFailing = false;
        this.log(`epoch ${epoch.index} claimed (transaction ${tx})`);
      } catch (error) {
        if (!this.claimFailing) this.log(`claiming epoch ${epoch.index} failed: ${messageOf(error)} (retrying with the next close)`);
        this.claimFailing = true;
        return;
      }
    }
  }

  private tree(epoch: EpochRecord): EpochProofs {
    const cached = this.trees.get(epoch.index);
    if (cached !== undefined) return cached;
    const tree = this.build(epoch.firstInput, epoch.lastInput);
    this.remember(epoch.index, tree);
    return tree;
  }

  private remember(index: number, tree: EpochProofs): void {
    if (this.trees.size >= CACHED_EPOCHS) {
      const oldest = this.trees.keys().next().value;
      if (oldest !== undefined) this.trees.delete(oldest);
    }
    this.trees.set(index, tree);
  }

  private build(first: number, last: number): EpochProofs {
    return buildEpochTree(this.store, first, last);
  }
}

/** The proof trees (and epoch hash) of an epoch over inputs first..last, from what the record holds. */
export function buildEpochTree(store: DevnodeStore, first: number, last: number): EpochProofs {
  const { inputs, outputs } = store.epochContents(first, last);
  const notices: Hex[][] = inputs.map(() => []);
  const vouchers: { destination: Address; payload: Hex }[][] = inputs.map(() => []);
  // Rows come ordered by kind, input and index, so pushing keeps each list in output order.
  for (const output of outputs) {
    const at = output.inputIndex - first;
    if (output.kind === "notice") notices[at]?.push(output.payload);
    else vouchers[at]?.push({ destination: output.destination as Address, payload: output.payload });
  }
  const contents: EpochInputOutputs[] = inputs.map((input, i) => ({
    accepted: input.status === "ACCEPTED",
    notices: notices[i] ?? [],
    vouchers: vouchers[i] ?? [],
  }));
  return buildEpochProofs(contents);
}
