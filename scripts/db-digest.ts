/** Prints the digest of a dapp database: `tsx scripts/db-digest.ts <db path> [--state]` (--state leaves out bookkeeping). */
import Database from "better-sqlite3";
import { databaseDigest, tableDigests } from "../dapp/db/digest.ts";

const [dbPath, ...flags] = process.argv.slice(2);
if (!dbPath) {
  console.error("usage: tsx scripts/db-digest.ts <db path> [--state]");
  process.exit(2);
}
const sqlite = new Database(dbPath, { readonly: true, fileMustExist: true });
const options = { includeMeta: !flags.includes("--state") };
for (const t of tableDigests(sqlite, options)) console.log(`${t.table}\t${t.rows}\t${t.sha256}`);
console.log(`digest\t${databaseDigest(sqlite, options)}`);
sqlite.close();
