/**
 * What waits for the dapp in the rollup model (devnode/model.ts): inputs and inspects in FIFOs, and each
 * inspect as a pending promise with what it comes to.
 */
import type { Hex } from "viem";

/** What an inspect comes to: the dapp's answer, or why there is none. */
export type InspectOutcome =
  | {
      ok: true;
      status: "Accepted" | "Rejected";
      exceptionPayload: Hex | null;
      reports: Hex[];
      processedInputCount: number;
    }
  | { ok: false; reason: "no_dapp" | "timeout" | "dapp_gone" | "shutdown"; message: string };

/** An inspect in the queue or at the dapp: settled once, by the dapp's answer or by a failure. */
export class PendingInspect {
  settled = false;
  readonly since = Date.now();
  constructor(
    readonly payload: Hex,
    private readonly resolve: (outcome: InspectOutcome) => void,
  ) {}

  settle(outcome: InspectOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(outcome);
  }
}

/** A FIFO with O(1) shift and unshift: the inspect queue can hold thousands of entries under load. */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return item;
  }

  *values(): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i];
      if (item !== undefined) yield item;
    }
  }
}

/**
 * Holds advances back between two inputs while a reader's state is copied (a snapshot: devnode/snapshot.ts):
 * `close` resolves once no advance is at the dapp, and the model hands none out until `open`.
 */
export class AdvanceGate {
  private shut = false;
  private waiters: (() => void)[] = [];

  get isOpen(): boolean {
    return !this.shut;
  }

  close(advancing: boolean): Promise<void> {
    this.shut = true;
    return advancing ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  /** The advance at the dapp ended: finished, or handed back to be done again by a new dapp. */
  between(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  open(): void {
    this.shut = false;
  }
}
