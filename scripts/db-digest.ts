/** Prints the digest of a dapp database: `tsx scripts/db-digest.ts <db path> [--state]` (--state leaves out bookkeeping). */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { databaseDigest, tableDigests } from "../dapp/db/digest.ts";

const USAGE = "npm run db:digest -- <db path> [--state]    (--state leaves out the bookkeeping row)";
const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(`usage: ${USAGE}`);
  process.exit(0);
}
const [dbPath, ...flags] = argv;
const problem =
  dbPath === undefined || dbPath.startsWith("--")
    ? "expected the path of a dapp database"
    : flags.find((f) => f !== "--state") !== undefined
      ? `unknown argument: ${flags.find((f) => f !== "--state") ?? ""}`
      : !existsSync(dbPath)
        ? `no such file: ${dbPath}`
        : undefined;
if (problem !== undefined || dbPath === undefined) {
  console.error(`${problem ?? "expected the path of a dapp database"}\nusage: ${USAGE}`);
  process.exit(2);
}
const sqlite = new Database(dbPath, { readonly: true, fileMustExist: true });
const options = { includeMeta: !flags.includes("--state") };
for (const t of tableDigests(sqlite, options)) console.log(`${t.table}\t${t.rows}\t${t.sha256}`);
console.log(`digest\t${databaseDigest(sqlite, options)}`);
sqlite.close();
