/**
 * `npm run bench [-- --size full|ci] [--out DIR] [--riscv64]`: measures the stack on this machine (docs/performance.md)
 * and prints a table of figures, each a ratio to a floor measured in the same run; writes the table as
 * JSON and a chart of latency against stored attestations (SVG) into DIR (default bench-results/).
 *
 *   full (default): 10k / 100k / 1M attestations, 20,000 inputs per advance path
 *   ci:             1k–5k attestations and a few hundred requests (what CI runs, test/bench/bench.test.ts)
 *   --riscv64:      adds the dapp under riscv64 (qemu-user) beside the native dapp (needs root; toolkit/riscv64.ts)
 *   --machine:      adds the dapp's peak RSS in a 128 MiB, one-hart riscv64 machine (qemu-system) on the largest store
 *   --attestor:     only the claims proven by the TLS attestor, both modes, against a plain claim (bench/sections/attestor.ts)
 *   --rollups v2:   the whole-stack rows on a Rollups v2 stack (the devnode as a v2 node); v1 by default
 *   --quorum:       only the claims' delay and gas under the Authority and Quorums of 3 and 5 (bench/sections/quorum.ts)
 *   --receipts:     only the time to sign a receipt (bench/sections/receipts.ts)
 *   --nullifier:    only what a nullifier costs (bench/sections/nullifier.ts): the time it adds to a proven claim
 *                   at t = 2 and 3 of 3 (three attestor processes), and the dapp's verifyNullifier per attestation
 *                   in process; with --riscv64, that check under riscv64 too (qemu-user, needs root)
 *   --index:        only EAS's queries from the index (PGlite, PostgreSQL) against the same answers through inspect, and the indexer's lag, on v1 (bench/sections/index.ts): at 10,000 attestations (ci) or 10,000 and 1,000,000 (full)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { SIZES, type BenchSize } from "../bench/sizes.ts";
import type { BenchContext, SectionRows } from "../bench/sections/context.ts";
import { runScript, UsageError } from "./lib/cli.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

const argsSchema = z.object({
  size: z.enum(SIZES).default("full"),
  out: z.string().min(1).default(join(root, "bench-results")),
  rollups: z.enum(["v1", "v2"]).default("v1"),
  /** `--index` on one backend only (a million rows seed in minutes on each). */
  backend: z.enum(["pglite", "postgres"]).optional(),
});

export interface BenchArgs {
  size: BenchSize;
  out: string;
  riscv64: boolean;
  machine: boolean;
  attestor: boolean;
  /** Only the on-chain rows (bench/sections/onchain.ts), on Rollups v1 and then v2. */
  onchain: boolean;
  /** Only the consensus rows (bench/sections/quorum.ts). */
  quorum: boolean;
  /** Only the receipt rows (bench/sections/receipts.ts). */
  receipts: boolean;
  /** Only the nullifier rows (bench/sections/nullifier.ts); with `riscv64`, its riscv64 rows too. */
  nullifier: boolean;
  /** Only the index against inspect (bench/sections/index.ts). */
  index: boolean;
  rollups: "v1" | "v2";
  /** With --index: only this backend (default both). */
  backend?: "pglite" | "postgres";
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const raw: Record<string, string> = {};
  let riscv64 = false;
  let machine = false;
  let attestor = false;
  let onchain = false;
  let quorum = false;
  let receipts = false;
  let nullifier = false;
  let index = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--riscv64" || arg === "--machine" || arg === "--attestor" || arg === "--onchain" || arg === "--quorum" || arg === "--receipts" || arg === "--nullifier" || arg === "--index") {
      if (arg === "--riscv64") riscv64 = true;
      else if (arg === "--receipts") receipts = true;
      else if (arg === "--nullifier") nullifier = true;
      else if (arg === "--index") index = true;
      else if (arg === "--quorum") quorum = true;
      else if (arg === "--machine") machine = true;
      else if (arg === "--onchain") onchain = true;
      else attestor = true;
      continue;
    }
    const match = /^--(size|out|rollups|backend)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new UsageError(`unknown argument: ${arg} (known: --size ${SIZES.join("|")}, --out DIR, --rollups v1|v2, --riscv64, --machine, --attestor, --onchain, --quorum, --receipts, --nullifier, --index, --backend pglite|postgres)`);
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${match[1]} needs a value`);
    raw[match[1] as string] = value;
  }
  const parsed = argsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(`invalid arguments: ${parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  if (attestor && (riscv64 || machine || onchain || parsed.data.rollups !== "v1")) throw new UsageError("--attestor runs on its own: leave out --riscv64, --machine, --onchain and --rollups");
  if (onchain && (riscv64 || machine || parsed.data.rollups !== "v1")) throw new UsageError("--onchain runs on its own, on Rollups v1 and v2: leave out --riscv64, --machine and --rollups");
  if (quorum && (riscv64 || machine || onchain || attestor || parsed.data.rollups !== "v1")) throw new UsageError("--quorum runs on its own, on Rollups v2: leave out the other flags");
  if (receipts && (riscv64 || machine || onchain || attestor || quorum || parsed.data.rollups !== "v1")) throw new UsageError("--receipts runs on its own: leave out the other flags");
  if (nullifier && (machine || onchain || attestor || quorum || receipts || index || parsed.data.rollups !== "v1")) throw new UsageError("--nullifier runs on its own (with --riscv64 for its riscv64 rows): leave out the other flags");
  if (index && (riscv64 || machine || onchain || attestor || quorum || receipts || parsed.data.rollups !== "v1")) throw new UsageError("--index runs on its own, on Rollups v1: leave out the other flags");
  if (parsed.data.backend !== undefined && !index) throw new UsageError("--backend goes with --index");
  return { size: parsed.data.size, out: resolve(parsed.data.out), riscv64, machine, attestor, onchain, quorum, receipts, nullifier, index, rollups: parsed.data.rollups, ...(parsed.data.backend === undefined ? {} : { backend: parsed.data.backend }) };
}

const USAGE = `npm run bench [-- --size ${SIZES.join("|")}] [--out DIR] [--rollups v1|v2] [--riscv64] [--machine] | npm run bench -- --attestor [--size ${SIZES.join("|")}] | npm run bench -- --onchain | npm run bench -- --quorum | npm run bench -- --receipts | npm run bench -- --nullifier [--size ${SIZES.join("|")}] [--riscv64] | npm run bench -- --index [--size ${SIZES.join("|")}] [--backend pglite|postgres]   (--riscv64: the dapp under riscv64 beside the native one; --machine: in a 128 MiB riscv64 machine; both need root; --attestor: proven claims only; --onchain: the registry's gas beside EAS's, v1 and v2; --quorum: claims under the Authority and a Quorum of 3 and 5; --receipts: signing a receipt; --nullifier: the time a nullifier adds to a proven claim and the dapp's check of it (with --riscv64, under riscv64 too); --index: EAS's queries from the index on PGlite and PostgreSQL (or --backend's alone) against inspect, and the indexer's lag)`;

/**
 * A section run alone (`--onchain`, `--quorum`): the dapp bundle built once, a scratch directory, the
 * section's tables printed (one per part) and written as JSON to DIR/<file>.
 */
async function sectionAlone(args: BenchArgs, command: string, file: string, parts: (ctx: BenchContext) => AsyncGenerator<{ title: string; rows: SectionRows }>): Promise<number> {
  const { buildDappBundle } = await import("../bench/bundle.ts");
  const { PROFILES } = await import("../bench/profile.ts");
  const { formatTable } = await import("../bench/report.ts");
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(signal === "SIGINT" ? 130 : 143));
  const log = (line: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  const work = mkdtempSync(join(tmpdir(), "attestation-bench-section-"));
  const bundleDir = join(root, "bench-results", ".bundle", String(process.pid));
  try {
    const ctx = { root, work, profile: PROFILES[args.size], bundle: await buildDappBundle(root, bundleDir), log };
    const out: string[] = [command, ""];
    const all: unknown[] = [];
    for await (const { title, rows } of parts(ctx)) {
      all.push({ part: title, ...rows });
      out.push(title, "", formatTable(rows.figures), "", ...rows.notes.map((n) => `- ${n}`), "");
    }
    mkdirSync(args.out, { recursive: true });
    const jsonFile = join(args.out, file);
    writeFileSync(jsonFile, `${JSON.stringify(all, null, 2)}\n`);
    process.stdout.write([...out, `wrote ${jsonFile}`, ""].join("\n"));
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(bundleDir, { recursive: true, force: true });
  }
}

/** `--onchain`: the on-chain rows alone, on Rollups v1 and then v2, each against EAS on its own chain. */
async function onchainMain(args: BenchArgs): Promise<number> {
  const { onchainRows } = await import("../bench/sections/onchain.ts");
  return sectionAlone(args, "npm run bench -- --onchain", "bench-onchain.json", async function* (ctx) {
    for (const rollups of ["v1", "v2"] as const) yield { title: `Rollups ${rollups}`, rows: await onchainRows(ctx, rollups) };
  });
}

/** `--quorum`: the consensus rows alone (Rollups v2 stacks of their own). */
async function quorumMain(args: BenchArgs): Promise<number> {
  const { quorumRows } = await import("../bench/sections/quorum.ts");
  return sectionAlone(args, "npm run bench -- --quorum", "bench-quorum.json", async function* (ctx) {
    yield { title: "Rollups v2: the Authority and Quorums of 3 and 5", rows: await quorumRows(ctx) };
  });
}

/** `--index`: the index against inspect on whole stacks (v1) of its own: 10,000 attestations (ci), and 1,000,000 (full). */
async function indexMain(args: BenchArgs): Promise<number> {
  const { indexRows } = await import("../bench/sections/index.ts");
  const sizes = args.size === "ci" ? [10_000] : [10_000, 1_000_000];
  return sectionAlone(args, `npm run bench -- --index --size ${args.size}`, "bench-index.json", async function* (ctx) {
    const backends = args.backend === undefined ? undefined : [args.backend === "pglite" ? ("PGlite" as const) : ("PostgreSQL" as const)];
    yield { title: "Rollups v1: EAS's queries from the index against inspect", rows: await indexRows(ctx, sizes, backends) };
  });
}

/** `--receipts`: the time to sign a receipt, alone (no stack). */
async function receiptsMain(args: BenchArgs): Promise<number> {
  const { receiptRows } = await import("../bench/sections/receipts.ts");
  return sectionAlone(args, "npm run bench -- --receipts", "bench-receipts.json", async function* () {
    yield { title: "Receipts", rows: await receiptRows() };
  });
}

/** `--nullifier`: the claims with and without a nullifier (attestor processes of its own), then the dapp's check. */
async function nullifierMain(args: BenchArgs): Promise<number> {
  const { NULLIFIER_PROFILES, nullifierClaimRows, nullifierVerifyRows } = await import("../bench/sections/nullifier.ts");
  const profile = NULLIFIER_PROFILES[args.size];
  const riscv64 = args.riscv64 ? { cache: process.env.RISCV64_CACHE ?? (await import("../toolkit/riscv64.ts")).DEFAULT_RISCV64_CACHE } : undefined;
  const command = `npm run bench -- --nullifier --size ${args.size}${args.riscv64 ? " --riscv64" : ""}`;
  return sectionAlone(args, command, `bench-nullifier${args.size === "full" ? "" : `-${args.size}`}.json`, async function* (ctx) {
    yield { title: "Proven claims with and without a nullifier (reveal, the api's ProverPool)", rows: await nullifierClaimRows(ctx, profile) };
    yield { title: "The dapp's verifyNullifier per attestation", rows: await nullifierVerifyRows(ctx, profile, riscv64) };
  });
}

async function attestorMain(args: BenchArgs): Promise<number> {
  const { attestorRows } = await import("../bench/sections/attestor.ts");
  const { ATTESTOR_PROFILES } = await import("../bench/profile.ts");
  const { formatTable } = await import("../bench/report.ts");
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(signal === "SIGINT" ? 130 : 143));
  const log = (line: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  const { figures, notes } = await attestorRows({ ...ATTESTOR_PROFILES[args.size], log });
  mkdirSync(args.out, { recursive: true });
  const jsonFile = join(args.out, `bench-attestor${args.size === "full" ? "" : `-${args.size}`}.json`);
  writeFileSync(jsonFile, `${JSON.stringify({ size: args.size, figures, notes }, null, 2)}\n`);
  process.stdout.write([`npm run bench -- --attestor --size ${args.size}`, "", formatTable(figures), "", ...notes.map((n) => `- ${n}`), "", `wrote ${jsonFile}`, ""].join("\n"));
  return 0;
}

async function main(): Promise<number> {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.attestor) return attestorMain(args);
  if (args.onchain) return onchainMain(args);
  if (args.quorum) return quorumMain(args);
  if (args.receipts) return receiptsMain(args);
  if (args.nullifier) return nullifierMain(args);
  if (args.index) return indexMain(args);
  // The rig (chain, stacks, seeding) loads only once the arguments are known to be good.
  const { runBench } = await import("../bench/run.ts");
  const { formatTable, scaleChart } = await import("../bench/report.ts");
  // Ctrl-C or a kill: exit through process.exit, whose "exit" handlers kill every child's process group
  // (bench/procs.ts, the stack's Supervisor) and remove the work directory.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(signal === "SIGINT" ? 130 : 143));
  const command = `npm run bench -- --size ${args.size}${args.rollups === "v2" ? " --rollups v2" : ""}${args.riscv64 ? " --riscv64" : ""}${args.machine ? " --machine" : ""}`;
  const cache = process.env.RISCV64_CACHE ?? (await import("../toolkit/riscv64.ts")).DEFAULT_RISCV64_CACHE;
  const report = await runBench({
    size: args.size,
    rollups: args.rollups,
    ...(args.riscv64 ? { riscv64: { cache } } : {}),
    ...(args.machine ? { machine: { cache } } : {}),
    root,
    command,
    log: (line) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`),
  });
  mkdirSync(args.out, { recursive: true });
  const stem = `bench${args.size === "full" ? "" : `-${args.size}`}${args.rollups === "v2" ? "-v2" : ""}`;
  const jsonFile = join(args.out, `${stem}.json`);
  const chartFile = join(args.out, `${stem}-scale.svg`);
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(chartFile, scaleChart(report.scale, `attestations_by_owner (100 results) latency vs stored (${args.size})`));
  const m = report.machine;
  process.stdout.write(
    [
      `${command}  (${m.cpus} x ${m.cpuModel}, ${m.memoryMiB} MiB, node ${m.node})`,
      "",
      formatTable(report.figures),
      "",
      ...report.notes.map((n) => `- ${n}`),
      "",
      `wrote ${jsonFile} and ${chartFile}`,
      "",
    ].join("\n"),
  );
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) runScript(main, USAGE);
