/**
 * `npm run test:calibrate -- [--out FILE]`: a fixed workload timed on this machine, the unit `npm test`'s
 * budget is counted in (issue 51; docs/testing.md, "The budget"). `.ci/run` runs it before `npm test` and
 * `npm run test:times -- --calibration FILE` divides the suite's wall time by it: a slow machine is slow at
 * both and passes, a change that makes the suite slower fails. The work is what the suites spend their time
 * on, in small: starting Node processes, hashing and JSON in JavaScript, SQLite writes to a file. Run three
 * times; the median is kept.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { keccak256, toHex } from "viem";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run test:calibrate -- [--out FILE]    (times a fixed workload three times; prints the median, and writes it to FILE as JSON)";
const ROUNDS = 3;

function workload(dir: string): number {
  const started = performance.now();
  for (let i = 0; i < 8; i++) {
    const run = spawnSync(process.execPath, ["-e", "0"], { stdio: "ignore" });
    if (run.status !== 0) throw new Error(`node -e 0 exited with ${String(run.status)}`);
  }
  let digest = toHex(new Uint8Array(1024));
  for (let i = 0; i < 20_000; i++) digest = keccak256(`${digest}${JSON.stringify({ i, digest }).length.toString(16).padStart(2, "0")}`);
  const db = new Database(join(dir, "calibration.sqlite"));
  db.pragma("journal_mode = WAL");
  db.exec("create table t (id integer primary key, body text not null)");
  const insert = db.prepare("insert into t (body) values (?)");
  const batch = db.transaction((from: number) => {
    for (let k = 0; k < 100; k++) insert.run(`${digest}:${from + k}`);
  });
  for (let i = 0; i < 200; i++) batch(i * 100);
  db.close();
  return (performance.now() - started) / 1000;
}

async function main(): Promise<number> {
  const { options, positional } = parseArgs(process.argv.slice(2), ["--out"], []);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const out = options.get("--out");
  if (out === "") throw new UsageError("--out needs a file");
  const runs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), "test-calibrate-"));
    try {
      runs.push(workload(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const seconds = [...runs].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number;
  console.log(`calibration: ${seconds.toFixed(2)} s (median of ${runs.map((s) => s.toFixed(2)).join(", ")})`);
  if (out !== undefined) writeFileSync(out, `${JSON.stringify({ seconds, runs })}\n`);
  return 0;
}

runScript(main, USAGE);
