/**
 * `npm run bench -- --attestor --size ci` end to end: the whole stack with three real attestors, claims
 * proven by the api and on the user's side in both modes with quorums of 1 and 3, and relayed claims
 * against plain ones from 64 clients. It asserts that the run finished and produced every
 * figure with a finite value and a floor; never how fast anything was.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Figure } from "../../bench/report.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const out = mkdtempSync(join(tmpdir(), "bench-attestor-"));

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

describe("npm run bench -- --attestor --size ci", () => {
  it("measures proven claims in both modes, on the api's and on the user's side, against plain claims", { timeout: 10 * 60_000 }, async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [...processArgs("scripts/bench.ts"), "--attestor", "--size", "ci", "--out", out], {
        cwd: PROJECT_ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      child.once("error", reject);
      child.once("exit", (exit) => resolve({ code: exit, output: text }));
    });
    expect(code, output).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "bench-attestor-ci.json"), "utf8")) as { figures: Figure[]; notes: string[] };
    expect(report.figures.map((f) => [f.name, f.unit])).toEqual([
      ["claim p50, reveal (TLS 1.3 keys shown to the attestor)", "ms"],
      ["claim p99, reveal", "ms"],
      ["claim p50, zk (ChaCha20 records proven with Stwo)", "ms"],
      ["claim p99, zk", "ms"],
      ["prover peak RSS after reveal claims", "MiB"],
      ["prover peak RSS after zk claims", "MiB"],
      ["attestor peak RSS (it verifies the zk proofs)", "MiB"],
      ["user-side claim with the prover process's start (one npm run prove), reveal, quorum 1", "ms"],
      ...[1, 3].flatMap((k) =>
        ["reveal", "zk"].flatMap((mode) => [
          [`user-side claim p50, ${mode}, quorum ${k} (provers running; wall time on the user's machine)`, "ms"],
          [`user-side prover peak RSS, ${mode}, quorum ${k} (largest of the user's provers)`, "MiB"],
          [`attestors' CPU per user-side claim, ${mode}, quorum ${k}`, "ms"],
        ]),
      ),
      ["relayed user-proven claims per second, 64 clients", "claims/s"],
      ["relayed user-proven claim p99, 64 clients", "ms"],
      ["api CPU per relayed claim (checks the signed claims, sends the input)", "ms"],
    ]);
    for (const f of report.figures) {
      expect([f.name, Number.isFinite(f.value) && f.value > 0, Number.isFinite(f.floor.value) && f.floor.value > 0]).toEqual([f.name, true, true]);
    }
    // The table is what a reader sees.
    expect(output).toMatch(/\| attestor \| claim p50, zk/);
  });
});
