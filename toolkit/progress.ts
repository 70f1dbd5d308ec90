/**
 * Progress of long work on stderr, so stdout stays what a caller parses: on a terminal one line redrawn
 * in place (a bar, done/total, rate, time left); otherwise a plain line every 10% or every 5 s, whichever
 * comes first, and one at the end.
 */

export interface ProgressOptions {
  /** What is being counted ("inputs sent"). */
  label: string;
  total: number;
  /** Where lines go; default process.stderr. */
  stream?: { write(text: string): unknown; isTTY?: boolean };
  /** Clock in ms; tests pass their own. */
  now?: () => number;
}

export interface Progress {
  /** Marks `n` more done (default 1). */
  tick(n?: number): void;
  /** Ends the line (a terminal) or writes the last plain line. */
  done(): void;
}

const BAR_WIDTH = 24;
const PLAIN_EVERY_MS = 5_000;
const REDRAW_EVERY_MS = 100;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** One rendering of the state: `label [#####.....] 120/400 30% 55/s, 5 s left` (bar only on a terminal). */
export function renderProgress(label: string, done: number, total: number, elapsedMs: number, bar: boolean): string {
  const share = total > 0 ? Math.min(1, done / total) : 1;
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const left = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
  const filled = Math.round(share * BAR_WIDTH);
  const graph = bar ? ` [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}]` : "";
  const pace = done === total ? `in ${duration(elapsedMs / 1000)}` : `${duration(left)} left`;
  return `${label}${graph} ${done}/${total} ${Math.floor(share * 100)}% ${rate.toFixed(rate < 10 ? 1 : 0)}/s, ${pace}`;
}

export function startProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const tty = stream.isTTY === true;
  const started = now();
  let done = 0;
  let lastWrite = Number.NEGATIVE_INFINITY;
  let lastTenth = 0;
  let finished = false;

  const write = (force: boolean): void => {
    const at = now();
    if (tty) {
      if (!force && at - lastWrite < REDRAW_EVERY_MS) return;
      stream.write(`\r${renderProgress(options.label, done, options.total, at - started, true)}\x1b[K`);
    } else {
      const tenth = options.total > 0 ? Math.floor((done * 10) / options.total) : 10;
      if (!force && tenth === lastTenth && at - lastWrite < PLAIN_EVERY_MS) return;
      lastTenth = tenth;
      stream.write(`${renderProgress(options.label, done, options.total, at - started, false)}\n`);
    }
    lastWrite = at;
  };

  return {
    tick(n = 1) {
      if (finished) return;
      done = Math.min(options.total, done + n);
      write(false);
    },
    done() {
      if (finished) return;
      finished = true;
      write(true);
      if (tty) stream.write("\n");
    },
  };
}
