/**
 * The inspect section: `attestation` and `attestations_by_owner` (owners of ~10) through
 * `GET /inspect/<percent-encoded JSON>` on the whole stack's devnode, with the lean client at 1 and 16
 * connections and node:http's at 1, each interleaved with a bare loopback echo server (bench/echo-server.ts,
 * its own process, started with the run so it is ready by now) on the same client, concurrency and paths;
 * the same queries on SQLite alone are the second floor.
 */
import { join } from "node:path";
import { runInterleaved, type ClientKind, type LoadRequest, type LoadResult } from "../load.ts";
import { spawnChild, type Child } from "../procs.ts";
import { processArgs, type TestStack } from "../../test/support/stack.ts";
import { figure, type Figure } from "../report.ts";
import type { SeedResult } from "../seed.ts";
import type { LatencySummary } from "../stats.ts";
import { acceptedInspect, inspectPath, ROUNDS, type BenchContext } from "./context.ts";
import type { SqliteFloor, Stores } from "./stores.ts";

export const INSPECT_QUERIES = ["attestation", "attestations_by_owner(~10)"] as const;
export const INSPECT_CONFIGS = ["c1", "c16", "c1 node:http"] as const;

/** The echo floor's process (it reports its port over IPC once it listens). */
export function startEcho(ctx: BenchContext): Child {
  return spawnChild({
    name: "echo",
    file: process.execPath,
    args: processArgs("bench/echo-server.ts"),
    env: {},
    cwd: ctx.root,
    logFile: join(ctx.work, "logs", "echo.log"),
    ipc: true,
  });
}

function isReady(value: unknown): value is { type: "ready"; port: number } {
  return typeof value === "object" && value !== null && "type" in value && value.type === "ready" && "port" in value;
}

/** The echo server's URL, once it is ready. */
export async function echoUrl(echo: Child): Promise<string> {
  const echoReady = await echo.message((m) => (isReady(m) ? m : undefined), 60_000);
  return `http://127.0.0.1:${echoReady.port}`;
}

export interface InspectRows {
  figures: Figure[];
  /** `attestation` at 1 connection with the lean client: the floor of the api's reads. */
  attestationC1: LoadResult;
}

export async function inspectRows(ctx: BenchContext, stack: TestStack, echo: string, stores: Stores, sqlite: Map<number, SqliteFloor>): Promise<InspectRows> {
  const { log, profile } = ctx;
  const figures: Figure[] = [];
  const inspectSeed = stores.seeded.get(profile.inspectStore) as SeedResult;
  const queries: { name: string; paths: string[]; floor: LatencySummary }[] = [
    {
      name: INSPECT_QUERIES[0],
      paths: inspectSeed.sampleAttestationIds.map((id) => inspectPath({ type: "attestation", params: { attestation_id: id } })),
      floor: sqlite.get(profile.inspectStore)?.attestation as LatencySummary,
    },
    {
      name: INSPECT_QUERIES[1],
      paths: inspectSeed.sampleOwners.map((owner) => inspectPath({ type: "attestations_by_owner", params: { owner } })),
      floor: sqlite.get(profile.inspectStore)?.byOwner as LatencySummary,
    },
  ];
  const inspectResults = new Map<string, LoadResult>();
  // The lean client at 1 and 16 connections, and node:http's client at 1 (what a typical Node caller sees).
  const configs: { concurrency: number; client: ClientKind }[] = [
    { concurrency: 1, client: "wire" },
    { concurrency: 16, client: "wire" },
    { concurrency: 1, client: "node" },
  ];
  for (const { concurrency, client } of configs) {
    // The echo floor interleaved with the queries: same client, concurrency, request paths and moments.
    const paths = queries[0]?.paths as string[];
    const [echoResult, ...results] = await runInterleaved(
      [
        {
          baseUrl: echo,
          concurrency,
          client,
          count: profile.requests,
          warmup: profile.warmup,
          next: (i: number): LoadRequest => ({ method: "GET", path: paths[i % paths.length] as string }),
        },
        ...queries.map((q) => ({
          baseUrl: stack.urls.node,
          concurrency,
          client,
          count: profile.requests,
          warmup: profile.warmup,
          next: (i: number): LoadRequest => ({ method: "GET", path: q.paths[i % q.paths.length] as string }),
          check: acceptedInspect,
        })),
      ],
      ROUNDS,
    );
    if (echoResult === undefined) throw new Error("no echo result");
    const suffix = client === "wire" ? "" : " node:http";
    log(`echo c${concurrency}${suffix}: p50 ${echoResult.p50.toFixed(3)} ms, ${echoResult.rps.toFixed(0)}/s`);
    for (const [k, q] of queries.entries()) {
      const result = results[k] as LoadResult;
      inspectResults.set(`${q.name}/${concurrency}/${client}`, result);
      const label = `${q.name} c${concurrency}${suffix}`;
      log(`inspect ${label}: p50 ${result.p50.toFixed(3)} ms p99 ${result.p99.toFixed(3)} ms ${result.rps.toFixed(0)}/s`);
      const sqliteRps = 1000 / q.floor.mean;
      figures.push(
        figure("inspect", `${label} rps`, "req/s", result.rps, { name: "echo rps", value: echoResult.rps }, {
          alt: { name: "sqlite ops/s", value: sqliteRps },
          ...(concurrency === 16 ? { target: { text: ">= 2,000/s", met: (v: number) => v >= 2000 } } : {}),
        }),
        figure("inspect", `${label} p50`, "ms", result.p50, { name: "echo p50", value: echoResult.p50 }, {
          alt: { name: "sqlite p50", value: q.floor.p50 },
          ...(concurrency === 1 ? { target: { text: "<= 4x echo", met: (_v: number, r: number) => r <= 4 } } : {}),
        }),
        figure("inspect", `${label} p99`, "ms", result.p99, { name: "echo p99", value: echoResult.p99 }, {
          alt: { name: "sqlite p99", value: q.floor.p99 },
        }),
      );
    }
  }
  return { figures, attestationC1: inspectResults.get("attestation/1/wire") as LoadResult };
}
