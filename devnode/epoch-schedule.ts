/**
 * What both versions' epoch managers (v1/epochs.ts, v2/epochs.ts) share: the status they report (GET
 * /epochs, /epoch/close and the metrics), and the loop they run on. Their epoch work runs one job at a
 * time, in order, because the chain takes claims only in order; every EPOCH_INTERVAL_MS a tick (closing
 * and claiming, as the version does it) runs as one such job, and a failed tick is logged and tried again
 * at the next.
 */
import type { EpochRecord } from "./store.ts";

export interface EpochStatus {
  epochs: number;
  claimed: number;
  lastEpoch: EpochRecord | null;
  /** Processed inputs not in any epoch yet. */
  openInputs: number;
  canClaim: boolean;
}

export class EpochSchedule {
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    /** 0: ticks only on demand (POST /epoch/close), none on a schedule. */
    private readonly intervalMs: number,
    /** One round of the version's epoch work; it queues itself with serialized(). */
    private readonly tick: () => Promise<unknown>,
    private readonly failed: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.intervalMs > 0) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Runs `work` after the jobs queued before it; one that fails does not stop the ones after it. */
  serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick().then(
        () => this.schedule(),
        (error: unknown) => {
          this.failed(error);
          this.schedule();
        },
      );
    }, this.intervalMs);
  }
}
