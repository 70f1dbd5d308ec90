/**
 * `runBench`: every figure of the benchmark issue, measured on this machine in one run. Order: seed the
 * stores; scale (straight rig per store size); on the largest store the straight advance, then a mixed
 * load for the memory figure; then the whole stack (chain, devnode, dapp bundle, api) on the inspect-size
 * store for the inspect figures, the api figures and the advance through the chain's InputBox.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import nacl from "tweetnacl";
import { encodeFunctionData, type Address, type Hex } from "viem";
import { issueToken } from "../api/auth/tokens.ts";
import { jsonToHex } from "../common/hex.ts";
import { hexToBuffer } from "../dapp/db/bytes.ts";
import { openDatabase } from "../dapp/db/open.ts";
import { createStore } from "../dapp/db/store.ts";
import { createDispatcher } from "../dapp/dispatch.ts";
import { DEFAULTS } from "../devnode/config.ts";
import { inputBoxAbi } from "../devnode/inputbox.ts";
import { startProviderServer } from "../test/support/provider-server.ts";
import { startStack, type TestStack } from "../test/support/stack.ts";
import { buildDappBundle } from "./bundle.ts";
import { attestationParams, BENCH_ADMIN, fedOwner, TARGET_OWNER_COUNT } from "./inputs.ts";
import { keepAliveAgent, loopbackTarget, runInterleaved, runLoad, send, type ClientKind, type LoadRequest, type LoadResult } from "./load.ts";
import { procStatusKiB, spawnChild, tsxArgs } from "./procs.ts";
import { figure, type BenchReport, type Figure, type ScalePoint } from "./report.ts";
import { startDirectRig, type DirectRig } from "./rig.ts";
import { checkSeedEquivalence, seedStore, type SeedResult } from "./seed.ts";
import { GAS_SIZES, measureWriteGas } from "./writes.ts";
import { riscv64Rows } from "./riscv64.ts";
import { machineRows } from "./machine.ts";
import { startProgress } from "../scripts/lib/progress.ts";
import { summarize, timeSync, type LatencySummary } from "./stats.ts";

import { SIZES, type BenchSize } from "./sizes.ts";

export { SIZES, type BenchSize };

interface Profile {
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
    riscv64: { inputs: 100, inspects: 100 },
    machine: { inputs: 50, inspects: 20 },
    reads: 100,
    readWarmup: 10,
    chainFloorSamples: 5,
  },
};

const GROUP_CONCURRENCY = [1, 16, 64] as const;
const INSPECT_QUERIES = ["attestation", "attestations_by_owner(~10)"] as const;
const INSPECT_CONFIGS = ["c1", "c16", "c1 node:http"] as const;

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
    ...GAS_SIZES.map((n) => (n === 1 ? "gas per attestation, one claim" : `gas per attestation, batch of ${n}`)),
    "read p50",
    "read p99",
    `straight (devnode model, no chain) @ ${largest}`,
    `through InputBox @ ${p.inspectStore.toLocaleString("en-US")}`,
    `dapp peak RSS @ ${largest}`,
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

/** How long the chain advance may make no progress before the run fails. */
const STALL_MS = 60_000;
/** Interleaved rounds of the load figures (runInterleaved): noise from the rest of the machine is shared. */
const ROUNDS = 5;
const JWT_SECRET = "bench-secret-bench-secret-bench-secret-0123";
const USER = "0x90f79bf6eb2c4f970365e785982e1f101e93b906" as Address;
/** Hardhat account #1: sends the chain floor's inputs (the api's wallet, #0, stays free for the api). */
const ACCOUNT_1 = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const CLAIM_BUCKETS = { field: "data.balance", boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const SEEDED_HOW =
  "dapp migrations + the dapp's own prepared inserts (createStore.insertSchema/insertAttestation), one transaction, " +
  "rows identical to create_attestation's (checked), input indexes from 1e12; no chain transactions";

function inspectPath(query: unknown): string {
  return `/inspect/${encodeURIComponent(JSON.stringify(query))}`;
}

function acceptedInspect(status: number, body: Buffer): void {
  if (status !== 200 || !body.includes('"status":"Accepted"')) {
    throw new Error(`inspect failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
  }
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const { log, root } = options;
  const profile = PROFILES[options.size];
  const startedAt = new Date().toISOString();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const seeding: BenchReport["seeding"] = [];
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
  const echo = spawnChild({
    name: "echo",
    file: process.execPath,
    args: tsxArgs(join(root, "bench/echo-server.ts")),
    env: {},
    cwd: root,
    logFile: join(work, "logs", "echo.log"),
    ipc: true,
  });
  let stack: TestStack | undefined;
  try {
    // ---- seeding ----
    const problems = await checkSeedEquivalence(7, 1000);
    if (problems.length > 0) throw new Error(`seeded rows differ from create_attestation's: ${problems.join(", ")}`);
    const stores = new Map<number, SeedResult>();
    const largest = Math.max(...profile.scaleSizes);
    for (const stored of [...profile.scaleSizes].sort((a, b) => a - b)) {
      const dir = stored === profile.inspectStore ? join(work, "stack") : join(work, `store-${stored}`);
      mkdirSync(dir, { recursive: true });
      const seeded = await seedStore(join(dir, "dapp.sqlite"), stored, join(root, "bench-results", "cache"));
      stores.set(stored, seeded);
      seeding.push({ stored, seconds: seeded.seconds, fileBytes: seeded.fileBytes, how: SEEDED_HOW });
      log(`seeded ${stored} attestations in ${seeded.seconds.toFixed(1)} s (${(seeded.fileBytes / 2 ** 20).toFixed(1)} MiB)`);
    }
    const big = stores.get(largest) as SeedResult;

    // ---- in-process floors on the stores, before anything else uses them ----
    const sqliteFloor = (seed: SeedResult) => {
      const db = openDatabase({ path: seed.path });
      const store = createStore(db);
      const ids = seed.sampleAttestationIds.map(hexToBuffer);
      const owners = seed.sampleOwners.map(hexToBuffer);
      const target = hexToBuffer(seed.targetOwner);
      const attestation = timeSync((i) => void store.attestationById(ids[i % ids.length] as Buffer), profile.floorOps, 1000);
      const byOwner = timeSync((i) => void store.attestationsByOwner(owners[i % owners.length] as Buffer, 1000, 0), profile.floorOps, 1000);
      const byTarget = timeSync(() => void store.attestationsByOwner(target, 1000, 0), Math.ceil(profile.floorOps / 4), 200);
      db.$client.close();
      return { attestation, byOwner, byTarget };
    };
    const sqlite = new Map<number, ReturnType<typeof sqliteFloor>>();
    for (const [stored, seed] of stores) sqlite.set(stored, sqliteFloor(seed));

    // Advance floor: the dapp's dispatcher in this process on a copy of the largest store, no HTTP.
    const floorPath = join(work, "floor.sqlite");
    copyFileSync(big.path, floorPath);
    const advanceFloor = await (async () => {
      const db = openDatabase({ path: floorPath });
      const ignore = async (): Promise<void> => {};
      const dispatcher = createDispatcher({ db, admins: [BENCH_ADMIN], outputs: { notice: ignore, report: ignore, exception: ignore } });
      const count = Math.min(profile.advance, 5_000);
      const payloads = Array.from({ length: count }, (_, i) => jsonToHex({ type: "create_attestation", params: attestationParams(i, fedOwner(i)) }));
      const now = Math.floor(Date.now() / 1000);
      const started = performance.now();
      for (let i = 0; i < count; i++) {
        const status = await dispatcher.advance({
          metadata: { msg_sender: BENCH_ADMIN, input_index: i, block_number: i + 1, timestamp: now },
          payload: payloads[i] as string,
        });
        if (status !== "accept") throw new Error(`advance floor: input ${i} rejected`);
      }
      const rate = count / ((performance.now() - started) / 1000);
      db.$client.close();
      return rate;
    })();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(floorPath + suffix, { force: true });
    log(`floors: in-process advance ${advanceFloor.toFixed(0)}/s`);

    // ---- scale (and, on the largest store, straight advance + memory) ----
    // One straight rig per store size, all up at once, measured in interleaved rounds (ROUNDS).
    let straight: { rate: number; seconds: number } | undefined;
    let peakKiB = 0;
    const sizes = [...profile.scaleSizes].sort((a, b) => a - b);
    const rigs = new Map<number, DirectRig>();
    try {
      for (const stored of sizes) {
        const rigDir = join(work, `rig-${stored}`);
        mkdirSync(rigDir, { recursive: true });
        rigs.set(
          stored,
          await startDirectRig({ root, workDir: rigDir, dbPath: (stores.get(stored) as SeedResult).path, dappMain: bundle.main, nodeFlags: bundle.nodeFlags }),
        );
      }
      const results = await runInterleaved(
        sizes.map((stored) => {
          const path = inspectPath({ type: "attestations_by_owner", params: { owner: (stores.get(stored) as SeedResult).targetOwner } });
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
      for (const stored of sizes) if (stored !== largest) await rigs.get(stored)?.stop();

      const rig = rigs.get(largest) as DirectRig;
      const seed = big;
      const done = await rig.feed(profile.advance, 0, 0);
      if (done.accepted !== profile.advance) throw new Error(`straight advance: ${done.accepted} of ${profile.advance} accepted`);
      straight = { rate: profile.advance / done.seconds, seconds: done.seconds };
      log(`straight advance: ${profile.advance} inputs in ${done.seconds.toFixed(1)} s (record ${done.recordSeconds.toFixed(2)} s)`);
      // Memory: queries and inputs at once, on the largest store.
      const owners = seed.sampleOwners;
      const ids = seed.sampleAttestationIds;
      const [mixed] = await Promise.all([
        rig.feed(profile.mixedInputs, profile.advance, profile.advance),
        runLoad({
          baseUrl: rig.nodeUrl,
          concurrency: 4,
          count: profile.mixedQueries,
          warmup: 0,
          next: (i) =>
            i % 2 === 0
              ? { method: "GET", path: inspectPath({ type: "attestations_by_owner", params: { owner: owners[i % owners.length] } }) }
              : { method: "GET", path: inspectPath({ type: "attestation", params: { attestation_id: ids[i % ids.length] } }) },
          check: acceptedInspect,
        }),
      ]);
      if (mixed.accepted !== profile.advance + profile.mixedInputs) throw new Error("mixed load: inputs rejected");
      peakKiB = rig.dappPeakKiB();
      log(`dapp peak RSS ${(peakKiB / 1024).toFixed(1)} MiB`);
    } finally {
      for (const rig of rigs.values()) await rig.stop();
    }
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

    // Memory floor: a bare node process.
    const bare = spawnChild({
      name: "bare-node",
      file: process.execPath,
      args: ["-e", "setTimeout(() => {}, 1500)"],
      env: {},
      cwd: root,
      logFile: join(work, "logs", "bare.log"),
    });
    await new Promise((r) => setTimeout(r, 700));
    const bareKiB = procStatusKiB(bare.pid, "VmHWM");
    await bare.stop();

    // ---- the whole stack on the inspect-size store ----
    const echoReady = await echo.message((m) => (isReady(m) ? m : undefined), 60_000);
    const echoUrl = `http://127.0.0.1:${echoReady.port}`;
    const inspectSeed = stores.get(profile.inspectStore) as SeedResult;
    stack = await startStack({
      api: true,
      rollups: options.rollups,
      dataDir: join(work, "stack"),
      dappCommand: bundle.command,
      env: { RATE_LIMITS: "off", PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET },
      readyTimeoutMs: 120_000,
    });
    const activeStack = stack;
    log(`stack up (Rollups ${options.rollups}): node ${stack.urls.node}, api ${stack.urls.api}`);

    const queries: { name: string; paths: string[]; floor: LatencySummary }[] = [
      {
        name: INSPECT_QUERIES[0],
        paths: inspectSeed.sampleAttestationIds.map((id) => inspectPath({ type: "attestation", params: { attestation_id: id } })),
        floor: sqlite.get(profile.inspectStore)?.attestation as LatencySummary,
      },
      {
        name: INSPECT_QUERIES[1],
        paths: inspectSeed.sampleOwners.map((owner) => inspectPath({ type: "attestations_by_owner", params: { owner } })),
        floor: sqlite.get(profile.inspectStore)?.byOwner as LatencySummary,
      },
    ];
    const inspectResults = new Map<string, LoadResult>();
    // The lean client at 1 and 16 connections, and node:http's client at 1 (what a typical Node caller sees).
    const configs: { concurrency: number; client: ClientKind }[] = [
      { concurrency: 1, client: "wire" },
      { concurrency: 16, client: "wire" },
      { concurrency: 1, client: "node" },
    ];
    for (const { concurrency, client } of configs) {
      // The echo floor interleaved with the queries: same client, concurrency, request paths and moments.
      const paths = queries[0]?.paths as string[];
      const [echoResult, ...results] = await runInterleaved(
        [
          {
            baseUrl: echoUrl,
            concurrency,
            client,
            count: profile.requests,
            warmup: profile.warmup,
            next: (i: number): LoadRequest => ({ method: "GET", path: paths[i % paths.length] as string }),
          },
          ...queries.map((q) => ({
            baseUrl: activeStack.urls.node,
            concurrency,
            client,
            count: profile.requests,
            warmup: profile.warmup,
            next: (i: number): LoadRequest => ({ method: "GET", path: q.paths[i % q.paths.length] as string }),
            check: acceptedInspect,
          })),
        ],
        ROUNDS,
      );
      if (echoResult === undefined) throw new Error("no echo result");
      const suffix = client === "wire" ? "" : " node:http";
      log(`echo c${concurrency}${suffix}: p50 ${echoResult.p50.toFixed(3)} ms, ${echoResult.rps.toFixed(0)}/s`);
      for (const [k, q] of queries.entries()) {
        const result = results[k] as LoadResult;
        inspectResults.set(`${q.name}/${concurrency}/${client}`, result);
        const label = `${q.name} c${concurrency}${suffix}`;
        log(`inspect ${label}: p50 ${result.p50.toFixed(3)} ms p99 ${result.p99.toFixed(3)} ms ${result.rps.toFixed(0)}/s`);
        const sqliteRps = 1000 / q.floor.mean;
        figures.push(
          figure("inspect", `${label} rps`, "req/s", result.rps, { name: "echo rps", value: echoResult.rps }, {
            alt: { name: "sqlite ops/s", value: sqliteRps },
            ...(concurrency === 16 ? { target: { text: ">= 2,000/s", met: (v: number) => v >= 2000 } } : {}),
          }),
          figure("inspect", `${label} p50`, "ms", result.p50, { name: "echo p50", value: echoResult.p50 }, {
            alt: { name: "sqlite p50", value: q.floor.p50 },
            ...(concurrency === 1 ? { target: { text: "<= 4x echo", met: (_v: number, r: number) => r <= 4 } } : {}),
          }),
          figure("inspect", `${label} p99`, "ms", result.p99, { name: "echo p99", value: echoResult.p99 }, {
            alt: { name: "sqlite p99", value: q.floor.p99 },
          }),
        );
      }
    }

    // ---- api: claim end to end and attestation reads ----
    const provider = await startProviderServer();
    try {
      provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const secret = new TextEncoder().encode(JWT_SECRET);
      const adminToken = (await issueToken(secret, stack.addresses.admin, "admin")).token;
      const userToken = (await issueToken(secret, USER, "user")).token;
      const apiTarget = loopbackTarget(stack.urls.api);
      const agent = keepAliveAgent(1);
      const post = async (path: string, token: string, body: unknown) => {
        const answer = await send(agent, apiTarget, {
          method: "POST",
          path,
          body: Buffer.from(JSON.stringify(body)),
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        });
        if (answer.status !== 200) throw new Error(`${path}: HTTP ${answer.status} ${answer.body.toString("utf8")}`);
      };
      await post("/api/core/provider-schema", adminToken, {
        provider: "http",
        flowType: "balance",
        domain: "127.0.0.1",
        bucketDefinitions: { "data.balance": { boundaries: CLAIM_BUCKETS.boundaries, labels: CLAIM_BUCKETS.labels } },
        dataKeys: ["data.currency"],
        freshnessHalfLife: 86400,
      });
      await post("/api/core/encryption-key", adminToken, {
        publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"),
        algorithm: "nacl-box",
      });
      agent.destroy();
      const claimBody = Buffer.from(
        JSON.stringify({
          provider: "http",
          params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
          bucketDefinition: CLAIM_BUCKETS,
        }),
      );
      const claimIds: string[] = [];
      const claimRequest = (): LoadRequest => ({
        method: "POST",
        path: "/api/core/claim",
        body: claimBody,
        headers: { "content-type": "application/json", authorization: `Bearer ${userToken}` },
      });
      const claim = await runLoad({
        baseUrl: stack.urls.api,
        concurrency: 1,
        count: profile.claims,
        warmup: profile.claimWarmup,
        next: claimRequest,
        check: (status, body) => {
          const parsed = JSON.parse(body.toString("utf8")) as { success?: boolean; data?: { claimId?: string } };
          if (status !== 200 || parsed.success !== true || parsed.data?.claimId === undefined) {
            throw new Error(`claim failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
          }
          claimIds.push(parsed.data.claimId);
        },
      });
      log(`claim: p50 ${claim.p50.toFixed(1)} ms p99 ${claim.p99.toFixed(1)} ms`);
      const read = await runLoad({
        baseUrl: stack.urls.api,
        concurrency: 1,
        count: profile.reads,
        warmup: profile.readWarmup,
        next: (i) => ({ method: "GET", path: `/api/core/attestation/${claimIds[i % claimIds.length]}` }),
        check: (status, body) => {
          if (status !== 200 || !body.includes('"success":true')) throw new Error(`read failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
        },
      });
      log(`read: p50 ${read.p50.toFixed(2)} ms p99 ${read.p99.toFixed(2)} ms`);

      // Group commit: the same claims from 16 and 64 clients at once (c1 is the run above).
      const grouped = new Map<number, LoadResult>([[1, claim]]);
      for (const concurrency of [16, 64] as const) {
        const inputsBefore = await inputCount(stack);
        const result = await runLoad({
          baseUrl: stack.urls.api,
          concurrency,
          count: profile.groupClaims[concurrency],
          warmup: concurrency,
          next: claimRequest,
          check: (status, body) => {
            if (status !== 200 || !body.includes('"success":true')) throw new Error(`claim c${concurrency} failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
          },
        });
        grouped.set(concurrency, result);
        const inputs = (await inputCount(stack)) - inputsBefore;
        const claims = result.count + concurrency;
        log(`claims c${concurrency}: ${result.rps.toFixed(0)}/s p50 ${result.p50.toFixed(1)} ms p99 ${result.p99.toFixed(1)} ms; ${claims} claims in ${inputs} inputs`);
        notes.push(`writes c${concurrency}: ${claims} claims went in ${inputs} InputBox transactions (${(claims / inputs).toFixed(1)} a transaction).`);
      }

      // Claim floor: what the chain alone costs, an addInput round trip (send to receipt) from account #1.
      const chainRoundTrip = await chainRoundTrips(stack, profile.chainFloorSamples);
      const inspectAttestation = inspectResults.get("attestation/1/wire") as LoadResult;
      figures.push(
        figure("api", "claim p50", "ms", claim.p50, { name: "addInput round trip p50", value: chainRoundTrip.p50 }, {
          target: { text: "<= 100 ms", met: (v: number) => v <= 100 },
        }),
        figure("api", "claim p99", "ms", claim.p99, { name: "addInput round trip p99", value: chainRoundTrip.p99 }),
        ...GROUP_CONCURRENCY.flatMap((c) => {
          const result = grouped.get(c) as LoadResult;
          const pipeline = { name: "one wallet's addInput pipeline", value: 1000 / chainRoundTrip.mean };
          const rate = figure("writes", `claims/s c${c}`, "claims/s", result.rps, pipeline, c === 64 ? { target: { text: ">= 1,000/s", met: (v: number) => v >= 1000 } } : {});
          // At c1 the latencies are the claim p50/p99 rows above.
          if (c === 1) return [rate];
          return [
            rate,
            figure("writes", `claim c${c} p50`, "ms", result.p50, { name: "addInput round trip p50", value: chainRoundTrip.p50 }),
            figure("writes", `claim c${c} p99`, "ms", result.p99, { name: "addInput round trip p99", value: chainRoundTrip.p99 }, c === 64 ? { target: { text: "< 250 ms", met: (v: number) => v < 250 } } : {}),
          ];
        }),
        figure("api", "read p50", "ms", read.p50, { name: "inspect attestation c1 p50", value: inspectAttestation.p50 }, {
          target: { text: "<= 5 ms", met: (v: number) => v <= 5 },
        }),
        figure("api", "read p99", "ms", read.p99, { name: "inspect attestation c1 p99", value: inspectAttestation.p99 }),
      );
    } finally {
      await provider.close();
    }

    // ---- what a write costs on chain, beside EAS on the same chain ----
    const gas = await measureWriteGas(stack.urls.rpc, stack.addresses.inputBox, stack.addresses.dapp);
    log(`gas per attestation: ours ${GAS_SIZES.map((n) => `${n}: ${Math.round(gas.ours[n])}`).join(", ")}; EAS ${GAS_SIZES.map((n) => `${n}: ${Math.round(gas.eas[n])}`).join(", ")}`);
    for (const n of GAS_SIZES) {
      const name = n === 1 ? "gas per attestation, one claim" : `gas per attestation, batch of ${n}`;
      const easName = n === 1 ? "EAS attest" : `EAS multiAttest of ${n}${gas.easTransactions[n] > 1 ? ` (${gas.easTransactions[n]} transactions)` : ""}`;
      figures.push(
        n === 32
          ? figure("writes", name, "gas", gas.ours[n], { name: "EAS attest", value: gas.eas[1] }, {
              alt: { name: easName, value: gas.eas[n] },
              target: { text: "<= 1/20 of EAS attest", met: (_v: number, r: number) => r <= 1 / 20 },
            })
          : figure("writes", name, "gas", gas.ours[n], { name: easName, value: gas.eas[n] }),
      );
    }
    notes.push(
      `writes: claims through the api (rate limits off, local provider) from 1, 16 and 64 clients; writes waiting for the wallet go as one batch input (group commit). ` +
        `Gas: our inputs carry ${Math.round(gas.payloadBytes[32])} payload bytes per claim; EAS's attestations carry the same fields ABI-encoded (${gas.easDataBytes} data bytes), schema "${"bytes32 schemaId,address owner,string provider,bytes encryptedData,string bucketValues"}", from its published bytecode.` +
        (gas.easTransactions[128] > 1 ? ` EAS's multiAttest of 128 exceeds the 2^24 gas a transaction may use (EIP-7825): it took ${gas.easTransactions[128]} transactions.` : ""),
      `payload encodings of a batch of 32 (gas per claim, eth_estimateGas): ${gas.encodings.map((e) => `${e.name} ${Math.round(e.gasPerItem)} (${Math.round(e.bytesPerItem)} B)`).join("; ")}.`,
    );

    // ---- the dapp under riscv64 (qemu-user) beside the native dapp ----
    if (options.riscv64 !== undefined) {
      const smallest = Math.min(...profile.scaleSizes);
      const rows = await riscv64Rows({
        root,
        work,
        store: stores.get(smallest) as SeedResult,
        bundle,
        cache: options.riscv64.cache,
        ...profile.riscv64,
        log,
      });
      figures.push(...rows.figures);
      notes.push(rows.note);
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
    }

    // ---- advance through the chain's InputBox ----
    const chain = await chainAdvance(stack, profile.chainAdvance, profile.advance + profile.mixedInputs);
    log(`chain advance: ${profile.chainAdvance} inputs in ${chain.seconds.toFixed(1)} s (mined in ${chain.minedSeconds.toFixed(1)} s)`);

    if (straight === undefined) throw new Error("the straight advance did not run");
    figures.push(
      figure("advance", `straight (devnode model, no chain) @ ${largest.toLocaleString("en-US")}`, "inputs/s", straight.rate, { name: "dispatcher in-process", value: advanceFloor }, {
        target: { text: ">= 2,000/s", met: (v: number) => v >= 2000 },
      }),
      figure("advance", `through InputBox @ ${profile.inspectStore.toLocaleString("en-US")}`, "inputs/s", profile.chainAdvance / chain.seconds, {
        name: "chain inclusion",
        value: profile.chainAdvance / chain.minedSeconds,
      }),
      figure("memory", `dapp peak RSS @ ${largest.toLocaleString("en-US")}`, "MiB", peakKiB / 1024, { name: "bare node", value: bareKiB / 1024 }, {
        target: { text: "<= 96 MiB", met: (v: number) => v <= 96 },
      }),
      figure("memory", "database bytes per attestation", "B", big.fileBytes / big.count, { name: "raw row bytes", value: big.rawRowBytes }),
    );
    notes.push(
      `Stores seeded: ${SEEDED_HOW}.`,
      "inspect: GET /inspect/<percent-encoded JSON> on the devnode of the whole stack (chain, devnode, dapp bundle, api), " +
        `${profile.inspectStore.toLocaleString("en-US")} attestations stored; attestation ids and owners (~10 attestations each) rotate through 1,000 and 256 samples.`,
      `The dapp runs as the image runs it: node ${[...bundle.nodeFlags, "dapp/main.js"].join(" ")} (a bundle built like npm run build; flags from Dockerfile.cartesi's NODE_OPTIONS).`,
      "scale, straight advance and memory: bench/direct-node.ts (the devnode's model, rollup server, query server and record, fed over IPC instead of by the chain) with the dapp bundle.",
      "HTTP client: bench/wire-client.ts (lean keep-alive HTTP/1.1, one connection per concurrent worker) unless a row says node:http; " +
        "every floor is measured with the same client as its figure.",
      "Ratios are value / floor; for rates a ratio below 1 is the share of the floor reached.",
    );
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

function isReady(value: unknown): value is { type: "ready"; port: number } {
  return typeof value === "object" && value !== null && "type" in value && value.type === "ready" && "port" in value;
}

async function rpc<T>(url: string, body: unknown): Promise<T> {
  loopbackTarget(url);
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return (await response.json()) as T;
}

interface RpcAnswer<T> {
  result?: T;
  error?: { message: string };
}

function addInputData(stack: TestStack, payload: Hex): Hex {
  return encodeFunctionData({ abi: inputBoxAbi, functionName: "addInput", args: [stack.addresses.dapp, payload] });
}

/** addInput from account #1 (unlocked on hardhat) until its receipt: the chain's share of a claim. */
async function chainRoundTrips(stack: TestStack, samples: number): Promise<LatencySummary> {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    const sent = await rpc<RpcAnswer<Hex>>(stack.urls.rpc, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: ACCOUNT_1, to: stack.addresses.inputBox, data: addInputData(stack, jsonToHex({ type: "health", params: {} })), gas: "0x100000" }],
    });
    if (sent.result === undefined) throw new Error(`chain floor: ${sent.error?.message ?? "no result"}`);
    for (;;) {
      const receipt = await rpc<RpcAnswer<{ status: Hex } | null>>(stack.urls.rpc, {
        jsonrpc: "2.0",
        id: 2,
        method: "eth_getTransactionReceipt",
        params: [sent.result],
      });
      if (receipt.result !== null && receipt.result !== undefined) break;
    }
    times.push(performance.now() - t);
  }
  return summarize(times, (performance.now() - started) / 1000);
}

async function inputCount(stack: TestStack): Promise<number> {
  return Number(
    await stack.client.publicClient.readContract({
      address: stack.addresses.inputBox,
      abi: inputBoxAbi,
      functionName: "getNumberOfInputs",
      args: [stack.addresses.dapp],
    }),
  );
}

/** An input's status as the node reads it: GraphQL on v1, JSON-RPC on v2. Throws while the node has not seen it. */
async function inputStatus(stack: TestStack, index: number): Promise<string> {
  if (stack.rollups === "v1") return (await stack.graphql<{ input: { status: string } }>("query($i: Int!) { input(index: $i) { status } }", { i: index })).input.status;
  const answer = await rpc<RpcAnswer<{ data: { status: string } }>>(`${stack.urls.node}/rpc`, {
    jsonrpc: "2.0",
    id: 1,
    method: "cartesi_getInput",
    params: { application: stack.addresses.dapp, input_index: `0x${index.toString(16)}` },
  });
  if (answer.result === undefined) throw new Error(answer.error?.message ?? "no result");
  return answer.result.data.status;
}

/**
 * `count` create_attestation inputs through the InputBox from the admin (account #0, unlocked on hardhat),
 * in JSON-RPC batches of eth_sendTransaction, then waits until the node has processed the last one.
 */
async function chainAdvance(stack: TestStack, count: number, firstItem: number): Promise<{ seconds: number; minedSeconds: number }> {
  const before = await inputCount(stack);
  const last = before + count - 1;
  const from = DEFAULTS.adminAddress;
  const batchSize = 50;
  const started = performance.now();
  const sending = startProgress({ label: "chain advance: inputs sent", total: count });
  for (let at = 0; at < count; at += batchSize) {
    const batch = [];
    for (let k = at; k < Math.min(count, at + batchSize); k++) {
      const item = firstItem + k;
      const payload = jsonToHex({ type: "create_attestation", params: attestationParams(item, fedOwner(item)) });
      batch.push({
        jsonrpc: "2.0",
        id: k,
        method: "eth_sendTransaction",
        params: [{ from, to: stack.addresses.inputBox, data: addInputData(stack, payload), gas: "0x100000" }],
      });
    }
    const answers = await rpc<RpcAnswer<Hex>[]>(stack.urls.rpc, batch);
    const failed = answers.find((a) => a.result === undefined);
    if (failed !== undefined) throw new Error(`chain advance: ${failed.error?.message ?? "no result"}`);
    sending.tick(answers.length);
  }
  sending.done();
  const minedSeconds = (performance.now() - started) / 1000;
  const processing = startProgress({ label: "chain advance: inputs processed", total: count });
  // A node that stops making progress fails the run instead of hanging it.
  let progress = { processed: -1, at: performance.now() };
  for (;;) {
    try {
      const status = await inputStatus(stack, last);
      // Not processed yet: UNPROCESSED on v1, NONE on v2.
      if (status !== "UNPROCESSED" && status !== "NONE") {
        if (status !== "ACCEPTED") throw new Error(`chain advance: input ${last} is ${status}`);
        break;
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("chain advance")) throw error;
      // Not seen by the node yet.
    }
    const health = (await (await fetch(`${stack.urls.node}/healthz`)).json()) as { processedInputCount?: number };
    const processed = health.processedInputCount ?? -1;
    if (processed > progress.processed && processed > before) processing.tick(processed - Math.max(before, progress.processed));
    if (processed !== progress.processed) progress = { processed, at: performance.now() };
    else if (performance.now() - progress.at > STALL_MS) {
      const tail = stack.logs("devnode").split("\n").slice(-15).join("\n");
      throw new Error(`chain advance: the node processed nothing for ${STALL_MS / 1000} s (at ${processed}); devnode log:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  processing.done();
  return { seconds: (performance.now() - started) / 1000, minedSeconds };
}

