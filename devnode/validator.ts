/**
 * A validator node (DEVNODE_ROLE=validator, docs/operations.md): a devnode that follows someone else's
 * chain with its own dapp, claims nothing, and checks every claim on chain for the application against
 * what its own dapp computed. Where the claims are and what they name is the ClaimBook's business, which
 * the version supplies: on v1 the History's claim n names its inputs (first..last) and an epoch hash
 * (historyClaims, devnode/v1/validator.ts); on v2 the Authority's n-th ClaimSubmitted names an epoch's
 * last block and an outputs root (ConsensusClaims, devnode/v2/validator.ts). Once its own dapp has
 * processed the claim's inputs, the validator computes the same hash over its own record and compares.
 * A claim that names inputs the InputBox does not hold is refused at once rather than waited on: no
 * honest node closes an epoch over inputs that are not on chain, and waiting would keep a liar quiet for
 * as long as it likes. A claim that does not match is what a lying (or broken) claimer looks like: it is
 * logged as an error, counted in the metrics, shown in `GET /validator`, and `npm run validate` exits 1
 * on it.
 *
 * Verdicts are kept in the record (devnode/validations.ts), so a restart neither checks a claim again
 * nor forgets a mismatch.
 */
import type { Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import type { Log } from "./log.ts";
import type { DevnodeStore } from "./store.ts";
import { judged, type ValidationRecord } from "./validations.ts";

export interface ValidatorStatus {
  role: "validator";
  rollups: "v1" | "v2";
  /** Claims checked so far (each once). */
  checked: number;
  matched: number;
  mismatched: number;
  /** Every claim that did not match, oldest first. */
  mismatches: ValidationRecord[];
  latest: ValidationRecord | null;
  /** The next claim on chain, while this node has not read or processed all its inputs yet. */
  waitingFor: Waiting | null;
  /** Why the last look at the chain failed, or null. */
  lastError: string | null;
}

/** Why the next claim cannot be checked yet. */
export interface Waiting {
  claimIndex: number;
  /** The claim's last input as far as this node knows it now. */
  lastInput: number;
  processedInputs: number;
  /** v2: the claimed epoch's last block, and the last block this node has read inputs up to. */
  lastBlock?: number;
  readThroughBlock?: number;
}

/** What a ClaimBook makes of one claim. */
export type Judgement =
  | { kind: "wait"; waiting: Omit<Waiting, "claimIndex"> }
  | { kind: "computed"; firstInput: number; lastInput: number; computed: Hex }
  | { kind: "inputs-not-on-chain"; firstInput: number; lastInput: number; inputsOnChain: number };

/** A claim as the chain holds it: the hash it carries, plus what locates it (inputs on v1, blocks on v2). */
export interface ClaimOnChain {
  hash: Hex;
  lastBlock: number | null;
}

/** Where a validator reads the claims and how it judges one against its own record. */
export interface ClaimBook<C extends ClaimOnChain> {
  readonly rollups: "v1" | "v2";
  /** What the claimed hash is called in log lines. */
  readonly hashName: "epoch hash" | "outputs root";
  /** Claim `index` (0, 1, ... in the order the chain took them), or undefined while there is none. */
  claim(index: number): Promise<C | undefined>;
  judge(claim: C): Promise<Judgement>;
  /** The claim's place for log lines: "inputs 0..3" or "blocks 10..19, inputs 0..3". */
  describe(claim: C, firstInput: number, lastInput: number): string;
}

/** What a reader consults on every read, kept in memory (devnode/reader.ts). */
export interface ReaderVerdicts {
  /** The first claim that did not match, named (claim, inputs, claimed and computed hash); null while none. */
  mismatch: string | null;
  /** The last input of the furthest claim that matched; -1 before any. */
  matchedThroughInput: number;
}

/** A verdict in words, from the record alone, so that it reads the same after a restart. */
function describeMismatch(v: ValidationRecord, hashName: string): string {
  const inputs = v.lastInput < v.firstInput ? "no inputs" : `inputs ${v.firstInput}..${v.lastInput}`;
  return mismatchWords(`claim ${v.claimIndex} (${v.lastBlock === null ? "" : `epoch ending at block ${v.lastBlock}, `}${inputs})`, hashName, v);
}

/** What a claim that does not match says, after `where` names it (the log names it as the book does). */
function mismatchWords(where: string, hashName: string, v: Pick<ValidationRecord, "claimedHash" | "computedHash" | "inputsOnChain">): string {
  if (v.computedHash === null) return `${where} has ${hashName} ${v.claimedHash} on chain over inputs the InputBox does not hold (it holds ${v.inputsOnChain ?? 0} for the dapp)`;
  return `${where} has ${hashName} ${v.claimedHash} on chain; this node computes ${v.computedHash}`;
}

/** One line for the log and the status: viem's messages run on with request details and a version. */
function briefly(error: unknown): string {
  const short = error instanceof Error && "shortMessage" in error && typeof error.shortMessage === "string" ? error.shortMessage : messageOf(error);
  return short.split("\n", 1)[0] ?? short;
}

export class EpochValidator<C extends ClaimOnChain = ClaimOnChain> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private waitingFor: Waiting | null = null;
  private lastError: string | null = null;
  private readonly reading: ReaderVerdicts = { mismatch: null, matchedThroughInput: -1 };

  constructor(
    private readonly store: DevnodeStore,
    private readonly book: ClaimBook<C>,
    private readonly intervalMs: number,
    private readonly log: Log,
    /** Where a mismatch is reported (stderr): loud, apart from the ordinary log. */
    private readonly alarm: Log,
  ) {
    for (const verdict of store.validations()) this.remember(verdict);
  }

  /** The verdicts a reader needs, from memory: it asks on every inspect, and the record is read per call. */
  verdicts(): ReaderVerdicts {
    return { ...this.reading };
  }

  private remember(verdict: ValidationRecord): void {
    if (verdict.matches) this.reading.matchedThroughInput = Math.max(this.reading.matchedThroughInput, verdict.lastInput);
    else this.reading.mismatch ??= describeMismatch(verdict, this.book.hashName);
  }

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
      rollups: this.book.rollups,
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
        const claim = await this.book.claim(claimIndex);
        if (claim === undefined) {
          this.waitingFor = null;
          break;
        }
        const judgement = await this.book.judge(claim);
        if (judgement.kind === "wait") {
          this.waitingFor = { claimIndex, ...judgement.waiting };
          break;
        }
        this.waitingFor = null;
        this.record(claimIndex, claim, judgement);
      }
      if (this.lastError !== null) this.log("reading claims works again");
      this.lastError = null;
    } catch (error) {
      const message = briefly(error);
      if (this.lastError === null) this.log(`reading claims failed: ${message} (retrying)`);
      this.lastError = message;
    }
  }

  private record(claimIndex: number, claim: C, judgement: Exclude<Judgement, { kind: "wait" }>): void {
    const { firstInput, lastInput } = judgement;
    const computed = judgement.kind === "computed" ? judgement.computed : null;
    const inputsOnChain = judgement.kind === "inputs-not-on-chain" ? judgement.inputsOnChain : null;
    const verdict = { claimIndex, firstInput, lastInput, lastBlock: claim.lastBlock, claimedHash: claim.hash, computedHash: computed, inputsOnChain, checkedAt: Math.floor(Date.now() / 1000) };
    this.store.addValidation(verdict);
    this.remember(judged(verdict));
    const where = `claim ${claimIndex} (${this.book.describe(claim, firstInput, lastInput)})`;
    const name = this.book.hashName;
    if (computed !== null && computed.toLowerCase() === claim.hash.toLowerCase()) this.log(`${where} matches: ${name} ${computed}`);
    else this.alarm(`VALIDATOR MISMATCH: ${mismatchWords(where, name, verdict)}`);
  }
}
