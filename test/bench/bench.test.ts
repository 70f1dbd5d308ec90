/**
 * `npm run bench -- --size ci` end to end, as CI runs it: the whole bench (seeding, straight rig, the
 * whole stack with the api) on small stores. It asserts only that the run finished and produced every
 * figure with a finite value, a floor and a chart; never how fast anything was (timings are the bench's
 * output, not its pass condition).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectedFigures } from "../../bench/run.ts";
import type { BenchReport } from "../../bench/report.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const out = mkdtempSync(join(tmpdir(), "bench-ci-"));

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

function runBenchCi(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...processArgs("scripts/bench.ts"), "--size", "ci", "--out", out], {
      cwd: PROJECT_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("npm run bench -- --size ci", () => {
  it("runs end to end and produces every figure, the JSON and the chart", { timeout: 15 * 60_000 }, async () => {
    const { code, output } = await runBenchCi();
    expect(code, output).toBe(0);

    const jsonFile = join(out, "bench-ci.json");
    const chartFile = join(out, "bench-ci-scale.svg");
    expect(existsSync(jsonFile), output).toBe(true);
    const report = JSON.parse(readFileSync(jsonFile, "utf8")) as BenchReport;
    expect(report.size).toBe("ci");

    const names = report.figures.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(expectedFigures("ci")));
    for (const f of report.figures) {
      expect(Number.isFinite(f.value) && f.value > 0, `${f.name}: value ${f.value}`).toBe(true);
      expect(Number.isFinite(f.floor.value) && f.floor.value > 0, `${f.name}: floor ${f.floor.value}`).toBe(true);
      expect(Number.isFinite(f.ratio), `${f.name}: ratio ${f.ratio}`).toBe(true);
      if (f.target !== undefined) expect(typeof f.target.met).toBe("boolean");
    }
    expect(report.seeding.length).toBeGreaterThan(0);
    expect(report.seeding.every((s) => s.how.includes("one transaction"))).toBe(true);
    expect(report.scale).toHaveLength(3);

    const svg = readFileSync(chartFile, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("attestations stored");
    // The table went to stdout with every figure in it.
    for (const name of expectedFigures("ci")) expect(output).toContain(name);
  });
});
