/** Latency summaries: nearest-rank percentiles over the recorded samples (milliseconds). */
export interface LatencySummary {
  count: number;
  /** Requests (or operations) per second over the whole timed run. */
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(samplesMs: readonly number[], seconds: number): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const total = sorted.reduce((sum, v) => sum + v, 0);
  return {
    count: sorted.length,
    rps: seconds > 0 ? sorted.length / seconds : Number.NaN,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? total / sorted.length : Number.NaN,
    max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

/** Times `op` `count` times in a row (after `warmup` untimed calls): the in-process floors. */
export function timeSync(op: (i: number) => void, count: number, warmup: number): LatencySummary {
  for (let i = 0; i < warmup; i++) op(i);
  const samples = new Array<number>(count);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    op(i);
    samples[i] = performance.now() - t;
  }
  return summarize(samples, (performance.now() - started) / 1000);
}
