/**
 * The scale section: `attestations_by_owner` for the owner of 100 on every store size, one straight rig
 * (bench/rig.ts) per store, all up at once and measured in interleaved rounds, each point beside the same
 * query on SQLite alone; the smallest store's figure is the floor of the others. The largest store's rig
 * stays up for the straight advance and the memory load (bench/sections/advance.ts, memory.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { TARGET_OWNER_COUNT } from "../inputs.ts";
import { runInterleaved, type LoadRequest, type LoadResult } from "../load.ts";
import { figure, type Figure, type ScalePoint } from "../report.ts";
import { startDirectRig, type DirectRig } from "../rig.ts";
import type { SeedResult } from "../seed.ts";
import type { LatencySummary } from "../stats.ts";
import { acceptedInspect, inspectPath, ROUNDS, type BenchContext } from "./context.ts";
import type { SqliteFloor, Stores } from "./stores.ts";

/** Store sizes, smallest first. */
function scaleSizes(ctx: BenchContext): number[] {
  return [...ctx.profile.scaleSizes].sort((a, b) => a - b);
}

/**
 * Runs `use` with a straight rig on each store (`rigs`, by store size, filled as they start), and stops
 * every rig afterwards, whatever happened.
 */
export async function withStraightRigs<T>(ctx: BenchContext, stores: Stores, use: (rigs: Map<number, DirectRig>) => Promise<T>): Promise<T> {
  const rigs = new Map<number, DirectRig>();
  const start = async (stored: number): Promise<void> => {
    const rigDir = join(ctx.work, `rig-${stored}`);
    mkdirSync(rigDir, { recursive: true });
    rigs.set(
      stored,
      await startDirectRig({ root: ctx.root, workDir: rigDir, dbPath: (stores.seeded.get(stored) as SeedResult).path, dappMain: ctx.bundle.main, nodeFlags: ctx.bundle.nodeFlags }),
    );
  };
  try {
    if (ctx.profile.rigsAtOnce) {
      // Every start settles before a failure is thrown, so the finally below stops each rig that came up.
      const started = await Promise.allSettled(scaleSizes(ctx).map(start));
      const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
      if (failed !== undefined) throw failed.reason;
    } else {
      for (const stored of scaleSizes(ctx)) await start(stored);
    }
    return await use(rigs);
  } finally {
    for (const rig of rigs.values()) await rig.stop();
  }
}

/** The scale points (into `scale`, the report's chart); stops every rig but the largest store's, which it returns. */
export async function measureScale(
  ctx: BenchContext,
  stores: Stores,
  sqlite: Map<number, SqliteFloor>,
  rigs: Map<number, DirectRig>,
  scale: ScalePoint[],
): Promise<DirectRig> {
  const { log, profile } = ctx;
  const sizes = scaleSizes(ctx);
  const results = await runInterleaved(
    sizes.map((stored) => {
      const path = inspectPath({ type: "attestations_by_owner", params: { owner: (stores.seeded.get(stored) as SeedResult).targetOwner } });
      return {
        baseUrl: (rigs.get(stored) as DirectRig).nodeUrl,
        concurrency: 1,
        count: profile.scaleRequests,
        warmup: profile.scaleWarmup,
        next: (): LoadRequest => ({ method: "GET", path }),
        check: acceptedInspect,
      };
    }),
    ROUNDS,
  );
  for (const [k, stored] of sizes.entries()) {
    const result = results[k] as LoadResult;
    const floor = sqlite.get(stored)?.byTarget as LatencySummary;
    scale.push({ stored, p50: result.p50, p99: result.p99, sqliteP50: floor.p50 });
    log(`scale ${stored}: p50 ${result.p50.toFixed(3)} ms p99 ${result.p99.toFixed(3)} ms (${result.lastBodyBytes} bytes)`);
  }
  for (const stored of sizes) if (stored !== stores.largest) await rigs.get(stored)?.stop();
  return rigs.get(stores.largest) as DirectRig;
}

/** The scale figures: every point's p50 (against the smallest store's, with SQLite's beside it), then every p99. */
export function scaleFigures(scale: readonly ScalePoint[], largest: number): Figure[] {
  const figures: Figure[] = [];
  const base = scale[0] as ScalePoint;
  for (const point of scale) {
    const isLargest = point.stored === largest;
    figures.push(
      figure("scale", `by_owner(${TARGET_OWNER_COUNT}) p50 @ ${point.stored.toLocaleString("en-US")}`, "ms", point.p50, { name: `p50 @ ${base.stored}`, value: base.p50 }, {
        alt: { name: "sqlite", value: point.sqliteP50 },
        ...(isLargest ? { target: { text: `<= 1.5x ${base.stored}`, met: (_v: number, r: number) => r <= 1.5 } } : {}),
      }),
    );
  }
  for (const point of scale) {
    figures.push(figure("scale", `by_owner(${TARGET_OWNER_COUNT}) p99 @ ${point.stored.toLocaleString("en-US")}`, "ms", point.p99, { name: `p99 @ ${base.stored}`, value: base.p99 }));
  }
  return figures;
}

