/**
 * The long variants of the hostile-input, fault and restart suites (test/hostile/):
 *
 *   npm run soak -- [--count N] [--seconds S] [--seed N] [--only a,b,...]
 *
 * `--count` is the size of the run in inputs of the determinism log (CI runs 2,000); every fuzz family,
 * the crash stream and its kill cycles grow by the same factor (N / 2,000). `--seconds` is the length of
 * the sustained load (CI runs 20). `--seed` fixes fast-check's and the logs' seed to reproduce a failure.
 * `--only` picks suites by file name: dapp-fuzz, determinism, api-fuzz, stack-hostile, crash-restart,
 * dependencies, load. Prints the figures each suite reports ("[hostile] ...") at the end; the exit code
 * is vitest's.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startProgress } from "../toolkit/progress.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const CI_COUNT = 2000;
const USAGE = "npm run soak -- [--count N] [--seconds S] [--seed N] [--only dapp-fuzz,determinism,...]";

function fail(message: string): never {
  console.error(`${message}\nusage: ${USAGE}`);
  process.exit(2);
}

function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n <= 0) fail(`${name} needs a positive integer, got ${value ?? "nothing"}`);
  return n;
}

const args = process.argv.slice(2);
let count = 20_000;
let seconds = 120;
let seed: number | undefined;
let only: string[] | undefined;
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const value = (): string | undefined => args[++i];
  if (arg === "--count") count = positiveInt("--count", value());
  else if (arg === "--seconds") seconds = positiveInt("--seconds", value());
  else if (arg === "--seed") seed = positiveInt("--seed", value());
  else if (arg === "--only") only = (value() ?? "").split(",").filter((s) => s !== "");
  else if (arg === "--help" || arg === "-h") {
    console.log(`usage: ${USAGE}`);
    process.exit(0);
  } else fail(`unknown argument ${arg}`);
}

const suites = readdirSync(join(ROOT, "test", "hostile"))
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => f.replace(/\.test\.ts$/, ""));
const chosen = only ?? suites;
for (const name of chosen) if (!suites.includes(name)) fail(`no suite test/hostile/${name}.test.ts (there are: ${suites.join(", ")})`);

const scale = count / CI_COUNT;
console.log(`[soak] ${chosen.join(", ")}: scale ${scale} (count ${count}), load ${seconds} s${seed === undefined ? "" : `, seed ${seed}`}`);
const started = Date.now();
const child = spawn(
  process.execPath,
  [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", ...chosen.map((name) => `test/hostile/${name}.test.ts`)],
  {
    cwd: ROOT,
    env: {
      ...process.env,
      HOSTILE_SCALE: String(scale),
      HOSTILE_LOAD_SECONDS: String(seconds),
      ...(seed === undefined ? {} : { FUZZ_SEED: String(seed) }),
    },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
const figures: string[] = [];
// A suite (test file) is done when vitest prints its line: ✓ or ❯ and the file's path.
const suitesDone = startProgress({ label: "[soak] suites finished", total: chosen.length });
let pending = "";
child.stdout.on("data", (chunk: Buffer) => {
  process.stdout.write(chunk);
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const at = line.indexOf("[hostile] ");
    if (at !== -1) figures.push(line.slice(at + "[hostile] ".length));
    if (/^\s*\S*(✓|❯)\S*\s+test\/hostile\/\S+\.test\.ts/.test(line)) suitesDone.tick();
  }
});
// Stopping the soak stops vitest (which stops the stacks it started).
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  suitesDone.done();
  console.log(`\n[soak] figures (${((Date.now() - started) / 60_000).toFixed(1)} min):`);
  for (const line of figures) console.log(`  - ${line}`);
  process.exit(code ?? (signal === null ? 1 : 128));
});
