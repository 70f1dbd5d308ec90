/**
 * `npm run drill:stop` (bench/stop-drill.ts): the stop drill of test/devnode/stack-lifeline.e2e.test.ts, many times in a row, with
 * each run's figures (docs/operations.md, "Stopping"):
 *
 *   npm run drill:stop -- [--times N] [--way sigkill|term-then-kill|busy-term-then-kill|all] [--load PER_CORE] [-- npm start's flags]
 *
 * Each run starts `npm start` (default flags: --api-replicas 2) on ports of its own, loads the machine with
 * PER_CORE busy processes per core (default 8), ends the stack that way and checks, within 10 s of the last
 * signal, that no process of it is left and no port it claimed is bound. Exit code 1 when any run left
 * something.
 */
import { parseArgs } from "node:util";
import { stopDrill, type StopWay } from "../test/support/stop-drill.ts";
import { UsageError } from "../toolkit/usage-error.ts";

const USAGE = "npm run drill:stop -- [--times N] [--way sigkill|term-then-kill|busy-term-then-kill|all] [--load PER_CORE] [-- npm start's flags]";
const BOUND_MS = 10_000;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { times: { type: "string", default: "20" }, way: { type: "string", default: "all" }, load: { type: "string", default: "8" } },
    allowPositionals: true,
    strict: true,
  });
  const times = Number(values.times);
  const load = Number(values.load);
  if (!Number.isInteger(times) || times < 1) throw new UsageError(`--times: expected a positive integer, got ${values.times}`);
  if (!Number.isFinite(load) || load < 0) throw new UsageError(`--load: expected a number of busy processes per core, got ${values.load}`);
  const known: StopWay[] = ["sigkill", "term-then-kill", "busy-term-then-kill"];
  const ways = values.way === "all" ? known : known.filter((w) => w === values.way);
  if (ways.length === 0) throw new UsageError(`--way: expected ${known.join(", ")} or all, got ${values.way}`);
  const args = positionals.length > 0 ? positionals : ["--api-replicas", "2"];
  // Interrupted: the stack of the run under way is stopped as npm start is (it runs in a group of its own).
  let running: number | undefined;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      if (running !== undefined) process.kill(-running, "SIGTERM");
      process.exit(130);
    });
  }
  let failures = 0;
  for (const way of ways) {
    const cleanTimes: number[] = [];
    for (let run = 1; run <= times; run++) {
      const result = await stopDrill({ way, args, loadPerCore: load, boundMs: BOUND_MS, onGroup: (group) => (running = group) });
      const clean = result.leftover.length === 0 && result.boundPorts.length === 0 && result.cleanMs !== undefined;
      if (!clean) failures += 1;
      if (result.cleanMs !== undefined) cleanTimes.push(result.cleanMs);
      console.log(
        `${way} run ${run}/${times}: ${result.processes} processes, ${result.runnable} runnable, ` +
          (clean ? `nothing left ${result.cleanMs} ms after the last signal` : `LEFT: ${result.leftover.join("; ")}`),
      );
    }
    const sorted = cleanTimes.sort((a, b) => a - b);
    console.log(`${way}: ${sorted.length}/${times} clean within ${BOUND_MS / 1000} s; ms to clean: min ${sorted[0] ?? "-"}, median ${sorted[Math.floor(sorted.length / 2)] ?? "-"}, max ${sorted[sorted.length - 1] ?? "-"}`);
  }
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof UsageError ? `${error.message}\nusage: ${USAGE}` : error instanceof Error ? error.message : String(error));
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
