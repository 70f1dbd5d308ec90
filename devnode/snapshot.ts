/**
 * A reader's snapshot (docs/operations.md, Readers): its record and its dapp's database as they stood
 * between two inputs, so that a new reader starts at input N instead of replaying the chain from genesis.
 * Taking one (`POST /snapshot` on a validator) holds advances back until the one at the dapp is finished,
 * copies both SQLite files with SQLite's online backup (inspects go on meanwhile: they only read), lets
 * the inputs flow again, and writes snapshot.json beside the copies: whose state it is, N, and each
 * file's sha256. Starting from one is snapshot-install.ts.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { ADDRESS_RE } from "../common/address.ts";
import { ROLLUPS_VERSIONS } from "./config.ts";
import type { Log } from "./log.ts";
import { summarizeRecord } from "./store.ts";
import { messageOf } from "../common/errors.ts";

/** The snapshot format this devnode writes and reads. */
export const SNAPSHOT_VERSION = 1;
export const SNAPSHOT_FILES = { record: "devnode.sqlite", dapp: "dapp.sqlite", manifest: "snapshot.json" } as const;
/** The record's meta key that names the snapshot it was installed from. */
export const SNAPSHOT_META = "snapshot";

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lower-case hex digits");
const addressText = z.string().regex(ADDRESS_RE, "expected a 0x address");

export const manifestSchema = z.object({
  version: z.literal(SNAPSHOT_VERSION),
  rollups: z.enum(ROLLUPS_VERSIONS),
  chainId: z.number().int().positive(),
  inputBox: addressText,
  application: addressText,
  /** N: the inputs the record and the dapp's database had processed. */
  inputCount: z.number().int().nonnegative(),
  lastInputBlock: z.number().int().nonnegative().nullable(),
  /** The last block the record had read the InputBox through. */
  chainBlock: z.number().int().nonnegative().nullable(),
  /** Unix ms. */
  createdAt: z.number().int().positive(),
  sha256: z.object({ [SNAPSHOT_FILES.record]: sha256Hex, [SNAPSHOT_FILES.dapp]: sha256Hex }),
});
export type SnapshotManifest = z.infer<typeof manifestSchema>;

/** What a record installed from a snapshot remembers of it (meta `snapshot`), across restarts. */
export const installedSchema = z.object({ folder: z.string(), inputCount: z.number().int().nonnegative(), createdAt: z.number().int(), recordSha256: sha256Hex });
export type InstalledSnapshot = z.infer<typeof installedSchema>;

/** The snapshot a record was installed from, or undefined for a record that began at genesis. */
export function installedSnapshotOf(record: { getMeta(key: string): string | undefined }): InstalledSnapshot | undefined {
  const text = record.getMeta(SNAPSHOT_META);
  return text === undefined ? undefined : installedSchema.parse(JSON.parse(text));
}

export type SnapshotErrorCode = "SNAPSHOT_BUSY" | "SNAPSHOT_EXISTS" | "SNAPSHOT_TIMEOUT" | "SNAPSHOT_FAILED";

/** Why no snapshot was taken; the node server maps the code to its HTTP status (reader.ts). */
export class SnapshotError extends Error {
  override readonly name = "SnapshotError";
  constructor(
    readonly code: SnapshotErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export interface SnapshotSource {
  /** Holds advances back between two inputs, and lets them go again (devnode/model.ts). */
  model: { pauseAdvances(): Promise<void>; resumeAdvances(): void };
  record: { backup(destination: string): Promise<void> };
  dappDbPath: string;
  /** Where snapshots go unless a request names a folder (DATA_DIR/snapshots). */
  folder: string;
  identity: Pick<SnapshotManifest, "rollups" | "chainId" | "inputBox" | "application">;
  log: Log;
}

/** How long a snapshot waits for the dapp to finish the input it holds. */
const PAUSE_TIMEOUT_MS = 30_000;

export class SnapshotTaker {
  private busy = false;

  constructor(private readonly source: SnapshotSource) {}

  /** Takes a snapshot into `folder` (new or empty), or into a new folder under the default one. */
  async take(folder: string | undefined): Promise<{ folder: string; manifest: SnapshotManifest }> {
    if (this.busy) throw new SnapshotError("SNAPSHOT_BUSY", "a snapshot is being taken: ask again once it is done");
    this.busy = true;
    try {
      return await this.takeInto(folder === undefined ? join(this.source.folder, `snapshot-${Date.now()}`) : resolve(folder));
    } finally {
      this.busy = false;
    }
  }

  private async takeInto(folder: string): Promise<{ folder: string; manifest: SnapshotManifest }> {
    if (existsSync(folder) && readdirSync(folder).length > 0) throw new SnapshotError("SNAPSHOT_EXISTS", `${folder} is not empty: name a new folder`);
    const record = join(folder, SNAPSHOT_FILES.record);
    const dapp = join(folder, SNAPSHOT_FILES.dapp);
    try {
      mkdirSync(folder, { recursive: true });
      const heldMs = await this.copyBetweenInputs(record, dapp);
      // Read from the copy itself, so snapshot.json says what the files hold, whatever the follower did meanwhile.
      const facts = settle(record, summarizeRecord);
      settle(dapp, () => undefined);
      const manifest: SnapshotManifest = {
        version: SNAPSHOT_VERSION,
        ...this.source.identity,
        inputCount: facts.processed,
        lastInputBlock: facts.lastProcessedBlock,
        chainBlock: facts.nextBlock === null || facts.nextBlock === 0 ? null : facts.nextBlock - 1,
        createdAt: Date.now(),
        sha256: { [SNAPSHOT_FILES.record]: await sha256OfFile(record), [SNAPSHOT_FILES.dapp]: await sha256OfFile(dapp) },
      };
      writeFileSync(join(folder, SNAPSHOT_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
      this.source.log(`snapshot at input ${manifest.inputCount} (block ${manifest.lastInputBlock ?? "-"}, chain read through ${manifest.chainBlock ?? "-"}) in ${folder}; inputs held back ${heldMs} ms`);
      return { folder, manifest };
    } catch (error) {
      // A half-written snapshot must not pass for one: its files go, the folder stays for the next try.
      for (const file of [record, dapp, `${record}-journal`, `${dapp}-journal`, join(folder, SNAPSHOT_FILES.manifest)]) rmSync(file, { force: true });
      if (error instanceof SnapshotError) throw error;
      throw new SnapshotError("SNAPSHOT_FAILED", `the snapshot failed: ${messageOf(error)}`, { cause: error });
    }
  }

  /** Both databases copied while no input is at the dapp (it commits an input before it finishes it); how long inputs waited. */
  private async copyBetweenInputs(record: string, dapp: string): Promise<number> {
    const { model } = this.source;
    if (!existsSync(this.source.dappDbPath)) throw new SnapshotError("SNAPSHOT_FAILED", `no dapp database at ${this.source.dappDbPath} (DAPP_DB_PATH)`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SnapshotError("SNAPSHOT_TIMEOUT", `the dapp did not finish its input within ${PAUSE_TIMEOUT_MS} ms`)), PAUSE_TIMEOUT_MS);
    });
    const asked = Date.now();
    try {
      await Promise.race([model.pauseAdvances(), late]);
      await this.source.record.backup(record);
      const source = new Database(this.source.dappDbPath, { readonly: true, fileMustExist: true });
      try {
        await source.backup(dapp);
      } finally {
        source.close();
      }
      return Date.now() - asked;
    } finally {
      clearTimeout(timer);
      model.resumeAdvances();
    }
  }
}

/**
 * A copy in rollback-journal mode, so it is one self-contained file that opens read-only anywhere (a copy
 * of a WAL database is marked WAL); each devnode and dapp puts its own file back in WAL when it opens it.
 */
function settle<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma("journal_mode = DELETE");
    return read(db);
  } finally {
    db.close();
  }
}
