/**
 * `runBench`: every figure of the benchmark issue, measured on this machine in one run (scripts/bench.ts
 * parses the command line and writes the report). This file only composes the sections
 * (bench/sections/), in this order: seed the stores and take their in-process floors (and the dapp's rate
 * on compact batches against JSON batches, in-process, on the smallest); scale (a straight
 * rig per store size); on the largest store the straight advance, then a mixed load for the memory figure;
 * on the smallest the dapp on libcmt against the same dapp on the rollup HTTP server;
 * then the whole stack (chain, devnode, dapp bundle, api) on the inspect-size store for the inspect
 * figures, the api figures, the gas of a write, the riscv64 and machine rows when asked, and the advance
 * through the chain's InputBox; last, on stacks of their own, the readers and the publisher.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import type { TestStack } from "../test/support/stack.ts";
import { buildDappBundle } from "./bundle.ts";
import { TARGET_OWNER_COUNT } from "./inputs.ts";
import { PROFILES, type Profile } from "./profile.ts";
import { figure, type BenchReport, type Figure, type ScalePoint } from "./report.ts";
import { advanceFigures, advanceFloor, BATCH_ADVANCE, batchAdvance, chainAdvance, straightAdvance } from "./sections/advance.ts";
import { apiRows, GROUP_CONCURRENCY } from "./sections/api.ts";
import type { BenchContext } from "./sections/context.ts";
import { echoUrl, INSPECT_CONFIGS, INSPECT_QUERIES, inspectRows, startEcho } from "./sections/inspect.ts";
import { machineRows } from "./sections/machine.ts";
import { bareNodeKiB, memoryFigures, mixedLoadPeakKiB } from "./sections/memory.ts";
import { riscv64Rows } from "./sections/riscv64.ts";
import { measureScale, scaleFigures, withStraightRigs } from "./sections/scale.ts";
import { SEEDED_HOW, seedStores, sqliteFloors } from "./sections/stores.ts";
import { onchainFigureNames, onchainRows } from "./sections/onchain.ts";
import { publisherFigureNames, publisherRows, startPublisherStack } from "./sections/publisher.ts";
import { CATCH_UP_FIGURE, READ_QUERIES, READER_INSPECT_FIGURE, READER_LOADS, readerFigureName, readerRows } from "./sections/readers.ts";
import { LIBCMT_PEAK, LIBCMT_RATE, transportRows } from "./sections/transports.ts";
import { startWholeStack } from "./sections/whole-stack.ts";
import { gasFigureNames, gasRows } from "./sections/writes.ts";
import type { SeedResult } from "./seed.ts";

import { SIZES, type BenchSize } from "./sizes.ts";

export { SIZES, type BenchSize };

/** The name of every figure a run of `size` produces (the run checks itself against it; so does CI). */
export function expectedFigures(size: BenchSize): string[] {
  const p = PROFILES[size];
  const largest = Math.max(...p.scaleSizes).toLocaleString("en-US");
  const sizes = [...p.scaleSizes].sort((a, b) => a - b).map((n) => n.toLocaleString("en-US"));
  return [
    ...sizes.map((n) => `by_owner(${TARGET_OWNER_COUNT}) p50 @ ${n}`),
    ...sizes.map((n) => `by_owner(${TARGET_OWNER_COUNT}) p99 @ ${n}`),
    ...INSPECT_CONFIGS.flatMap((c) => INSPECT_QUERIES.flatMap((q) => ["rps", "p50", "p99"].map((m) => `${q} ${c} ${m}`))),
    "claim p50",
    "claim p99",
    ...GROUP_CONCURRENCY.flatMap((c) => (c === 1 ? ["claims/s c1"] : [`claims/s c${c}`, `claim c${c} p50`, `claim c${c} p99`])),
    ...gasFigureNames(),
    "read p50",
    "read p99",
    `straight (devnode model, no chain) @ ${largest}`,
    `through InputBox @ ${p.inspectStore.toLocaleString("en-US")}`,
    `dapp peak RSS @ ${largest}`,
    BATCH_ADVANCE(Math.min(...p.scaleSizes)),
    LIBCMT_RATE(Math.min(...p.scaleSizes)),
    LIBCMT_PEAK(Math.min(...p.scaleSizes)),
    ...READ_QUERIES.flatMap((q) => READER_LOADS.map((via) => readerFigureName(q, via))),
    CATCH_UP_FIGURE,
    READER_INSPECT_FIGURE,
    ...publisherFigureNames(),
    ...onchainFigureNames(),
    "database bytes per attestation",
  ];
}

export interface BenchOptions {
  size: BenchSize;
  /** The Rollups version of the whole-stack rows (the straight rig has none). */
  rollups: "v1" | "v2";
  /** Adds the riscv64 rows (npm run bench -- --riscv64): the root file system's cache directory. */
  riscv64?: { cache: string };
  /** Adds the 128 MiB machine row (npm run bench -- --machine), with the same cache. */
  machine?: { cache: string };
  root: string;
  command: string;
  log: (line: string) => void;
}

/** The notes on the run as a whole, after every section's own. */
function runNotes(profile: Profile, nodeFlags: readonly string[]): string[] {
  return [
    `Stores seeded: ${SEEDED_HOW}.`,
    "inspect: GET /inspect/<percent-encoded JSON> on the devnode of the whole stack (chain, devnode, dapp bundle, api), " +
      `${profile.inspectStore.toLocaleString("en-US")} attestations stored; attestation ids and owners (~10 attestations each) rotate through 1,000 and 256 samples.`,
    `The dapp runs as the image runs it: node ${[...nodeFlags, "dapp/main.js"].join(" ")} (a bundle built like npm run build; flags from Dockerfile.cartesi's NODE_OPTIONS).`,
    "scale, straight advance and memory: bench/direct-node.ts (the devnode's model, rollup server, query server and record, fed over IPC instead of by the chain) with the dapp bundle.",
    "HTTP client: bench/wire-client.ts (lean keep-alive HTTP/1.1, one connection per concurrent worker) unless a row says node:http; " +
      "every floor is measured with the same client as its figure.",
    "Ratios are value / floor; for rates a ratio below 1 is the share of the floor reached.",
  ];
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const { log, root } = options;
  const profile = PROFILES[options.size];
  const startedAt = new Date().toISOString();
  // Each part's wall time, logged as it ends: where a run's time goes (CI runs the ci size inside npm test's budget).
  let lapStarted = performance.now();
  const lap = (part: string): void => {
    const now = performance.now();
    log(`took ${((now - lapStarted) / 1000).toFixed(1)} s: ${part}`);
    lapStarted = now;
  };
  const figures: Figure[] = [];
  const notes: string[] = [];
  let seeding: BenchReport["seeding"] = [];
  const scale: ScalePoint[] = [];
  const work = mkdtempSync(join(tmpdir(), "attestation-bench-"));
  const bundleDir = join(root, "bench-results", ".bundle", String(process.pid));
  // Stores of a million rows are large: removed even when the run is interrupted.
  const removeWork = (): void => {
    rmSync(work, { recursive: true, force: true });
    rmSync(bundleDir, { recursive: true, force: true });
  };
  process.once("exit", removeWork);
  const bundle = await buildDappBundle(root, bundleDir);
  log(`dapp: ${bundle.command.slice(1).join(" ")}; work dir ${work}`);
  const ctx: BenchContext = { root, work, profile, bundle, log };
  lap("dapp bundle");
  const echo = startEcho(ctx);
  let stack: TestStack | undefined;
  try {
    // ---- the stores, and their in-process floors before anything else uses them ----
    const stores = await seedStores(ctx);
    seeding = stores.seeding;
    lap("seeding");
    const sqlite = sqliteFloors(stores, profile.floorOps, profile.floorWarmup);
    const floorRate = await advanceFloor(ctx, stores.big);
    lap("sqlite and advance floors");
    const smallStore = stores.seeded.get(Math.min(...profile.scaleSizes)) as SeedResult;
    const batches = await batchAdvance(ctx, smallStore);
    figures.push(
      figure("advance", BATCH_ADVANCE(smallStore.count), "claims/s", batches.compact, { name: "JSON batches of the same claims, same run", value: batches.json }, {
        // The same work per claim either way (the payload's decoding is a few µs of ~55): "not below" within the run's noise.
        target: { text: "not below JSON batches (>= 0.97x)", met: (_v: number, r: number) => r >= 0.97 },
      }),
    );

    lap("batch advance");

    // ---- scale; on the largest store's rig, the straight advance then the memory load ----
    const { straight, peakKiB } = await withStraightRigs(ctx, stores, async (rigs) => {
      const rig = await measureScale(ctx, stores, sqlite, rigs, scale);
      const advanced = await straightAdvance(ctx, rig);
      return { straight: advanced, peakKiB: await mixedLoadPeakKiB(ctx, rig, stores.big) };
    });
    figures.push(...scaleFigures(scale, stores.largest));
    const bareKiB = await bareNodeKiB(ctx);
    lap("scale, straight advance, mixed load, bare node");

    // ---- the dapp on libcmt beside the same dapp on the rollup HTTP server, on the smallest store ----
    const transports = await transportRows(ctx, stores.seeded.get(Math.min(...profile.scaleSizes)) as SeedResult, profile.transportInputs);
    figures.push(...transports.figures);
    notes.push(...transports.notes);
    lap("transports");

    // ---- the whole stack on the inspect-size store: inspect, api, the gas of a write ----
    const echoAt = await echoUrl(echo);
    stack = await startWholeStack(ctx, options.rollups);
    lap("whole stack start");
    const inspect = await inspectRows(ctx, stack, echoAt, stores, sqlite);
    figures.push(...inspect.figures);
    lap("inspect");
    const api = await apiRows(ctx, stack, inspect.attestationC1);
    figures.push(...api.figures);
    notes.push(...api.notes);
    lap("api");
    const gas = await gasRows(ctx, stack);
    figures.push(...gas.figures);
    notes.push(...gas.notes);
    lap("gas of a write");

    // ---- the dapp under riscv64 (qemu-user) beside the native dapp ----
    if (options.riscv64 !== undefined) {
      const smallest = Math.min(...profile.scaleSizes);
      const rows = await riscv64Rows({
        root,
        work,
        store: stores.seeded.get(smallest) as SeedResult,
        bundle,
        cache: options.riscv64.cache,
        ...profile.riscv64,
        log,
      });
      figures.push(...rows.figures);
      notes.push(rows.note);
      lap("riscv64");
    }

    // ---- the dapp in a 128 MiB riscv64 machine (qemu-system) on a million attestations ----
    if (options.machine !== undefined) {
      const rows = await machineRows({
        root,
        work,
        bundle,
        cache: options.machine.cache,
        ...profile.machine,
        log,
      });
      figures.push(...rows.figures);
      notes.push(rows.note);
      lap("machine");
    }

    // ---- advance through the chain's InputBox; then the advance and memory figures ----
    const chain = await chainAdvance(ctx, stack);
    figures.push(...advanceFigures(ctx, stores.largest, straight, floorRate, chain), ...memoryFigures(stores.largest, peakKiB, bareKiB, stores.big));
    lap("chain advance");

    // ---- readers: a stack of their own, once the whole stack is no longer loaded ----
    const readers = await readerRows(ctx, profile.readers.inputs, profile.readers.requests, profile.readers.warmup);
    figures.push(...readers.figures);
    notes.push(...readers.notes);
    lap("readers");

    // ---- the publisher: a stack of its own, its delay at two poll intervals ----
    // ---- on chain: the registry's gas beside EAS's, on a stack of its own (ci: the publisher's, after it) ----
    const shared = profile.onchainOnPublisherStack ? await startPublisherStack(ctx, options.rollups) : undefined;
    try {
      const published = await publisherRows(ctx, options.rollups, shared);
      figures.push(...published.figures);
      notes.push(...published.notes);
      lap("publisher");
      const onchain = await onchainRows(ctx, options.rollups, shared);
      figures.push(...onchain.figures);
      notes.push(...onchain.notes);
      if (shared !== undefined) notes.push("on chain (ci size): on the publisher's stack once its publisher stopped, not on a stack of its own.");
    } finally {
      await shared?.stop();
    }
    lap("on chain");
    notes.push(...runNotes(profile, bundle.nodeFlags));
  } finally {
    await stack?.stop();
    await echo.stop();
    removeWork();
    process.off("exit", removeWork);
  }
  const names = new Set(figures.map((f) => f.name));
  const missing = expectedFigures(options.size).filter((name) => !names.has(name));
  if (missing.length > 0) throw new Error(`the run produced no figure for: ${missing.join("; ")}`);
  const cpu = cpus();
  return {
    size: options.size,
    startedAt,
    finishedAt: new Date().toISOString(),
    command: options.command,
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? "unknown",
      memoryMiB: Math.round(totalmem() / 2 ** 20),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    seeding,
    notes,
    figures,
    scale,
  };
}
