/**
 * `npm start`'s own dealer (scripts/lib/stack-nullifier-keys.ts) on a real DATA_DIR: a key 2 of n dealt
 * once for two attestors or more, kept across starts, re-shared under the same group key (so every bound
 * nullifier keeps matching) when the number of attestors changes, with the old shares erased; nothing for
 * one attestor.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { shareFromFile } from "../../common/nullifier-dealer.ts";
import { checkKeySet, type NullifierKeySetJson } from "../../common/nullifier.ts";
import { ensureLocalNullifierKeys, localNullifierKeysDir, localShareFile } from "../../scripts/lib/stack-nullifier-keys.ts";

const dirs: string[] = [];
const dataDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "stack-nullifier-keys-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const keySetIn = (dir: string): NullifierKeySetJson => JSON.parse(readFileSync(join(localNullifierKeysDir(dir), "commitments.json"), "utf8")) as NullifierKeySetJson;

describe("the local stack's nullifier key", () => {
  it("is dealt 2 of n once, each share checked against its commitment and readable by its owner alone", () => {
    const dir = dataDir();
    expect(ensureLocalNullifierKeys(dir, 3)).toBe("dealt");
    const keySet = keySetIn(dir);
    expect([keySet.threshold, keySet.commitments.map((c) => c.index)]).toEqual([2, [1, 2, 3]]);
    expect(checkKeySet(keySet).ok).toBe(true);
    for (const k of [1, 2, 3]) {
      expect(shareFromFile(JSON.parse(readFileSync(localShareFile(dir, k), "utf8")) as unknown).index).toBe(k);
      expect(statSync(localShareFile(dir, k)).mode & 0o777).toBe(0o600);
    }
    expect(ensureLocalNullifierKeys(dir, 3)).toBe("kept");
    expect(keySetIn(dir)).toEqual(keySet);
  });

  it("is re-shared under the same group key when attestors are added or removed, the old shares erased", () => {
    const dir = dataDir();
    ensureLocalNullifierKeys(dir, 3);
    const before = keySetIn(dir);
    const oldShare = readFileSync(localShareFile(dir, 1), "utf8");
    expect(ensureLocalNullifierKeys(dir, 4)).toBe("re-shared");
    const after = keySetIn(dir);
    expect([after.groupKey, after.commitments.map((c) => c.index)]).toEqual([before.groupKey, [1, 2, 3, 4]]);
    expect(readFileSync(localShareFile(dir, 1), "utf8")).not.toBe(oldShare);
    expect(ensureLocalNullifierKeys(dir, 2)).toBe("re-shared");
    expect([keySetIn(dir).groupKey, readdirSync(localNullifierKeysDir(dir)).sort()]).toEqual([before.groupKey, ["commitments.json", "share-1.json", "share-2.json"]]);
    expect(existsSync(`${localNullifierKeysDir(dir)}.next`)).toBe(false);
  });

  it("stops at a key set file that is not one, naming it, and erases nothing", () => {
    const dir = dataDir();
    ensureLocalNullifierKeys(dir, 3);
    const commitments = join(localNullifierKeysDir(dir), "commitments.json");
    writeFileSync(commitments, "{not json");
    expect(() => ensureLocalNullifierKeys(dir, 3)).toThrow(`${commitments} is not a nullifier key set`);
    expect(readdirSync(localNullifierKeysDir(dir)).sort()).toEqual(["commitments.json", "share-1.json", "share-2.json", "share-3.json"]);
  });

  it("deals nothing for one attestor: one share would compute every nullifier alone", () => {
    const dir = dataDir();
    expect(ensureLocalNullifierKeys(dir, 1)).toBe("none");
    expect(existsSync(localNullifierKeysDir(dir))).toBe(false);
  });
});
