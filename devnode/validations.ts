/**
 * A validator's verdicts in the devnode's record (DEVNODE_ROLE=validator, devnode/validator.ts): one row
 * per claim on chain it checked, kept so a restart neither checks a claim again nor forgets a mismatch.
 * The `validations` table lives in the same SQLite file as the rest of the record (devnode/store.ts opens
 * it); it is apart here because it is the validator's, on v1 and v2 alike.
 */
import type Database from "better-sqlite3";
import type { Hex } from "viem";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS validations (
  claim_index     INTEGER PRIMARY KEY,
  first_input     INTEGER NOT NULL,
  last_input      INTEGER NOT NULL,
  claimed_hash    TEXT    NOT NULL,
  computed_hash   TEXT,
  inputs_on_chain INTEGER,
  checked_at      INTEGER NOT NULL,
  last_block      INTEGER
);
`;

/** Why a claim on chain is not the one this validator would make (devnode/validator.ts). */
export type ValidationProblem =
  /** Its hash (v1: the epoch hash; v2: the outputs root) differs from the one built over the validator's own record. */
  | "EPOCH_HASH_DIFFERS"
  /** It names inputs the InputBox does not hold for the dapp: no epoch over them could have been closed. */
  | "INPUTS_NOT_ON_CHAIN";

/**
 * A validator's verdict on one claim on chain (DEVNODE_ROLE=validator, devnode/validator.ts): claim n of
 * the History on v1, the n-th ClaimSubmitted of the Authority for the application on v2.
 */
export interface ValidationRecord {
  claimIndex: number;
  /** The claim's inputs; on v2 the inputs in its epoch's blocks (lastInput = firstInput - 1 when it has none). */
  firstInput: number;
  lastInput: number;
  /** v2: the last block of the claimed epoch (the claim names blocks, not inputs); null on v1. */
  lastBlock: number | null;
  claimedHash: Hex;
  /** Null when the claim names inputs that are not on chain: there is no epoch to build. */
  computedHash: Hex | null;
  /** How many inputs the InputBox held for the dapp, recorded only for INPUTS_NOT_ON_CHAIN. */
  inputsOnChain: number | null;
  matches: boolean;
  /** Null when the claim matches. */
  problem: ValidationProblem | null;
  /** Unix seconds. */
  checkedAt: number;
}

interface ValidationRow {
  claim_index: number;
  first_input: number;
  last_input: number;
  claimed_hash: string;
  computed_hash: string | null;
  inputs_on_chain: number | null;
  checked_at: number;
  last_block: number | null;
}

/** A verdict's facts with what they come to: whether the claim matches, and if not, why. */
export function judged(v: Omit<ValidationRecord, "matches" | "problem">): ValidationRecord {
  const { checkedAt, ...facts } = v;
  const matches = v.computedHash !== null && v.computedHash.toLowerCase() === v.claimedHash.toLowerCase();
  // checkedAt last, where `GET /validator` has always shown it.
  return { ...facts, matches, problem: matches ? null : v.computedHash === null ? "INPUTS_NOT_ON_CHAIN" : "EPOCH_HASH_DIFFERS", checkedAt };
}

function toValidation(row: ValidationRow): ValidationRecord {
  return judged({
    claimIndex: row.claim_index,
    firstInput: row.first_input,
    lastInput: row.last_input,
    lastBlock: row.last_block,
    claimedHash: row.claimed_hash as Hex,
    computedHash: row.computed_hash as Hex | null,
    inputsOnChain: row.inputs_on_chain,
    checkedAt: row.checked_at,
  });
}

/**
 * The first validators' table had a required computed_hash and no inputs_on_chain: rebuilt in place,
 * verdicts kept, so such a record opens (CREATE TABLE IF NOT EXISTS leaves an existing table as it is).
 * The v1-only table after it lacks last_block: added (null, as every v1 verdict has it).
 */
function upgrade(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('validations')").all();
  if (columns.some((c) => c.name === "inputs_on_chain")) {
    if (!columns.some((c) => c.name === "last_block")) db.exec("ALTER TABLE validations ADD COLUMN last_block INTEGER");
    return;
  }
  db.transaction(() => {
    db.exec("ALTER TABLE validations RENAME TO validations_v1");
    db.exec(SCHEMA);
    db.exec(
      "INSERT INTO validations (claim_index, first_input, last_input, claimed_hash, computed_hash, checked_at) " +
        "SELECT claim_index, first_input, last_input, claimed_hash, computed_hash, checked_at FROM validations_v1",
    );
    db.exec("DROP TABLE validations_v1");
  })();
}

type InsertValidation = [number, number, number, string, string | null, number | null, number, number | null];

/** The validations table of an open record: created, or brought up to date, when the record opens. */
export class ValidationTable {
  private readonly insert: Database.Statement<InsertValidation>;
  private readonly select: Database.Statement<[], ValidationRow>;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    upgrade(db);
    this.insert = db.prepare<InsertValidation>(
      "INSERT INTO validations (claim_index, first_input, last_input, claimed_hash, computed_hash, inputs_on_chain, checked_at, last_block) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.select = db.prepare<[], ValidationRow>("SELECT * FROM validations ORDER BY claim_index");
  }

  add(v: Omit<ValidationRecord, "matches" | "problem">): void {
    this.insert.run(v.claimIndex, v.firstInput, v.lastInput, v.claimedHash, v.computedHash, v.inputsOnChain, v.checkedAt, v.lastBlock);
  }

  all(): ValidationRecord[] {
    return this.select.all().map(toValidation);
  }
}
