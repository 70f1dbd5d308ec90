/**
 * vitest.config.ts's two projects as test/support/test-kinds.ts sorts the files: a suite that starts
 * processes, itself or through a helper of test/, never runs among the unit files (whose threads share
 * their modules); the unit files run only code of their own.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { processSuites, testFiles } from "../support/test-kinds.ts";

// The root from here, not from test/support/stack.ts: importing it would make this file a process suite.
const PROJECT_ROOT = resolve(import.meta.dirname, "../..");
const FILES = testFiles(PROJECT_ROOT, ["test", "common", "dapp", "api", "devnode"]);
const PROCESS = new Set(processSuites(PROJECT_ROOT, FILES));

describe("the test files' two kinds", () => {
  it("finds every test file, and both kinds", () => {
    expect(FILES).toContain("test/docs/test-kinds.test.ts");
    expect(FILES.every((file) => file.endsWith(".test.ts"))).toBe(true);
    expect(PROCESS.size).toBeGreaterThan(50);
    expect(FILES.length - PROCESS.size).toBeGreaterThan(50);
  });

  it("puts a suite that starts a stack itself or through a helper among the process suites", () => {
    // Itself (startStack), through test/api/e2e-suite.ts, and through the attestor helpers.
    for (const file of ["test/api/eas.e2e.test.ts", "test/api/e2e.test.ts", "test/api/e2e-quorum.test.ts", "test/attestor/statement.e2e.test.ts", "test/scripts/cli.test.ts"]) {
      expect(PROCESS.has(file), file).toBe(true);
    }
  });

  it("leaves no file that names child_process, a spawn or a stack among the unit files", () => {
    const unit = FILES.filter((file) => !PROCESS.has(file));
    expect(unit).toContain("common/ids.test.ts");
    const starting = unit.filter((file) => /node:child_process|startStack\(|processArgs\(/.test(readFileSync(join(PROJECT_ROOT, file), "utf8")));
    expect(starting).toEqual([]);
  });
});
