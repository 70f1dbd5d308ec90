/**
 * `npm run bench -- --nullifier [--riscv64]` (issue 52, docs/nullifiers.md): what a nullifier costs.
 * - The prover's side: a proven claim (reveal) through t real attestor processes (attestor/server.ts), each
 *   holding its share of a key dealt t of 3, by the api's ProverPool, with and without the request's
 *   nullifier (and, with it, the prover's `finishNullifier`), at t = 2 and t = 3. With and without
 *   alternate claim by claim, so a swing of the machine falls on both.
 * - The dapp's side: `verifyNullifier` per attestation at t = 2 and 3, in this process (floor: one
 *   multiplication of a variable point, the unit its cost is made of), and with `--riscv64` the same
 *   check bundled with esbuild and run under riscv64 (qemu-user, toolkit/riscv64.ts's root file system)
 *   against the same bundle run natively, in alternating rounds.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { ProverPool } from "../../api/provider/attestor.ts";
import { blindHex, blindNullifier, evaluateNullifierShare, finishNullifier, verifyNullifier, type PublishedNullifier } from "../../common/nullifier.ts";
import { dealKey, shareFileOf, type DealtKey } from "../../common/nullifier-dealer.ts";
import { GENERATOR, randomScalar } from "../../common/oprf-ristretto255.ts";
import { contextNullifierBinding } from "../../common/tls-claim.ts";
import { startAttestorProcess } from "../../test/support/attestor-process.ts";
import { startProviderServer } from "../../test/support/provider-server.ts";
import { processArgs } from "../../test/support/stack.ts";
import { createTestPki } from "../../test/support/tls.ts";
import { imageNodeFlags } from "../../toolkit/dapp-build.ts";
import type { BenchSize } from "../sizes.ts";
import { figure, type Figure } from "../report.ts";
import { summarize, type LatencySummary } from "../stats.ts";
import type { BenchContext, SectionRows } from "./context.ts";

export interface NullifierProfile {
  /** Timed claims per row (per t, with and without each). */
  claims: number;
  /** Untimed claims of each kind per t first: the provers' and attestors' JIT, TLS session caches. */
  warmup: number;
  /** Timed `verifyNullifier` calls per t, in process and natively in the bundle. */
  verifies: number;
  /** Timed calls per t under riscv64, split over `rounds` runs alternating with the native bundle's. */
  riscv64Verifies: number;
  rounds: number;
}

export const NULLIFIER_PROFILES: Record<BenchSize, NullifierProfile> = {
  ci: { claims: 20, warmup: 3, verifies: 100, riscv64Verifies: 20, rounds: 2 },
  full: { claims: 50, warmup: 5, verifies: 200, riscv64Verifies: 45, rounds: 3 },
};

const THRESHOLDS = [2, 3] as const;
const INDICES = [1, 2, 3];
const ACCOUNT_FIELD = "data.account";
const ANSWER = { data: { balance: 4321.987, account: "ACC-0042" } };
const definition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const schemaId = `0x${"ab".repeat(32)}` as Hex;
/** The api's default ATTESTOR_PROVERS (api/config.ts): a claim through 3 attestors waits for one of 2 provers. */
const API_PROVERS = 2;
/** Distinct published nullifiers cycled through by the verify loops: no run re-checks one set of points only. */
const DISTINCT_PARTS = 16;
/** Untimed calls per t at the start of each riscv64 run: its first calls run code V8 has not compiled yet. */
const RISCV64_WARMUP = 5;

/** CPU time a process has used so far (utime + stime), in ms: 0 once it has gone. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

interface ClaimRow {
  threshold: number;
  without: LatencySummary;
  with: LatencySummary;
  finish: LatencySummary;
  /** The three attestors' CPU per claim, summed. */
  attestorsCpuWithout: number;
  attestorsCpuWith: number;
}

/** Three attestors holding the shares of `dealt`, the pool proving through the first t; both stopped after `use`. */
async function withAttestors<T>(dir: string, caFile: string, dealt: DealtKey, use: (pool: ProverPool, urls: string[], pids: (number | undefined)[]) => Promise<T>): Promise<T> {
  const children: ChildProcess[] = [];
  let pool: ProverPool | undefined;
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    const started = await Promise.allSettled(
      dealt.shares.map((share, k) => {
        const file = join(dir, `share-t${dealt.keys.threshold}-${share.index}.json`);
        writeFileSync(file, JSON.stringify(shareFileOf(share, dealt.keys)), { mode: 0o600 });
        const port = ports[k] as number;
        return startAttestorProcess(processArgs("attestor/server.ts"), { ATTESTOR_PORT: String(port), ATTESTOR_CA_FILES: caFile, DATA_DIR: dir, ATTESTOR_KEY_FILE: `key-${port}`, NULLIFIER_SHARE_FILE: file });
      }),
    );
    // Every attestor that did start is stopped below, even when another one failed to.
    for (const outcome of started) {
      if (outcome.status !== "fulfilled") continue;
      children.push(outcome.value.child);
      // Its stdout stays read by startAttestorProcess; its stderr nobody reads: drained, so a full pipe never stalls it.
      outcome.value.child.stderr?.resume();
    }
    const failed = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    if (failed !== undefined) {
      const reason: unknown = failed.reason;
      throw reason instanceof Error ? reason : new Error(String(reason));
    }
    const urls = ports.map((port) => `ws://127.0.0.1:${port}/ws`);
    pool = new ProverPool({ urls, mode: "reveal", provers: API_PROVERS, timeoutMs: 60_000, caFiles: caFile, dataDir: dir });
    return await use(
      pool,
      urls,
      children.map((c) => c.pid),
    );
  } finally {
    await pool?.close();
    await Promise.all(children.map(stopChild));
  }
}

async function claimRow(dir: string, caFile: string, url: string, threshold: number, profile: NullifierProfile, log: (line: string) => void): Promise<ClaimRow> {
  const dealt = dealKey({ threshold, indices: INDICES });
  return withAttestors(dir, caFile, dealt, async (pool, urls, pids) => {
    const through = urls.slice(0, threshold);
    const request = { url, method: "GET" as const, headers: {}, field: "data.balance", definition, owner, schemaId, mode: "reveal" as const };
    const attestorsCpu = (): number => pids.reduce<number>((sum, pid) => sum + cpuMs(pid), 0);
    const plain = async (): Promise<void> => {
      await pool.prove(request, through);
    };
    /** One claim with a fresh blind, finished as the prover finishes it; answers finishNullifier's own time. */
    const withNullifier = async (): Promise<{ finishMs: number; published: PublishedNullifier }> => {
      const blind = randomScalar();
      const proven = await pool.prove({ ...request, nullifier: { blind: blindHex(blind), accountField: ACCOUNT_FIELD } }, through);
      const binding = contextNullifierBinding(proven[0]?.claim.context ?? "{}");
      if (!binding.ok) throw new Error(`the claim binds no nullifier: ${binding.reason}`);
      const evaluations = proven.flatMap((p) => (p.nullifier === undefined ? [] : [p.nullifier]));
      const started = performance.now();
      const published = finishNullifier({ blind, blinded: binding.value.blinded, blindCommitment: binding.value.blindCommitment }, evaluations, dealt.keys);
      return { finishMs: performance.now() - started, published };
    };
    for (let i = 0; i < profile.warmup; i++) {
      await plain();
      await withNullifier();
    }
    const without: number[] = [];
    const withTimes: number[] = [];
    const finish: number[] = [];
    let cpuWithout = 0;
    let cpuWith = 0;
    let nullifier: Hex | undefined;
    const one = async (kind: "with" | "without"): Promise<void> => {
      const cpuBefore = attestorsCpu();
      const started = performance.now();
      if (kind === "without") {
        await plain();
        without.push(performance.now() - started);
        cpuWithout += attestorsCpu() - cpuBefore;
        return;
      }
      const { finishMs, published } = await withNullifier();
      withTimes.push(performance.now() - started);
      cpuWith += attestorsCpu() - cpuBefore;
      finish.push(finishMs);
      // Untimed: a bench that measured claims whose nullifier the dapp refuses would measure nothing.
      const verdict = verifyNullifier(published, dealt.keys);
      if (!verdict.ok) throw new Error(`t = ${threshold}: the dapp refuses the nullifier: ${verdict.message}`);
      if (nullifier !== undefined && verdict.nullifier !== nullifier) throw new Error(`t = ${threshold}: one account gave two nullifiers`);
      nullifier = verdict.nullifier;
    };
    // ABBA order: neither kind always follows the other (a prover just freed, a session just cached).
    for (let i = 0; i < profile.claims; i++) {
      for (const kind of i % 2 === 0 ? (["without", "with"] as const) : (["with", "without"] as const)) await one(kind);
    }
    const row = {
      threshold,
      without: summarize(without, 0),
      with: summarize(withTimes, 0),
      finish: summarize(finish, 0),
      attestorsCpuWithout: cpuWithout / profile.claims,
      attestorsCpuWith: cpuWith / profile.claims,
    };
    log(`t = ${threshold} of 3: claim p50 ${row.without.p50.toFixed(0)} ms without, ${row.with.p50.toFixed(0)} ms with a nullifier (finishNullifier ${row.finish.p50.toFixed(1)} ms)`);
    return row;
  });
}

/** The claims' part: one key dealt per t, three attestors each time. */
export async function nullifierClaimRows(ctx: BenchContext, profile: NullifierProfile): Promise<SectionRows> {
  const pki = createTestPki();
  const provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/account", { kind: "json", value: ANSWER });
  const dir = mkdtempSync(join(ctx.work, "nullifier-claims-"));
  const loadBefore = loadavg()[0] ?? Number.NaN;
  try {
    const rows: ClaimRow[] = [];
    for (const threshold of THRESHOLDS) rows.push(await claimRow(dir, pki.ca.certPath, provider.url("/account"), threshold, profile, ctx.log));
    const figures = rows.flatMap((r): Figure[] => {
      const t = `t = ${r.threshold} of 3`;
      const p50 = { name: `claim p50 without a nullifier, ${t}, same run`, value: r.without.p50 };
      const p99 = { name: `claim p99 without a nullifier, ${t}, same run`, value: r.without.p99 };
      return [
        figure("nullifier", `claim p50 without a nullifier, reveal, ${t}`, "ms", r.without.p50, p50),
        figure("nullifier", `claim p99 without a nullifier, reveal, ${t}`, "ms", r.without.p99, p99),
        figure("nullifier", `claim p50 with a nullifier (and finishNullifier), reveal, ${t}`, "ms", r.with.p50, p50),
        figure("nullifier", `claim p99 with a nullifier (and finishNullifier), reveal, ${t}`, "ms", r.with.p99, p99),
        figure("nullifier", `time a nullifier adds, p50, ${t}`, "ms", r.with.p50 - r.without.p50, p50),
        figure("nullifier", `time a nullifier adds, p99, ${t}`, "ms", r.with.p99 - r.without.p99, p99),
        figure("nullifier", `of which the prover's finishNullifier, p50, ${t}`, "ms", r.finish.p50, p50),
        figure("nullifier", `attestors' CPU per claim with a nullifier, ${t}`, "ms", r.attestorsCpuWith, { name: `without, ${t}, same run`, value: r.attestorsCpuWithout }),
      ];
    });
    const notes = [
      `${profile.claims} claims per row after ${profile.warmup} untimed of each kind, with and without a nullifier alternating (ABBA); reveal mode; the api's ProverPool with its default ${API_PROVERS} prover processes, so at t = 3 one attestor's proof waits for a free prover; a local HTTPS provider (TLS 1.3, a throwaway CA) answering ${JSON.stringify(ANSWER)}.`,
      `Three attestor processes (attestor/server.ts) each with its share file of a key dealt t of 3 (dealKey), restarted for each t; "with" is pool.prove with a fresh blind (the desk's blind and evaluation round trips, the attestor's share evaluation) plus finishNullifier; every nullifier was checked with verifyNullifier after its timing (one account, one nullifier).`,
      `Load average (1 min) ${loadBefore.toFixed(2)} when this part started, ${(loadavg()[0] ?? Number.NaN).toFixed(2)} when it ended, on ${availableParallelism()} cores.`,
      `p99 is nearest-rank over ${profile.claims} claims: at this count it is the slowest claim or nearly; the difference of two p99s is the noisier figure. Attestors' CPU is utime + stime of all three from /proc, in 10 ms ticks, per claim.`,
    ];
    return { figures, notes };
  } finally {
    await provider.close();
    pki.cleanup();
  }
}

/** Published nullifiers at threshold t, made in process with the dealt shares: what a claim carries. */
function publishedSets(): { threshold: number; dealt: DealtKey; parts: PublishedNullifier[] }[] {
  return THRESHOLDS.map((threshold) => {
    const dealt = dealKey({ threshold, indices: INDICES });
    const parts = Array.from({ length: DISTINCT_PARTS }, (_, k) => {
      const subject = { provider: "https", schemaId, accountId: `ACC-${String(k).padStart(4, "0")}` };
      const blinding = blindNullifier(subject);
      const evaluations = dealt.shares.slice(0, threshold).map((share) => evaluateNullifierShare(share, subject, blinding));
      return finishNullifier(blinding, evaluations, dealt.keys);
    });
    return { threshold, dealt, parts };
  });
}

/**
 * The check as a program of its own, bundled: it reads the key sets and parts from a file, checks each
 * key set as the dapp does at registration, then times `verifyNullifier` alone, call by call and the
 * thresholds interleaved as in process, so neither node's start (seconds under qemu) nor the JIT's warm-up
 * is counted.
 */
const VERIFY_PROGRAM = `
import { readFileSync } from "node:fs";
import { checkKeySet, verifyNullifier } from "./common/nullifier.ts";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sets = input.sets.map((set) => {
  const checked = checkKeySet(set.keySet);
  if (!checked.ok) throw new Error(checked.message);
  return { threshold: set.threshold, parts: set.parts, keys: checked.keys, times: [] };
});
for (let i = 0; i < input.warmup + input.count; i++) {
  for (const set of sets) {
    const started = performance.now();
    const verdict = verifyNullifier(set.parts[i % set.parts.length], set.keys);
    const ms = performance.now() - started;
    if (!verdict.ok) throw new Error(verdict.message);
    if (i >= input.warmup) set.times.push(ms);
  }
}
const results = sets.map(({ threshold, times }) => ({ threshold, times }));
process.stdout.write(JSON.stringify({ arch: process.arch, node: process.version, results }));
`;

const programOutput = z.object({ arch: z.string(), node: z.string(), results: z.array(z.object({ threshold: z.number(), times: z.array(z.number()) })) });
type ProgramOutput = z.infer<typeof programOutput>;

export interface Riscv64Verify {
  cache: string;
}

/** Runs the bundled check under `argv` (node natively, or node in the riscv64 chroot). */
async function runProgram(argv: readonly string[], input: string): Promise<ProgramOutput> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error("no program to run");
  const { stdout } = await promisify(execFile)(file, [...args, input], { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }, maxBuffer: 16 << 20, timeout: 1_800_000 });
  return programOutput.parse(JSON.parse(stdout));
}

/** The dapp's part: verifyNullifier in process, then (with `riscv64`) the bundled check natively and under riscv64. */
export async function nullifierVerifyRows(ctx: BenchContext, profile: NullifierProfile, riscv64?: Riscv64Verify): Promise<SectionRows> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const sets = publishedSets();
  // In process, interleaved call by call with the floor: one multiplication of a variable point by a scalar.
  const point = GENERATOR.multiply(randomScalar());
  const samples = new Map<string, number[]>();
  const times = (key: string): number[] => {
    const list = samples.get(key) ?? [];
    samples.set(key, list);
    return list;
  };
  const warm = Math.max(10, Math.floor(profile.verifies / 10));
  for (let i = 0; i < warm + profile.verifies; i++) {
    let started = performance.now();
    point.multiply(randomScalar());
    if (i >= warm) times("mult").push(performance.now() - started);
    for (const set of sets) {
      started = performance.now();
      const verdict = verifyNullifier(set.parts[i % set.parts.length] as PublishedNullifier, set.dealt.keys);
      if (i >= warm) times(String(set.threshold)).push(performance.now() - started);
      if (!verdict.ok) throw new Error(`t = ${set.threshold}: ${verdict.message}`);
    }
  }
  const mult = summarize(times("mult"), 0);
  const multFloor = { name: "one multiplication of a variable point, in process, same run", value: mult.p50 };
  const inProcess = new Map(sets.map((s) => [s.threshold, summarize(times(String(s.threshold)), 0)]));
  const figures: Figure[] = sets.flatMap((s) => {
    const v = inProcess.get(s.threshold) as LatencySummary;
    ctx.log(`verifyNullifier t = ${s.threshold}, x86-64 in process: p50 ${v.p50.toFixed(1)} ms, p99 ${v.p99.toFixed(1)} ms (one multiplication ${mult.p50.toFixed(2)} ms)`);
    return [
      figure("nullifier", `verifyNullifier p50, t = ${s.threshold}, x86-64 in process`, "ms", v.p50, multFloor),
      figure("nullifier", `verifyNullifier p99, t = ${s.threshold}, x86-64 in process`, "ms", v.p99, { ...multFloor, name: `${multFloor.name} (its p50)` }),
    ];
  });
  const notes = [
    `verifyNullifier in this process (node ${process.version}, x86-64, @noble/curves): ${profile.verifies} calls per t after ${warm} to warm up, cycling over ${DISTINCT_PARTS} claims' published parts per t (each of its own account and blind), interleaved call by call with one multiplication of a variable point (the floor; p50 ${mult.p50.toFixed(2)} ms, p99 ${mult.p99.toFixed(2)} ms). The dapp's check is t + 1 DLEQ verifications and one combination of t terms.`,
  ];
  const load = (): string => `load average (1 min) ${loadBefore.toFixed(2)} when this part started, ${(loadavg()[0] ?? Number.NaN).toFixed(2)} when it ended`;
  if (riscv64 === undefined) {
    notes.push(`${load()}.`);
    notes.push("riscv64 rows: add --riscv64 (root; the root file system of toolkit/riscv64.ts, built into RISCV64_CACHE the first time).");
    return { figures, notes };
  }

  const { ensureRootfs, mountAll, prepareHost } = await import("../../toolkit/riscv64.ts");
  // The chroot sees the host's /tmp at /tmp (mountAll): the bundle and its input must be there, same path inside and out.
  if (!ctx.work.startsWith("/tmp/")) throw new Error(`the riscv64 rows need the bench's work directory under /tmp (it is ${ctx.work}; unset TMPDIR)`);
  const dir = join(ctx.work, "nullifier-verify");
  mkdirSync(dir, { recursive: true });
  const program = join(dir, "verify.mjs");
  await build({
    stdin: { contents: VERIFY_PROGRAM, resolveDir: ctx.root, sourcefile: "nullifier-verify.mjs", loader: "js" },
    outfile: program,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    legalComments: "none",
    logLevel: "warning",
  });
  await prepareHost();
  const rootfs = await ensureRootfs(riscv64.cache);
  const flags = imageNodeFlags(ctx.root);
  const native = [process.execPath, ...flags, program];
  const riscv = ["chroot", rootfs.dir, "/usr/bin/node", ...flags, program];
  const perRound = (total: number): number => Math.max(1, Math.ceil(total / profile.rounds));
  const inputOf = (count: number, warmup: number): string => {
    const file = join(dir, `input-${count}.json`);
    const body = { warmup, count, sets: sets.map((s) => ({ threshold: s.threshold, keySet: s.dealt.keySet, parts: s.parts })) };
    writeFileSync(file, JSON.stringify(body));
    return file;
  };
  const nativeInput = inputOf(perRound(profile.verifies), Math.max(10, Math.floor(perRound(profile.verifies) / 10)));
  const riscvInput = inputOf(perRound(profile.riscv64Verifies), RISCV64_WARMUP);
  const merged = { native: new Map<number, number[]>(), riscv64: new Map<number, number[]>() };
  const add = (into: Map<number, number[]>, out: ProgramOutput): void => {
    for (const r of out.results) into.set(r.threshold, [...(into.get(r.threshold) ?? []), ...r.times]);
  };
  let riscvNode = "";
  const unmount = mountAll(rootfs);
  try {
    // Rounds alternate the native and the riscv64 run, so a swing of the machine falls on both.
    for (let round = 0; round < profile.rounds; round++) {
      add(merged.native, await runProgram(native, nativeInput));
      const started = performance.now();
      const out = await runProgram(riscv, riscvInput);
      if (out.arch !== "riscv64") throw new Error(`the chroot's node runs as ${out.arch}, not riscv64`);
      riscvNode = out.node;
      add(merged.riscv64, out);
      ctx.log(`riscv64 round ${round + 1} of ${profile.rounds}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  } finally {
    unmount();
  }
  for (const s of sets) {
    const n = summarize(merged.native.get(s.threshold) ?? [], 0);
    const r = summarize(merged.riscv64.get(s.threshold) ?? [], 0);
    ctx.log(`verifyNullifier t = ${s.threshold}: bundle natively p50 ${n.p50.toFixed(1)} ms, under riscv64 p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`);
    const inProc = { name: `verifyNullifier in process, t = ${s.threshold}, same run`, value: (inProcess.get(s.threshold) as LatencySummary).p50 };
    figures.push(
      figure("nullifier", `verifyNullifier p50, t = ${s.threshold}, the bundle natively (image's NODE_OPTIONS)`, "ms", n.p50, inProc),
      figure("riscv64", `verifyNullifier p50, t = ${s.threshold}, riscv64 (qemu-user)`, "ms", r.p50, { name: `the bundle natively, t = ${s.threshold}, same run`, value: n.p50 }),
      figure("riscv64", `verifyNullifier p99, t = ${s.threshold}, riscv64 (qemu-user)`, "ms", r.p99, { name: `the bundle natively p99, t = ${s.threshold}, same run`, value: n.p99 }),
    );
  }
  notes.push(
    `riscv64: the check bundled with esbuild (common/nullifier.ts and @noble/curves, nothing else) and run by node with the image's NODE_OPTIONS (${flags.join(" ")}): natively (${perRound(profile.verifies) * profile.rounds} calls per t) and in the riscv64 root file system under qemu-user (node ${riscvNode} there; ${perRound(profile.riscv64Verifies) * profile.rounds} calls per t after ${RISCV64_WARMUP} to warm up in each run), ${profile.rounds} rounds alternating. qemu-user translates riscv64 code to x86-64 while the Cartesi machine interprets it, so the machine's absolute times are larger; the ratio is what riscv64 costs this check.`,
    `${load()}.`,
  );
  return { figures, notes };
}
