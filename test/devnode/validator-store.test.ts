/**
 * A validator's verdicts in the devnode's record (devnode/store.ts): each kind of verdict read back as it
 * was written, and a record made by the first validators (computed hash required, no input count) opened
 * with its verdicts kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevnodeStore } from "../../devnode/store.ts";

const HASH_A = `0x${"aa".repeat(32)}` as const;
const HASH_B = `0x${"bb".repeat(32)}` as const;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "validator-store-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("validator verdicts in the record", () => {
  it("reads back a match, a differing epoch hash and a claim over inputs not on chain", () => {
    const store = new DevnodeStore(join(dir, "devnode.sqlite"));
    store.addValidation({ claimIndex: 0, firstInput: 0, lastInput: 2, claimedHash: HASH_A, computedHash: HASH_A, inputsOnChain: null, checkedAt: 1, lastBlock: null });
    store.addValidation({ claimIndex: 1, firstInput: 3, lastInput: 4, claimedHash: HASH_A, computedHash: HASH_B, inputsOnChain: null, checkedAt: 2, lastBlock: null });
    store.addValidation({ claimIndex: 2, firstInput: 5, lastInput: 9, claimedHash: HASH_B, computedHash: null, inputsOnChain: 5, checkedAt: 3, lastBlock: null });
    expect(store.validations().map((v) => [v.claimIndex, v.matches, v.problem, v.computedHash, v.inputsOnChain])).toEqual([
      [0, true, null, HASH_A, null],
      [1, false, "EPOCH_HASH_DIFFERS", HASH_B, null],
      [2, false, "INPUTS_NOT_ON_CHAIN", null, 5],
    ]);
    store.close();
  });

  it("keeps a v2 verdict's epoch block, and an epoch without inputs", () => {
    const store = new DevnodeStore(join(dir, "devnode.sqlite"));
    store.addValidation({ claimIndex: 0, firstInput: 4, lastInput: 3, claimedHash: HASH_A, computedHash: HASH_A, inputsOnChain: null, checkedAt: 1, lastBlock: 19 });
    expect(store.validations()).toEqual([expect.objectContaining({ claimIndex: 0, firstInput: 4, lastInput: 3, lastBlock: 19, matches: true, problem: null })]);
    store.close();
  });

  it("opens a v1 validator's record (no last_block column) and keeps its verdicts", () => {
    const path = join(dir, "devnode.sqlite");
    const old = new Database(path);
    old.exec(`CREATE TABLE validations (
      claim_index INTEGER PRIMARY KEY, first_input INTEGER NOT NULL, last_input INTEGER NOT NULL,
      claimed_hash TEXT NOT NULL, computed_hash TEXT, inputs_on_chain INTEGER, checked_at INTEGER NOT NULL)`);
    old.prepare("INSERT INTO validations VALUES (0, 0, 2, ?, ?, NULL, 7)").run(HASH_A, HASH_A);
    old.close();
    const store = new DevnodeStore(path);
    expect(store.validations()).toEqual([expect.objectContaining({ claimIndex: 0, lastBlock: null, matches: true })]);
    store.addValidation({ claimIndex: 1, firstInput: 3, lastInput: 5, claimedHash: HASH_A, computedHash: HASH_B, inputsOnChain: null, checkedAt: 8, lastBlock: 39 });
    expect(store.validations()[1]).toMatchObject({ lastBlock: 39, problem: "EPOCH_HASH_DIFFERS" });
    store.close();
  });

  it("opens a record of the first validators' table and keeps its verdicts", () => {
    const path = join(dir, "devnode.sqlite");
    const old = new Database(path);
    old.exec(`CREATE TABLE validations (
      claim_index INTEGER PRIMARY KEY, first_input INTEGER NOT NULL, last_input INTEGER NOT NULL,
      claimed_hash TEXT NOT NULL, computed_hash TEXT NOT NULL, checked_at INTEGER NOT NULL)`);
    old.prepare("INSERT INTO validations VALUES (0, 0, 2, ?, ?, 7)").run(HASH_A, HASH_B);
    old.close();

    const store = new DevnodeStore(path);
    expect(store.validations()).toEqual([
      { claimIndex: 0, firstInput: 0, lastInput: 2, claimedHash: HASH_A, computedHash: HASH_B, inputsOnChain: null, lastBlock: null, matches: false, problem: "EPOCH_HASH_DIFFERS", checkedAt: 7 },
    ]);
    // The upgraded table takes the verdicts only the new one can hold.
    store.addValidation({ claimIndex: 1, firstInput: 3, lastInput: 9, claimedHash: HASH_A, computedHash: null, inputsOnChain: 3, checkedAt: 8, lastBlock: null });
    expect(store.validations()[1]?.problem).toBe("INPUTS_NOT_ON_CHAIN");
    store.close();
    // Opening it again changes nothing.
    const again = new DevnodeStore(path);
    expect(again.validations()).toHaveLength(2);
    again.close();
  });
});
