/**
 * The stores every section reads, made before anything else runs: one seeded store per scale size
 * (the inspect-size one in the whole stack's data directory), checked first against what
 * create_attestation writes; then each store's in-process SQLite floors (the dapp store's prepared
 * statements, no HTTP), taken before any other process opens them.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { hexToBuffer } from "../../dapp/db/bytes.ts";
import { openDatabase } from "../../dapp/db/open.ts";
import { createStore } from "../../dapp/db/store.ts";
import type { BenchReport } from "../report.ts";
import { checkSeedEquivalence, seedStore, type SeedResult } from "../seed.ts";
import { timeSync, type LatencySummary } from "../stats.ts";
import type { BenchContext } from "./context.ts";

export const SEEDED_HOW =
  "dapp migrations + the dapp's own prepared inserts (createStore.insertSchema/insertAttestation), one transaction, " +
  "rows identical to create_attestation's (checked), input indexes from 1e12; no chain transactions";

export interface Stores {
  /** Each store by its number of attestations, smallest first. */
  seeded: Map<number, SeedResult>;
  /** The largest store's size, and the store. */
  largest: number;
  big: SeedResult;
  /** The report's seeding rows. */
  seeding: BenchReport["seeding"];
}

/** Seeds every scale size, smallest first; the inspect-size store goes where the whole stack keeps its data. */
export async function seedStores(ctx: BenchContext): Promise<Stores> {
  const { log, profile, root, work } = ctx;
  const problems = await checkSeedEquivalence(7, 1000);
  if (problems.length > 0) throw new Error(`seeded rows differ from create_attestation's: ${problems.join(", ")}`);
  const seeded = new Map<number, SeedResult>();
  const seeding: BenchReport["seeding"] = [];
  const largest = Math.max(...profile.scaleSizes);
  for (const stored of [...profile.scaleSizes].sort((a, b) => a - b)) {
    const dir = stored === profile.inspectStore ? join(work, "stack") : join(work, `store-${stored}`);
    mkdirSync(dir, { recursive: true });
    const seed = await seedStore(join(dir, "dapp.sqlite"), stored, join(root, "bench-results", "cache"));
    seeded.set(stored, seed);
    seeding.push({ stored, seconds: seed.seconds, fileBytes: seed.fileBytes, how: SEEDED_HOW });
    log(`seeded ${stored} attestations in ${seed.seconds.toFixed(1)} s (${(seed.fileBytes / 2 ** 20).toFixed(1)} MiB)`);
  }
  return { seeded, largest, big: seeded.get(largest) as SeedResult, seeding };
}

/** The queries of the scale and inspect figures on SQLite alone, in this process. */
export interface SqliteFloor {
  attestation: LatencySummary;
  byOwner: LatencySummary;
  byTarget: LatencySummary;
}

function sqliteFloor(seed: SeedResult, floorOps: number, warmup: number): SqliteFloor {
  const db = openDatabase({ path: seed.path });
  const store = createStore(db);
  const ids = seed.sampleAttestationIds.map(hexToBuffer);
  const owners = seed.sampleOwners.map(hexToBuffer);
  const target = hexToBuffer(seed.targetOwner);
  const attestation = timeSync((i) => void store.attestationById(ids[i % ids.length] as Buffer), floorOps, warmup);
  const byOwner = timeSync((i) => void store.attestationsByOwner(owners[i % owners.length] as Buffer, 1000, 0), floorOps, warmup);
  const byTarget = timeSync(() => void store.attestationsByOwner(target, 1000, 0), Math.ceil(floorOps / 4), Math.ceil(warmup / 5));
  db.$client.close();
  return { attestation, byOwner, byTarget };
}

/** Every store's SQLite floors, by store size: `floorOps` timed calls a query, after `warmup` untimed ones. */
export function sqliteFloors(stores: Stores, floorOps: number, warmup: number): Map<number, SqliteFloor> {
  const sqlite = new Map<number, SqliteFloor>();
  for (const [stored, seed] of stores.seeded) sqlite.set(stored, sqliteFloor(seed, floorOps, warmup));
  return sqlite;
}
