/**
 * How much each section of `npm run bench` does at each size (bench/sizes.ts): stores, requests, inputs
 * and claims. `full` is the run; `ci` the small one CI runs (test/bench/bench.test.ts). The
 * attestor run (`--attestor`) has its own two numbers per size. Loads nothing heavy: scripts/bench.ts
 * reads it before the rig.
 */
import type { BenchSize } from "./sizes.ts";

export interface Profile {
  /** Stored attestations for the inspect, api and chain figures (one of scaleSizes). */
  inspectStore: number;
  scaleSizes: number[];
  requests: number;
  warmup: number;
  scaleRequests: number;
  scaleWarmup: number;
  floorOps: number;
  /** Untimed calls before each in-process SQLite floor (a fifth of them before the slow by-target query). */
  floorWarmup: number;
  advance: number;
  chainAdvance: number;
  mixedInputs: number;
  mixedQueries: number;
  claims: number;
  claimWarmup: number;
  /** Claims per concurrency of the group-commit throughput figures (c1 reuses the claim figures above). */
  groupClaims: { 16: number; 64: number };
  /** Inputs of the transports rows (the dapp on libcmt against the rollup HTTP server), on the smallest store. */
  transportInputs: number;
  /** Batches of 32 claims per encoding in the batch advance rows (compact against JSON, in-process), on the smallest store. */
  batchInputs: number;
  /** The readers section: inputs through the InputBox, then requests per read figure, after `warmup` untimed ones. */
  readers: { inputs: number; requests: number; warmup: number };
  /** Rounds of the publisher's delay figure, per poll interval. */
  publisherRounds: number;
  /**
   * Start the scale section's straight rigs at once instead of one after the other: nothing is measured
   * while they start, but at once they contend for the cores, and the full run keeps its plain order.
   */
  rigsAtOnce: boolean;
  /**
   * The on-chain rows on the publisher section's stack (once its publisher is stopped) instead of a stack
   * of their own: what was recorded before is not in any figure, but a fresh chain is the full run's rule.
   */
  onchainOnPublisherStack: boolean;
  /**
   * Run the indexer (api/index/) in the stacks with an api, as npm start does. No figure reads it (the
   * publisher reads the node's GraphQL), so ci leaves out its start and its indexing beside every section.
   */
  indexer: boolean;
  /** Inputs and inspects of the riscv64 rows (--riscv64), on the smallest store. */
  riscv64: { inputs: number; inspects: number };
  /**
   * Inputs and inspects the 128 MiB machine (--machine) is fed on its million attestations: full-system
   * emulation runs the dapp at tens of inputs a second, enough to load it, not to time it.
   */
  machine: { inputs: number; inspects: number };
  reads: number;
  readWarmup: number;
  chainFloorSamples: number;
}

export const PROFILES: Record<BenchSize, Profile> = {
  full: {
    inspectStore: 100_000,
    scaleSizes: [10_000, 100_000, 1_000_000],
    requests: 5_000,
    warmup: 500,
    scaleRequests: 2_000,
    scaleWarmup: 300,
    floorOps: 20_000,
    floorWarmup: 1000,
    advance: 20_000,
    chainAdvance: 20_000,
    mixedInputs: 2_000,
    mixedQueries: 2_000,
    claims: 200,
    claimWarmup: 5,
    groupClaims: { 16: 2_000, 64: 5_000 },
    transportInputs: 5_000,
    batchInputs: 300,
    readers: { inputs: 5_000, requests: 5_000, warmup: 100 },
    publisherRounds: 4,
    rigsAtOnce: false,
    onchainOnPublisherStack: false,
    indexer: true,
    riscv64: { inputs: 2_000, inspects: 1_000 },
    machine: { inputs: 1_000, inspects: 300 },
    reads: 2_000,
    readWarmup: 200,
    chainFloorSamples: 50,
  },
  // ci only has to bring every figure out finite (test/bench/bench.test.ts), inside npm test's budget: each
  // count is a few times what a p99 of its samples needs, warmups are short, and starts are shared.
  ci: {
    inspectStore: 2_000,
    scaleSizes: [1_000, 2_000, 5_000],
    requests: 100,
    warmup: 10,
    scaleRequests: 60,
    scaleWarmup: 5,
    floorOps: 250,
    floorWarmup: 100,
    advance: 300,
    chainAdvance: 100,
    mixedInputs: 100,
    mixedQueries: 100,
    claims: 5,
    claimWarmup: 1,
    groupClaims: { 16: 32, 64: 64 },
    transportInputs: 100,
    batchInputs: 20,
    readers: { inputs: 100, requests: 50, warmup: 10 },
    publisherRounds: 2,
    rigsAtOnce: true,
    onchainOnPublisherStack: true,
    indexer: false,
    riscv64: { inputs: 100, inspects: 100 },
    machine: { inputs: 50, inspects: 20 },
    reads: 50,
    readWarmup: 5,
    chainFloorSamples: 5,
  },
};

/**
 * The attestor run (`npm run bench -- --attestor`, bench/sections/attestor.ts): timed claims per mode after
 * `warmup` untimed ones, claims per load run (relayed, plain), and whether its stack runs the indexer
 * (no figure reads it).
 */
export const ATTESTOR_PROFILES: Record<BenchSize, { claims: number; warmup: number; loadClaims: number; indexer: boolean }> = {
  full: { claims: 40, warmup: 1, loadClaims: 1024, indexer: true },
  // ci checks that every figure comes out (test/bench/attestor-bench.test.ts), not what it is: two claims
  // per mode (each zk one is seconds of proving) and no untimed one first (a warm process only makes the
  // figure truer) keep that test within CI's minutes; 8 relayed claims still come from 64 clients at once.
  ci: { claims: 2, warmup: 0, loadClaims: 8, indexer: false },
};
