/**
 * `npm run test:times -- [FILE]`: where `npm test`'s time goes (issue 51; docs/testing.md, "Where the time
 * goes"), from the JSON report vitest writes when TEST_TIMES_FILE names a file (vitest.config.ts; .ci/run
 * sets it). Prints, as Markdown: the run's wall time, each file's time (its first test's start to its
 * last's end, hooks included) and test count, slowest first, and the ten slowest tests. With
 * `--calibration FILE` (`npm run test:calibrate`'s, from the same machine and run) it also holds the run to
 * its budget: the wall time divided by the calibration's must stay within TEST_BUDGET_RATIO, else exit 1.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";
import { TEST_BUDGET_RATIO, type FileWeights } from "./lib/test-budget.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const USAGE = "npm run test:times -- [FILE] [--calibration CALIBRATION] [--weights OUT]    (FILE: vitest's JSON report; default $TEST_TIMES_FILE or .test-times.json; CALIBRATION: npm run test:calibrate's file, to hold the run to its budget; OUT: where to write each file's seconds, the order vitest starts them in: test/support/file-weights.json)";



const report = z.object({
  startTime: z.number(),
  success: z.boolean(),
  testResults: z.array(
    z.object({
      name: z.string(),
      startTime: z.number(),
      endTime: z.number(),
      status: z.string(),
      assertionResults: z.array(z.object({ fullName: z.string(), status: z.string(), duration: z.number().nullable().optional() })),
    }),
  ),
});

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

function readCalibration(file: string): number {
  try {
    return z.object({ seconds: z.number().positive() }).parse(JSON.parse(readFileSync(file, "utf8"))).seconds;
  } catch (error) {
    throw new UsageError(`${file}: not npm run test:calibrate's file (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`);
  }
}

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--calibration", "--weights"], []);
  if (positional.length > 1) throw new UsageError(`one report at a time (got ${positional.join(" ")})`);
  const file = positional[0] ?? process.env.TEST_TIMES_FILE ?? ".test-times.json";
  const calibrationFile = options.get("--calibration");
  let parsed: z.infer<typeof report>;
  try {
    parsed = report.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch (error) {
    throw new UsageError(`${file}: not vitest's JSON report (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`);
  }
  const files = parsed.testResults.map((f) => ({ name: relative(ROOT, f.name), ms: f.endTime - f.startTime, tests: f.assertionResults.length, status: f.status }));
  const end = Math.max(...parsed.testResults.map((f) => f.endTime));
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  console.log(`npm test: ${seconds(end - parsed.startTime)} s wall, ${files.length} files, ${seconds(total)} s summed over the files (${parsed.success ? "passed" : "FAILED"})\n`);
  console.log("| file | s | tests | share |\n|---|---|---|---|");
  for (const f of files.sort((a, b) => b.ms - a.ms)) console.log(`| ${f.name}${f.status === "passed" ? "" : ` (${f.status})`} | ${seconds(f.ms)} | ${f.tests} | ${((100 * f.ms) / total).toFixed(1)}% |`);
  const weightsFile = options.get("--weights");
  if (weightsFile !== undefined) {
    const weights: FileWeights = {
      measured: `a run of ${new Date(parsed.startTime).toISOString().slice(0, 10)}: each file's seconds, from npm run test:times`,
      seconds: Object.fromEntries(files.map((f) => [f.name, Math.round(f.ms / 100) / 10])),
    };
    writeFileSync(weightsFile, `${JSON.stringify(weights, null, 1)}\n`);
  }
  const tests = parsed.testResults.flatMap((f) => f.assertionResults.map((a) => ({ file: relative(ROOT, f.name), name: a.fullName, ms: a.duration ?? 0 })));
  console.log("\nThe ten slowest tests:\n\n| test | file | s |\n|---|---|---|");
  for (const t of tests.sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`| ${t.name} | ${t.file} | ${seconds(t.ms)} |`);
  if (calibrationFile === undefined) return 0;
  const calibration = readCalibration(calibrationFile);
  const ratio = (end - parsed.startTime) / 1000 / calibration;
  const within = ratio <= TEST_BUDGET_RATIO;
  console.log(`\nbudget: ${seconds(end - parsed.startTime)} s is ${ratio.toFixed(0)} calibrations of ${calibration.toFixed(2)} s; at most ${TEST_BUDGET_RATIO}: ${within ? "within" : "OVER"}`);
  return within ? 0 : 1;
}

runScript(main, USAGE);
