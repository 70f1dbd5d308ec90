/**
 * The attestor process's configuration (attestor/config.ts), validated once at start: a bad value stops
 * it with one line naming the variable, and nothing listens.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadAttestorConfig } from "../../attestor/config.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const dataDir = mkdtempSync(join(tmpdir(), "attestor-config-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("the attestor's configuration", () => {
  it("defaults to loopback port 8003 and makes its key once in DATA_DIR", () => {
    const first = loadAttestorConfig({ DATA_DIR: dataDir });
    expect([first.host, first.port, first.logLevel]).toEqual(["127.0.0.1", 8003, "warn"]);
    expect(first.privateKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(loadAttestorConfig({ DATA_DIR: dataDir }).privateKey).toBe(first.privateKey);
  });

  it.each([
    ["ATTESTOR_PORT", "eighty"],
    ["ATTESTOR_PRIVATE_KEY", "0x12"],
    ["LOG_LEVEL", "loud"],
  ])("a bad %s names the variable", (variable, value) => {
    expect(() => loadAttestorConfig({ DATA_DIR: dataDir, [variable]: value })).toThrow(new RegExp(`^invalid configuration: ${variable}: `));
  });

  it("the process stops with one line when a CA file cannot be read", () => {
    const run = spawnSync(process.execPath, processArgs("attestor/server.ts"), {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, ATTESTOR_PORT: "0", ATTESTOR_CA_FILES: "/no/such/ca.pem" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe("[attestor] invalid configuration: ATTESTOR_CA_FILES: cannot read /no/such/ca.pem");
  });
});
