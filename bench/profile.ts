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
  /** The readers section: inputs through the InputBox, then requests per read figure. */
  readers: { inputs: number; requests: number };
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
    advance: 20_000,
    chainAdvance: 20_000,
    mixedInputs: 2_000,
    mixedQueries: 2_000,
    claims: 200,
    claimWarmup: 5,
    groupClaims: { 16: 2_000, 64: 5_000 },
    transportInputs: 5_000,
    batchInputs: 300,
    readers: { inputs: 5_000, requests: 5_000 },
    riscv64: { inputs: 2_000, inspects: 1_000 },
    machine: { inputs: 1_000, inspects: 300 },
    reads: 2_000,
    readWarmup: 200,
    chainFloorSamples: 50,
  },
  ci: {
    inspectStore: 2_000,
    scaleSizes: [1_000, 2_000, 5_000],
    requests: 300,
    warmup: 50,
    scaleRequests: 200,
    scaleWarmup: 30,
    floorOps: 1_000,
    advance: 300,
    chainAdvance: 200,
    mixedInputs: 100,
    mixedQueries: 100,
    claims: 10,
    claimWarmup: 2,
    groupClaims: { 16: 64, 64: 192 },
    transportInputs: 200,
    batchInputs: 20,
    readers: { inputs: 100, requests: 150 },
    riscv64: { inputs: 100, inspects: 100 },
    machine: { inputs: 50, inspects: 20 },
    reads: 100,
    readWarmup: 10,
    chainFloorSamples: 5,
  },
};

/** The attestor run (`npm run bench -- --attestor`, bench/sections/attestor.ts): claims per mode, and claims per load run (relayed, plain). */
export const ATTESTOR_PROFILES: Record<BenchSize, { claims: number; loadClaims: number }> = {
  full: { claims: 40, loadClaims: 1024 },
  // ci checks that every figure comes out (test/bench/attestor-bench.test.ts), not what it is: two claims
  // per mode (each zk one is seconds of proving) keep that test within CI's minutes.
  ci: { claims: 2, loadClaims: 16 },
};
