/**
 * The dapp's log: one line per input and per problem, on stdout, written in batches. A write to stdout is
 * a system call (synchronous on Linux for files, pipes and terminals), and one per input cost ~60 µs on
 * the rollup loop's critical path, a tenth of an input (docs/performance.md). Lines wait at most
 * `flushMs`, and every line still waiting is written when the process exits, for whatever reason.
 */
export interface LineLog {
  (line: string): void;
  /** Writes what is waiting now. */
  flush(): void;
}

const MAX_PENDING_CHARS = 64 * 1024;

export function createLineLog(prefix: string, write: (text: string) => void, flushMs = 50): LineLog {
  let pending = "";
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (pending === "") return;
    const text = pending;
    pending = "";
    write(text);
  }

  const log = (line: string): void => {
    pending += `${prefix}${line}\n`;
    if (pending.length >= MAX_PENDING_CHARS) flush();
    else if (timer === undefined) timer = setTimeout(flush, flushMs).unref();
  };
  return Object.assign(log, { flush });
}
