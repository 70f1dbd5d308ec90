/**
 * `npm run nullifier-keys` (scripts/nullifier-keys.ts, scripts/lib/nullifier-keys.ts): its arguments
 * refused with what is wrong, the files it writes (shares 0600, one per attestor; the public key set), and
 * a re-sharing from those files that keeps the nullifiers.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { blindNullifier, checkKeySet, evaluateNullifierShare, finishNullifier, type KeyShare, type NullifierKeys } from "../../common/nullifier.ts";
import { shareFromFile } from "../../common/nullifier-dealer.ts";
import { parseNullifierKeysArgs, runNullifierKeys } from "../../scripts/lib/nullifier-keys.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const root = mkdtempSync(join(tmpdir(), "nullifier-keys-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const subject = { provider: "bank.example", schemaId: `0x${"5c".repeat(32)}` as Hex, accountId: "acct-7731-0042" };

function readDir(dir: string): { keys: NullifierKeys; shares: KeyShare[] } {
  const verdict = checkKeySet(JSON.parse(readFileSync(join(dir, "commitments.json"), "utf8")));
  if (!verdict.ok) throw new Error(verdict.message);
  const shares = readdirSync(dir)
    .filter((f) => f.startsWith("share-"))
    .map((f) => shareFromFile(JSON.parse(readFileSync(join(dir, f), "utf8"))));
  return { keys: verdict.keys, shares };
}

function nullifierOf(shares: readonly KeyShare[], keys: NullifierKeys): Hex {
  const blinding = blindNullifier(subject);
  return finishNullifier(
    blinding,
    shares.map((s) => evaluateNullifierShare(s, subject, blinding)),
    keys,
  ).nullifier;
}

describe("npm run nullifier-keys: arguments", () => {
  const full = join(root, "full");
  writeFileSync(join(root, "x"), "");
  it.each<[string[], string | RegExp]>([
    [[], "expected a command: deal or reshare"],
    [["mint"], "unknown command mint: deal or reshare"],
    [["deal", "--attestors", "3", "--out", "d"], "--threshold is required"],
    [["deal", "--threshold", "two", "--attestors", "3", "--out", "d"], "--threshold: expected a positive integer, not two"],
    [["deal", "--threshold", "1", "--attestors", "3", "--out", "d"], "--threshold: at least 2 (with 1 one attestor alone computes every nullifier)"],
    [["deal", "--threshold", "4", "--attestors", "3", "--out", "d"], "--threshold 4 is more than the 3 attestors"],
    [["deal", "--threshold", "2", "--out", "d"], "deal takes one of --attestors N or --indices LIST"],
    [["deal", "--threshold", "2", "--attestors", "3", "--indices", "1,2", "--out", "d"], "deal takes one of --attestors N or --indices LIST"],
    [["deal", "--threshold", "2", "--indices", "1,1,2", "--out", "d"], "--indices: an index is named twice"],
    [["deal", "--threshold", "2", "--indices", "0,1", "--out", "d"], "--indices: an attestor index is from 1 to 65535"],
    [["deal", "--threshold", "2", "--indices", "1,b", "--out", "d"], /expected comma-separated attestor indices/],
    [["deal", "--threshold", "2", "--attestors", "300", "--out", "d"], "--attestors: from 1 to 255, not 300"],
    [["deal", "--threshold", "2", "--attestors", "3"], "--out DIR is required"],
    [["deal", "--threshold", "2", "--attestors", "3", "--out", root], `--out ${root} is not empty: shares are never overwritten`],
    [["reshare", "--threshold", "2", "--indices", "1,2", "--out", full], "reshare needs --from DIR: the old commitments.json and at least T old shares"],
    [["reshare", "--from", root, "--threshold", "2", "--out", full], "reshare needs --indices: the new set of attestors"],
    [["deal", "--threshold", "2", "--attestors", "3", "--out", full, "now"], "unexpected argument: now"],
    [["deal", "--bogus"], "unknown option --bogus"],
  ])("refuses %j", (args, says) => {
    expect(() => parseNullifierKeysArgs(args)).toThrow(says);
  });
});

describe("npm run nullifier-keys: deal, then reshare", () => {
  const dealt = join(root, "dealt");
  const added = join(root, "added");

  it("deals one share file per attestor (mode 0600) and the public key set, which the dapp's check accepts", () => {
    const { written, summary } = runNullifierKeys(parseNullifierKeysArgs(["deal", "--threshold", "2", "--attestors", "3", "--out", dealt]));
    expect(readdirSync(dealt).sort()).toEqual(["commitments.json", "share-1.json", "share-2.json", "share-3.json"]);
    expect(written).toHaveLength(4);
    for (const i of [1, 2, 3]) expect(statSync(join(dealt, `share-${i}.json`)).mode & 0o777).toBe(0o600);
    expect(summary).toMatch(/^dealt a nullifier key: any 2 of attestors 1, 2, 3; group key 0x[0-9a-f]{64}\n/);
    expect(readFileSync(join(dealt, "commitments.json"), "utf8")).not.toMatch(/secret/);
    const { keys, shares } = readDir(dealt);
    expect(nullifierOf(shares.slice(0, 2), keys)).toBe(nullifierOf(shares.slice(1), keys));
  });

  it("re-shares to one more attestor from the old files, keeping the group key and the nullifiers", () => {
    const before = readDir(dealt);
    const { groupKey } = runNullifierKeys(parseNullifierKeysArgs(["reshare", "--from", dealt, "--threshold", "2", "--indices", "1,2,3,4", "--out", added]));
    const after = readDir(added);
    expect(groupKey).toBe(JSON.parse(readFileSync(join(dealt, "commitments.json"), "utf8")).groupKey);
    expect(after.shares.map((s) => s.index)).toEqual([1, 2, 3, 4]);
    expect(nullifierOf(after.shares.slice(2), after.keys)).toBe(nullifierOf(before.shares.slice(0, 2), before.keys));
  });

  it("refuses to re-share from too few shares, or from a directory without a key set", () => {
    const few = join(root, "few");
    runNullifierKeys(parseNullifierKeysArgs(["deal", "--threshold", "3", "--attestors", "3", "--out", few]));
    rmSync(join(few, "share-3.json"));
    expect(() => runNullifierKeys(parseNullifierKeysArgs(["reshare", "--from", few, "--threshold", "2", "--indices", "1,2", "--out", join(root, "few-out")]))).toThrow(
      `--from ${few} holds 2 shares; re-sharing needs 3 of them`,
    );
    expect(() => runNullifierKeys(parseNullifierKeysArgs(["reshare", "--from", join(root, "none"), "--threshold", "2", "--indices", "1,2", "--out", join(root, "none-out")]))).toThrow(
      /cannot read .*none\/commitments\.json/,
    );
  });

  it("as a command: --help exits 0 with the usage, a bad argument exits 2 with one line", { timeout: 60_000 }, () => {
    const run = (args: string[]) => spawnSync(process.execPath, [...processArgs("scripts/nullifier-keys.ts"), ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });
    const help = run(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run nullifier-keys -- deal/);
    const bad = run(["deal", "--threshold", "1", "--attestors", "3", "--out", join(root, "never")]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^--threshold: at least 2/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
