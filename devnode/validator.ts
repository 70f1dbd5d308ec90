/**
 * A validator node (DEVNODE_ROLE=validator, docs/operations.md): a devnode that follows someone else's
 * chain with its own dapp, claims nothing, and checks every claim the History holds for the application.
 * Claim n names its inputs (first..last) and an epoch hash; once its own dapp has processed those inputs,
 * the validator builds the same epoch over its own record and compares the hashes. A claim that names
 * inputs the InputBox does not hold is refused at once rather than waited on: no honest node closes an
 * epoch over inputs that are not on chain, and waiting would keep a liar quiet for as long as it likes.
 * A claim that does not match is what a lying (or broken) claimer looks like: it is logged as an error,
 * counted in the metrics, shown in `GET /validator`, and `npm run validate` exits 1 on it.
 *
 * Verdicts are kept in the record, so a restart neither checks a claim again nor forgets a mismatch.
 */
import type { Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import type { ApplicationAddresses, V1Application } from "./application.ts";
import type { Log } from "./chain.ts";
import { buildEpochTree } from "./epochs.ts";
import type { DevnodeStore, ValidationRecord } from "./store.ts";

export interface ValidatorStatus {
  role: "validator";
  /** Claims checked so far (each once). */
  checked: number;
  matched: number;
  mismatched: number;
  /** Every claim that did not match, oldest first. */
  mismatches: ValidationRecord[];
  latest: ValidationRecord | null;
  /** The next claim on chain, while the dapp has not processed all its inputs yet. */
  waitingFor: { claimIndex: number; lastInput: number; processedInputs: number } | null;
  /** Why the last look at the chain failed, or null. */
  lastError: string | null;
}

/** One line for the log and the status: viem's messages run on with request details and a version. */
function briefly(error: unknown): string {
  const short = error instanceof Error && "shortMessage" in error && typeof error.shortMessage === "string" ? error.shortMessage : messageOf(error);
  return short.split("\n", 1)[0] ?? short;
}

type ClaimReader = Pick<V1Application, "claim" | "inputsOnChain">;

interface ClaimOnChain {
  epochHash: Hex;
  firstInput: number;
  lastInput: number;
}

export class EpochValidator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private waitingFor: ValidatorStatus["waitingFor"] = null;
  private lastError: string | null = null;

  constructor(
    private readonly store: DevnodeStore,
    private readonly chain: ClaimReader,
    private readonly application: ApplicationAddresses,
    /** How many inputs the dapp has finished (in index order). */
    private readonly processedInputs: () => number,
    private readonly intervalMs: number,
    private readonly log: Log,
    /** Where a mismatch is reported (stderr): loud, apart from the ordinary log. */
    private readonly alarm: Log,
  ) {}

  start(): void {
    this.schedule(0);
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    return this.running ?? Promise.resolve();
  }

  status(): ValidatorStatus {
    const records = this.store.validations();
    const mismatches = records.filter((r) => !r.matches);
    return {
      role: "validator",
      checked: records.length,
      matched: records.length - mismatches.length,
      mismatched: mismatches.length,
      mismatches,
      latest: records[records.length - 1] ?? null,
      waitingFor: this.waitingFor,
      lastError: this.lastError,
    };
  }

  /** Checks every claim that can be checked now (joining a check already running). */
  check(): Promise<void> {
    this.running ??= this.checkClaims().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule(this.intervalMs));
    }, delay);
  }

  private async checkClaims(): Promise<void> {
    try {
      for (;;) {
        const claimIndex = this.store.validations().length;
        const claim = await this.chain.claim(this.application, claimIndex);
        if (claim === undefined) {
          this.waitingFor = null;
          break;
        }
        const processed = this.processedInputs();
        if (processed <= claim.lastInput) {
          // Inputs only ever get added, so a count read after the claim that falls short means they were
          // not there when it was made either.
          const onChain = await this.chain.inputsOnChain(this.application);
          if (onChain <= claim.lastInput) {
            this.refuse(claimIndex, claim, onChain);
            continue;
          }
          this.waitingFor = { claimIndex, lastInput: claim.lastInput, processedInputs: processed };
          break;
        }
        this.waitingFor = null;
        this.verify(claimIndex, claim);
      }
      if (this.lastError !== null) this.log("reading claims works again");
      this.lastError = null;
    } catch (error) {
      const message = briefly(error);
      if (this.lastError === null) this.log(`reading claims failed: ${message} (retrying)`);
      this.lastError = message;
    }
  }

  private verify(claimIndex: number, claim: ClaimOnChain): void {
    const computed = buildEpochTree(this.store, claim.firstInput, claim.lastInput).epochHash;
    this.store.addValidation({
      claimIndex,
      firstInput: claim.firstInput,
      lastInput: claim.lastInput,
      claimedHash: claim.epochHash,
      computedHash: computed,
      inputsOnChain: null,
      checkedAt: Math.floor(Date.now() / 1000),
    });
    const inputs = `inputs ${claim.firstInput}..${claim.lastInput}`;
    if (computed.toLowerCase() === claim.epochHash.toLowerCase()) {
      this.log(`claim ${claimIndex} (${inputs}) matches: epoch hash ${computed}`);
    } else {
      this.alarm(`VALIDATOR MISMATCH: claim ${claimIndex} (${inputs}) has epoch hash ${claim.epochHash} on chain; this node computes ${computed}`);
    }
  }

  private refuse(claimIndex: number, claim: ClaimOnChain, inputsOnChain: number): void {
    this.waitingFor = null;
    this.store.addValidation({
      claimIndex,
      firstInput: claim.firstInput,
      lastInput: claim.lastInput,
      claimedHash: claim.epochHash,
      computedHash: null,
      inputsOnChain,
      checkedAt: Math.floor(Date.now() / 1000),
    });
    this.alarm(
      `VALIDATOR MISMATCH: claim ${claimIndex} (inputs ${claim.firstInput}..${claim.lastInput}) has epoch hash ${claim.epochHash} on chain over inputs the InputBox does not hold (it holds ${inputsOnChain} for the dapp)`,
    );
  }
}
