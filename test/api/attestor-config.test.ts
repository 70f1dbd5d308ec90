/**
 * The attestor process's configuration (attestor/config.ts), validated once at start: a bad value stops
 * it with one line naming the variable, and nothing listens.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadAttestorConfig } from "../../attestor/config.ts";
import type { KeyShare } from "../../common/nullifier.ts";
import { dealKey, shareFileOf } from "../../common/nullifier-dealer.ts";
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

  it("NULLIFIER_SHARE_FILE: a dealt share loads; a file that is not one, or whose secret is not its commitment's, names the file and why", () => {
    const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
    const good = join(dataDir, "share-2.json");
    writeFileSync(good, JSON.stringify(shareFileOf(dealt.shares[1] as KeyShare, dealt.keys)));
    expect(loadAttestorConfig({ DATA_DIR: dataDir }).nullifierShare).toBeUndefined();
    expect(loadAttestorConfig({ DATA_DIR: dataDir, NULLIFIER_SHARE_FILE: good }).nullifierShare).toEqual(dealt.shares[1]);
    const other = shareFileOf(dealt.shares[0] as KeyShare, dealt.keys);
    const cases: [string, string, RegExp][] = [
      ["missing.json", "", /missing\.json: ENOENT/],
      ["garbled.json", "{", /garbled\.json: not JSON$/],
      ["wrong.json", JSON.stringify({ ...other, commitment: shareFileOf(dealt.shares[2] as KeyShare, dealt.keys).commitment }), /wrong\.json: share 1's secret does not match its commitment$/],
      ["version.json", JSON.stringify({ ...other, version: 2 }), /version\.json: not a share file: version: /],
    ];
    for (const [name, text, message] of cases) {
      const file = join(dataDir, name);
      if (text !== "") writeFileSync(file, text);
      expect(() => loadAttestorConfig({ DATA_DIR: dataDir, NULLIFIER_SHARE_FILE: file })).toThrow(message);
      expect(() => loadAttestorConfig({ DATA_DIR: dataDir, NULLIFIER_SHARE_FILE: file })).toThrow(/^invalid configuration: NULLIFIER_SHARE_FILE: /);
    }
  });
});
