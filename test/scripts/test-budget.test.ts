/**
 * `npm test`'s budget (issue 51; docs/testing.md, "The budget"): `npm run test:times -- --calibration` holds
 * a run's wall time, in units of `npm run test:calibrate`'s workload, to TEST_BUDGET_RATIO: within it, exit
 * 0; over it, exit 1 saying OVER (which fails .ci/run); a file that is not a calibration, exit 2. The report
 * is a vitest JSON report made here, with the wall time chosen on either side of the budget.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileWeightsSchema, TEST_BUDGET_RATIO } from "../../scripts/lib/test-budget.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const dir = mkdtempSync(join(tmpdir(), "test-budget-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A report of one file whose run took `wallSeconds`, and a calibration of 2 s. */
function files(wallSeconds: number): { report: string; calibration: string } {
  const report = join(dir, `report-${wallSeconds}.json`);
  const start = 1_700_000_000_000;
  writeFileSync(
    report,
    JSON.stringify({ startTime: start, success: true, testResults: [{ name: join(PROJECT_ROOT, "test/a.test.ts"), startTime: start, endTime: start + wallSeconds * 1000, status: "passed", assertionResults: [{ fullName: "a", status: "passed", duration: 5 }] }] }),
  );
  const calibration = join(dir, "calibration.json");
  writeFileSync(calibration, JSON.stringify({ seconds: 2, runs: [2, 2, 2] }));
  return { report, calibration };
}

function times(args: string[]): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [...processArgs("scripts/test-times.ts"), ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describe("npm test's budget", () => {
  it("a run within the budget passes, saying how many calibrations it took", { timeout: 60_000 }, () => {
    const { report, calibration } = files(2 * (TEST_BUDGET_RATIO - 1));
    const run = times([report, "--calibration", calibration]);
    expect(run.status, run.out).toBe(0);
    expect(run.out).toContain(`is ${TEST_BUDGET_RATIO - 1} calibrations of 2.00 s; at most ${TEST_BUDGET_RATIO}: within`);
  });

  it("a run over the budget fails with exit 1", { timeout: 60_000 }, () => {
    const { report, calibration } = files(2 * (TEST_BUDGET_RATIO + 1));
    const run = times([report, "--calibration", calibration]);
    expect(run.status, run.out).toBe(1);
    expect(run.out).toContain(": OVER");
  });

  it("--weights writes each file's seconds, which the sequencer reads (test/support/sequencer.ts)", { timeout: 60_000 }, () => {
    const { report } = files(123.45);
    const out = join(dir, "weights.json");
    const run = times([report, "--weights", out]);
    expect(run.status, run.out).toBe(0);
    const weights = fileWeightsSchema.parse(JSON.parse(readFileSync(out, "utf8")));
    expect(weights.seconds).toEqual({ "test/a.test.ts": 123.5 });
    expect(weights.measured).toMatch(/^a run of 2023-11-14/);
    // The table the repository runs by is one the schema reads.
    expect(Object.keys(fileWeightsSchema.parse(JSON.parse(readFileSync(join(PROJECT_ROOT, "test/support/file-weights.json"), "utf8"))).seconds).length).toBeGreaterThan(100);
  });

  it("a calibration file that is not one is refused, exit 2", { timeout: 60_000 }, () => {
    const { report } = files(10);
    const run = times([report, "--calibration", report]);
    expect(run.status, run.out).toBe(2);
    expect(run.out).toMatch(/not npm run test:calibrate's file/);
  });
});
