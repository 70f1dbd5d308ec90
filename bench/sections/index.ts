/**
 * EAS's queries from the index against the same answers through inspect (issue 48; docs/index.md): on a whole
 * stack (v1) over a seeded store, with the index seeded by the indexer's own writer (bench/seed-index.ts),
 * once on PGlite (the indexer answers, the api forwards) and once on a PostgreSQL server (the api reads it
 * itself). Timed through the api's `POST /graphql` at 16 connections, interleaved with REST's inspect reads:
 * an attestation by id, a recipient's latest 25 (REST: the owner's list), a schema's latest 25, the global
 * latest 25 and a recipient's count (inspect answers neither of the last three: their floor is REST's read by
 * id). Beside them, node's bare HTTP server (bench/echo-server.ts) taking the same by-id bodies: what one
 * HTTP exchange costs on this machine, the ceiling of any answer the api sends (the second floor of each
 * GraphQL row). Then the indexer's lag: from an input's verdict (its notices at the node) to its row answering.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { getAddress, type Address, type Hex } from "viem";
import { openIndex, type IndexLocation } from "../../api/index/db.ts";
import { pgliteDir } from "../../api/index/location.ts";
import { inputIdOf } from "../../common/ids.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { EAS_LATEST_25 } from "../../test/support/eas-docs.ts";
import { startPostgres, type PostgresServer } from "../../test/support/postgres.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { attestationParams, BENCH_SCHEMA_ID } from "../inputs.ts";
import { runInterleaved, type LoadOptions, type LoadResult } from "../load.ts";
import { figure, type Figure } from "../report.ts";
import { checkBulkEquivalence, checkIndexSeedEquivalence, seedIndex } from "../seed-index.ts";
import { seedStore, type SeedResult } from "../seed.ts";
import { percentile } from "../stats.ts";
import { ROUNDS, type BenchContext, type SectionRows } from "./context.ts";
import { echoUrl, startEcho } from "./inspect.ts";

const CONCURRENCY = 16;
const FIELDS = "id attester recipient refUID revocable revocationTime expirationTime data";
/** The queries timed, each through the api's POST /graphql. */
const QUERIES = {
  "attestation by id": `query($id: String!) { attestation(where: { id: $id }) { ${FIELDS} } }`,
  "a recipient's latest 25": `query($r: String!) { attestations(where: { recipient: { equals: $r } }, take: 25, orderBy: { time: desc }) { ${FIELDS} } }`,
  "a schema's latest 25": `query($s: String!) { attestations(where: { schemaId: { equals: $s } }, take: 25, orderBy: { time: desc }) { ${FIELDS} } }`,
  // EAS's documentation's first example, verbatim.
  "the global latest 25": EAS_LATEST_25,
  "a recipient's count": `query($r: String!) { aggregateAttestation(where: { recipient: { equals: $r } }) { _count { _all } } }`,
  // The same query with a variable it does not use, new for every request: no answer kept serves it
  // (api/graphql/answers.ts), so this is the read's own cost.
  "the global latest 25, never kept": EAS_LATEST_25,
} as const;
type QueryName = keyof typeof QUERIES;
const LAG_INPUTS = 40;
const BACKENDS = ["PGlite", "PostgreSQL"] as const;

export const indexFigureNames = (sizes: readonly number[]): string[] =>
  sizes.flatMap((n) =>
    BACKENDS.flatMap((b) => [
      ...Object.keys(QUERIES).flatMap((q) => ["rps", "p50", "p99"].map((m) => `index ${q} ${b} @ ${n.toLocaleString("en-US")} ${m}`)),
      `index lag ${b} @ ${n.toLocaleString("en-US")} p50`,
      `index lag ${b} @ ${n.toLocaleString("en-US")} p99`,
    ]),
  );

function variablesOf(query: QueryName, i: number, seed: SeedResult, owners: Address[]): Record<string, string> {
  if (query === "attestation by id") return { id: seed.sampleAttestationIds[i % seed.sampleAttestationIds.length] as string };
  if (query === "a schema's latest 25") return { s: BENCH_SCHEMA_ID };
  if (query === "the global latest 25") return {};
  if (query === "the global latest 25, never kept") return { unused: `${i}` };
  return { r: getAddress(owners[i % owners.length] as Address) };
}

function graphqlCheck(status: number, body: Buffer): void {
  const text = body.toString("utf8");
  if (status !== 200 || text.includes('"errors"') || !text.startsWith('{"data":')) throw new Error(`index: GraphQL failed: HTTP ${status} ${text.slice(0, 300)}`);
}

function restCheck(status: number, body: Buffer): void {
  if (status !== 200) throw new Error(`index: REST failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
}

async function post<T>(api: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${api}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: T; errors?: unknown };
  if (body.data == null || body.errors !== undefined) throw new Error(`index: ${JSON.stringify(body).slice(0, 300)}`);
  return body.data;
}

/** Before timing: the index answers what inspect answers for the owners and ids the loads use. */
async function checkAnswers(api: string, seed: SeedResult): Promise<Address[]> {
  const owners: Address[] = [];
  for (const owner of seed.sampleOwners) {
    const rest = (await (await fetch(`${api}/api/core/attestations/${owner}`)).json()) as { data: { claimId: string }[] };
    const latest = await post<{ attestations: { id: string }[] }>(api, QUERIES["a recipient's latest 25"], { r: getAddress(owner) });
    const ids = new Set(rest.data.map((a) => a.claimId));
    if (latest.attestations.length !== Math.min(25, ids.size) || latest.attestations.some((a) => !ids.has(a.id))) {
      throw new Error(`index: ${owner}'s attestations differ: index ${latest.attestations.length}, inspect ${ids.size}`);
    }
    if (ids.size > 0) owners.push(owner);
  }
  for (const id of seed.sampleAttestationIds.slice(0, 50)) {
    const one = await post<{ attestation: { id: string } | null }>(api, QUERIES["attestation by id"], { id });
    if (one.attestation?.id !== id) throw new Error(`index: attestation ${id} is not in the index`);
  }
  return owners;
}

/** Time from each input's verdict (its notice at the node) to its attestation answering from the index. */
async function lag(stack: TestStack): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < LAG_INPUTS; k++) {
    const verdict = await stack.send({ type: "create_attestation", params: attestationParams(900_000_000 + k, DEFAULTS.adminAddress as Address) });
    const from = performance.now();
    if (verdict.status !== "ACCEPTED") throw new Error(`index: the lag's input was ${verdict.status}`);
    const id = inputIdOf("create_attestation", verdict.index);
    for (;;) {
      const found = await post<{ attestation: { id: Hex } | null }>(stack.urls.api, `query($id: String!) { attestation(where: { id: $id }) { id } }`, { id });
      if (found.attestation !== null) break;
      if (performance.now() - from > 30_000) throw new Error(`index: attestation ${id} not in the index after 30 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    out.push(performance.now() - from);
  }
  return out;
}

async function measure(ctx: BenchContext, n: number, seed: SeedResult, backend: (typeof BACKENDS)[number], dataDir: string, server: PostgresServer | undefined): Promise<{ figures: Figure[]; note: string }> {
  const { profile, log } = ctx;
  const stack = await startStack({
    api: true,
    dataDir,
    dappCommand: ctx.bundle.command,
    env: { RATE_LIMITS: "off", ...(server === undefined ? {} : { DATABASE_URL: server.url }) },
    readyTimeoutMs: 120_000,
  });
  const echo = startEcho(ctx);
  try {
    const api = stack.urls.api;
    const ceilingUrl = await echoUrl(echo);
    const owners = await checkAnswers(api, seed);
    // Each kind rotates 256 bodies; the never-kept one is new at every request.
    const unique = (query: QueryName) => query === "the global latest 25, never kept";
    const bodies = (query: QueryName) => Array.from({ length: unique(query) ? profile.requests + profile.warmup : 256 }, (_, i) => Buffer.from(JSON.stringify({ query: QUERIES[query], variables: variablesOf(query, i, seed, owners) })));
    const load = (next: LoadOptions["next"], check: (status: number, body: Buffer) => void): LoadOptions => ({ baseUrl: api, concurrency: CONCURRENCY, count: profile.requests, warmup: profile.warmup, next, check });
    const names = Object.keys(QUERIES) as QueryName[];
    const graphqlLoads = names.map((q) => {
      const b = bodies(q);
      return load((i) => ({ method: "POST", path: "/graphql", body: b[i % b.length] as Buffer, headers: { "content-type": "application/json" } }), graphqlCheck);
    });
    const restById = load((i) => ({ method: "GET", path: `/api/core/attestation/${seed.sampleAttestationIds[i % seed.sampleAttestationIds.length]}` }), restCheck);
    const restByOwner = load((i) => ({ method: "GET", path: `/api/core/attestations/${owners[i % owners.length]}` }), restCheck);
    const byIdBodies = bodies("attestation by id");
    const ceiling: LoadOptions = { ...load((i) => ({ method: "POST", path: "/graphql", body: byIdBodies[i % byIdBodies.length] as Buffer, headers: { "content-type": "application/json" } }), restCheck), baseUrl: ceilingUrl };
    // Interleaved rounds: noise from the rest of the machine falls on every load alike.
    const results = await runInterleaved([...graphqlLoads, restById, restByOwner, ceiling], ROUNDS);
    const byId = results[names.length] as LoadResult;
    const byOwner = results[names.length + 1] as LoadResult;
    const bare = results[names.length + 2] as LoadResult;
    log(`index ${backend} @ ${n.toLocaleString("en-US")}: node's bare HTTP server ${bare.rps.toFixed(0)}/s p50 ${bare.p50.toFixed(2)} ms`);
    const size = n.toLocaleString("en-US");
    const figures: Figure[] = [];
    for (const [k, q] of names.entries()) {
      const r = results[k] as LoadResult;
      const floor = q === "a recipient's latest 25" ? { name: `inspect (REST) by owner @ ${size}`, r: byOwner } : { name: `inspect (REST) by id @ ${size}`, r: byId };
      log(`index ${backend} @ ${size}: ${q} ${r.rps.toFixed(0)}/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms (${floor.name} ${floor.r.rps.toFixed(0)}/s)`);
      figures.push(
        figure("api", `index ${q} ${backend} @ ${size} rps`, "req/s", r.rps, { name: `${floor.name} rps`, value: floor.r.rps }, {
          alt: { name: `node:http bare @ ${size} rps`, value: bare.rps },
          ...(q === "attestation by id" || q === "a recipient's latest 25" ? { target: { text: "≥ 10x inspect", met: (_v: number, ratio: number) => ratio >= 10 } } : {}),
        }),
        figure("api", `index ${q} ${backend} @ ${size} p50`, "ms", r.p50, { name: `${floor.name} p50`, value: floor.r.p50 }),
        figure("api", `index ${q} ${backend} @ ${size} p99`, "ms", r.p99, { name: `${floor.name} p99`, value: floor.r.p99 }, backend === "PostgreSQL" ? { target: { text: "< 20 ms", met: (v) => v < 20 } } : {}),
      );
    }
    const lags = (await lag(stack)).sort((a, b) => a - b);
    const [l50, l99] = [percentile(lags, 50), percentile(lags, 99)];
    log(`index ${backend} @ ${size}: lag p50 ${l50.toFixed(1)} ms p99 ${l99.toFixed(1)} ms over ${LAG_INPUTS} inputs`);
    figures.push(
      figure("api", `index lag ${backend} @ ${size} p50`, "ms", l50, { name: `inspect (REST) by id @ ${size} p50`, value: byId.p50 }),
      figure("api", `index lag ${backend} @ ${size} p99`, "ms", l99, { name: `inspect (REST) by id @ ${size} p99`, value: byId.p99 }),
    );
    const note = `index ${backend} @ ${size}: ${owners.length} owners and ${seed.sampleAttestationIds.length} ids rotated, each checked first to answer as inspect does; answers of ${results[1]?.lastBodyBytes ?? 0} bytes (a recipient's latest) against ${byOwner.lastBodyBytes} (REST by owner).`;
    return { figures, note };
  } finally {
    await echo.stop();
    await stack.stop({ keepDataDir: true });
  }
}

export async function indexRows(ctx: BenchContext, sizes: readonly number[], backends: readonly (typeof BACKENDS)[number][] = BACKENDS): Promise<SectionRows> {
  const { log, root, work } = ctx;
  const problems = [...(await checkIndexSeedEquivalence(0, 1_000)), ...(await checkIndexSeedEquivalence(777, 1_000))];
  if (problems.length > 0) throw new Error(`index: the seeded notices are not the dapp's: ${problems.join("; ")}`);
  const bulk = await checkBulkEquivalence(200);
  if (bulk.length > 0) throw new Error(`index: the bulk rows are not the indexer's: ${bulk.slice(0, 3).join("; ")}`);
  const figures: Figure[] = [];
  const notes: string[] = [
    "index: whole stacks (Rollups v1, dapp bundle) on a store seeded as bench/seed.ts seeds it, the index seeded in bulk with the rows the indexer makes of the notices the dapp writes for those rows (bench/seed-index.ts: the notices checked against the real dispatcher, the bulk rows against the indexer's writer, on every run); " +
      `${ctx.profile.requests.toLocaleString("en-US")} timed requests per query after ${ctx.profile.warmup}, ${CONCURRENCY} connections, ${ROUNDS} interleaved rounds; lag over ${LAG_INPUTS} inputs sent one at a time, polled every 2 ms.`,
  ];
  for (const n of sizes) {
    const base = join(work, `index-${n}`);
    const dirs = { PGlite: join(base, "pglite"), PostgreSQL: join(base, "postgres") };
    for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
    const seed = await seedStore(join(dirs.PGlite, "dapp.sqlite"), n, join(root, "bench-results", "cache"));
    copyFileSync(join(dirs.PGlite, "dapp.sqlite"), join(dirs.PostgreSQL, "dapp.sqlite"));
    log(`index: seeded the dapp's store with ${n.toLocaleString("en-US")} attestations in ${seed.seconds.toFixed(1)} s`);
    const server = await startPostgres();
    try {
      for (const backend of backends) {
        const location: IndexLocation = backend === "PGlite" ? { kind: "pglite", dir: pgliteDir(dirs.PGlite) } : { kind: "postgres", url: server.url, schema: "public" };
        const index = await openIndex(location, { migrate: true, readTimeoutMs: 60_000 });
        const seeded = await seedIndex(index, n, DEFAULTS.dappAddress.toLowerCase(), join(root, "bench-results", "cache"));
        await index.close();
        log(`index: seeded ${backend} with ${n.toLocaleString("en-US")} attestations in ${seeded.seconds.toFixed(1)} s`);
        notes.push(`index ${backend} @ ${n.toLocaleString("en-US")}: seeded in ${seeded.seconds.toFixed(1)} s.`);
        const measured = await measure(ctx, n, seed, backend, dirs[backend], backend === "PostgreSQL" ? server : undefined);
        figures.push(...measured.figures);
        notes.push(measured.note);
      }
    } finally {
      await server.stop();
    }
  }
  return { figures, notes };
}
