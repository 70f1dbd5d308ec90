/**
 * Starting a validator from a snapshot (DEVNODE_SNAPSHOT=<folder>, docs/operations.md, Readers): the
 * snapshot's record and dapp database are checked and put in place before the devnode opens its record,
 * so the follower goes on from the snapshot's scan position instead of from genesis. The dapp opens its
 * database only once the devnode is ready (the stack starts the pieces in order), so it finds the
 * snapshot's there. Whatever does not fit stops the start with a ConfigError (one line, exit 2): a
 * snapshot of another application, InputBox, chain or Rollups version; files that fail their sha256 or
 * SQLite's integrity check; a record whose processed inputs are not the snapshot's N; a DATA_DIR that
 * already holds a record, or a dapp database where the dapp's would go.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError, describeIssues, type DevnodeConfig } from "./config.ts";
import type { Log } from "./log.ts";
import { SNAPSHOT_FILES, SNAPSHOT_META, installedSnapshotOf, manifestSchema, sha256OfFile, type InstalledSnapshot, type SnapshotManifest } from "./snapshot.ts";
import { recordOwner, summarizeRecord, type RecordSummary } from "./store.ts";
import { messageOf } from "../common/errors.ts";

type InstallSettings = Pick<DevnodeConfig, "snapshotPath" | "rollups" | "inputBoxAddress" | "dappAddress" | "dataDir" | "databasePath" | "dappDbPath">;

function refuse(folder: string, problem: string): ConfigError {
  return new ConfigError(`DEVNODE_SNAPSHOT ${folder}: ${problem}`);
}

function readManifest(folder: string): SnapshotManifest {
  const path = join(folder, SNAPSHOT_FILES.manifest);
  if (!existsSync(path)) throw refuse(folder, `no ${SNAPSHOT_FILES.manifest} there (take one with POST /snapshot on a validator)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw refuse(folder, `${SNAPSHOT_FILES.manifest} is not JSON (${messageOf(error)})`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) throw refuse(folder, `${SNAPSHOT_FILES.manifest} is not a snapshot's: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The snapshot must be of the state this validator follows: the same Rollups, chain, InputBox and application. */
function checkBelongs(folder: string, manifest: SnapshotManifest, settings: InstallSettings, chainId: number): void {
  const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
  const problem =
    manifest.rollups !== settings.rollups
      ? `a snapshot of a Rollups ${manifest.rollups} node, and this one is ${settings.rollups} (ROLLUPS)`
      : manifest.chainId !== chainId
        ? `a snapshot of chain ${manifest.chainId}, and RPC_URL is chain ${chainId}`
        : !same(manifest.inputBox, settings.inputBoxAddress)
          ? `a snapshot of InputBox ${manifest.inputBox}, and this validator follows ${settings.inputBoxAddress} (INPUTBOX_ADDRESS)`
          : !same(manifest.application, settings.dappAddress)
            ? `a snapshot of application ${manifest.application}, and this validator follows ${settings.dappAddress} (DAPP_ADDRESS)`
            : undefined;
  if (problem !== undefined) throw refuse(folder, problem);
}

/** A database file of the snapshot, read through SQLite; a file SQLite cannot read is refused, not thrown. */
function readChecked<T>(folder: string, file: string, read: (db: Database.Database) => T): T {
  let db: Database.Database | undefined;
  try {
    db = new Database(join(folder, file), { readonly: true, fileMustExist: true });
    const verdict = db.pragma("integrity_check", { simple: true });
    if (verdict !== "ok") throw refuse(folder, `${file} fails SQLite's integrity check (${String(verdict).split("\n", 1)[0]})`);
    return read(db);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw refuse(folder, `${file} is not a readable SQLite database (${messageOf(error)})`);
  } finally {
    db?.close();
  }
}

/** What a record installed from `manifest` remembers of it: a restart with the same DEVNODE_SNAPSHOT is then no new install. */
function installedFrom(folder: string, manifest: SnapshotManifest): InstalledSnapshot {
  return { folder, inputCount: manifest.inputCount, createdAt: manifest.createdAt, recordSha256: manifest.sha256[SNAPSHOT_FILES.record] };
}

/** The snapshot a record in place was installed from; undefined for any other file there, a record or not. */
function installedHere(path: string): InstalledSnapshot | undefined {
  let db: Database.Database | undefined;
  try {
    // Read-write: a record left in WAL mode may not open read-only, and nothing else holds it while the devnode starts.
    db = new Database(path, { fileMustExist: true });
    const meta = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE key = ?");
    return installedSnapshotOf({ getMeta: (key: string) => meta.get(key)?.value });
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

/** Copies to a name beside the target and renames, so a target exists only once it is whole. */
function place(from: string, to: string, finish?: (path: string) => void): void {
  const partial = `${to}.installing`;
  mkdirSync(dirname(to), { recursive: true });
  rmSync(partial, { force: true });
  copyFileSync(from, partial);
  finish?.(partial);
  renameSync(partial, to);
}

/**
 * Installs the snapshot DEVNODE_SNAPSHOT names into an empty DATA_DIR, after every check; nothing when
 * none is named, or when this DATA_DIR's record was installed from that very snapshot (a restart).
 */
export async function installSnapshot(settings: InstallSettings, chainId: number, log: Log): Promise<void> {
  const folder = settings.snapshotPath;
  if (folder === undefined) return;
  const manifest = readManifest(folder);
  checkBelongs(folder, manifest, settings, chainId);
  const identity = installedFrom(folder, manifest);
  if (existsSync(settings.databasePath)) {
    const installed = installedHere(settings.databasePath);
    if (installed !== undefined && installed.createdAt === identity.createdAt && installed.recordSha256 === identity.recordSha256) return;
    throw refuse(folder, `DATA_DIR ${settings.dataDir} already holds a record (${settings.databasePath}): a snapshot starts a validator on an empty DATA_DIR`);
  }
  if (existsSync(settings.dappDbPath)) throw refuse(folder, `a dapp database is already at ${settings.dappDbPath} (DAPP_DB_PATH): a snapshot starts a validator on an empty DATA_DIR`);

  for (const file of [SNAPSHOT_FILES.record, SNAPSHOT_FILES.dapp]) {
    const path = join(folder, file);
    if (!existsSync(path)) throw refuse(folder, `${file} is missing`);
    const actual = await sha256OfFile(path);
    if (actual !== manifest.sha256[file]) throw refuse(folder, `${file} fails its sha256 (${SNAPSHOT_FILES.manifest} says ${manifest.sha256[file]}, the file is ${actual})`);
  }
  const record: RecordSummary = readChecked(folder, SNAPSHOT_FILES.record, summarizeRecord);
  readChecked(folder, SNAPSHOT_FILES.dapp, () => undefined);
  if (record.processed !== manifest.inputCount) throw refuse(folder, `its record has processed ${record.processed} inputs, and ${SNAPSHOT_FILES.manifest} says ${manifest.inputCount}`);
  const owner = recordOwner(settings.rollups, settings.inputBoxAddress, settings.dappAddress);
  if (record.meta.get("owner") !== owner) throw refuse(folder, `its record belongs to ${record.meta.get("owner") ?? "no application"}, not ${owner}`);

  // The dapp's file first: the record is what marks a DATA_DIR as installed.
  place(join(folder, SNAPSHOT_FILES.dapp), settings.dappDbPath);
  place(join(folder, SNAPSHOT_FILES.record), settings.databasePath, (path) => {
    const db = new Database(path, { fileMustExist: true });
    try {
      db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(SNAPSHOT_META, JSON.stringify(identity));
    } finally {
      db.close();
    }
  });
  log(`installed the snapshot ${folder}: ${manifest.inputCount} input(s) processed (last in block ${manifest.lastInputBlock ?? "-"}), chain read through block ${manifest.chainBlock ?? "-"}; following the chain from there`);
}
