/**
 * EAS's GraphQL against REST (docs/graphql.md, issue 41's row): `attestations(where: { recipient }, take:
 * 20, orderBy: time desc)` through `POST /graphql` against `GET /api/core/attestations/:owner`, on the whole
 * stack (v1) over a seeded store, for the same owners (~10 attestations each), interleaved in the same run at
 * the same concurrency. REST is the floor: both make the same `attestations_by_owner` read, so the ratio is
 * what GraphQL's parse, validation, execution and EAS's data encoding add on top.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { getAddress, type Address } from "viem";
import { runInterleaved, type LoadOptions } from "../load.ts";
import { figure } from "../report.ts";
import { seedStore } from "../seed.ts";
import { ROUNDS, type BenchContext, type SectionRows } from "./context.ts";
import { startWholeStack } from "./whole-stack.ts";

/** The readers section's, so these rates compare with its; at 16 the latencies include queueing in the api. */
const CONCURRENCY = 16;
const TAKE = 20;
export const GRAPHQL_QUERY = `query($r: String!) { attestations(where: { recipient: { equals: $r } }, take: ${TAKE}, orderBy: [{ time: desc }]) { id attester recipient time data decodedDataJson revoked } }`;
export const graphqlFigureNames = (): string[] => ["rps", "p50", "p99"].map((m) => `GraphQL attestations by recipient c${CONCURRENCY} ${m}`);

interface GraphqlAnswer {
  data?: { attestations?: { id: string }[] } | null;
  errors?: { message: string }[];
}
interface RestAnswer {
  success?: boolean;
  data?: { claimId: string }[];
}

function graphqlBody(owner: Address): Buffer {
  // Checksummed, as EAS's examples write a recipient; the resolver compares without case.
  return Buffer.from(JSON.stringify({ query: GRAPHQL_QUERY, variables: { r: getAddress(owner) } }));
}

function graphqlIds(status: number, body: Buffer): string[] {
  const answer = JSON.parse(body.toString("utf8")) as GraphqlAnswer;
  if (status !== 200 || answer.errors !== undefined || answer.data?.attestations == null) {
    throw new Error(`graphql failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
  }
  return answer.data.attestations.map((a) => a.id);
}

function restIds(status: number, body: Buffer): string[] {
  const answer = JSON.parse(body.toString("utf8")) as RestAnswer;
  if (status !== 200 || answer.success !== true || answer.data === undefined) throw new Error(`rest failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
  return answer.data.map((a) => a.claimId);
}

export async function graphqlRows(ctx: BenchContext): Promise<SectionRows> {
  const { log, profile, root, work } = ctx;
  // The whole stack keeps its dapp database in <work>/stack (bench/sections/stores.ts does the same).
  mkdirSync(join(work, "stack"), { recursive: true });
  const seed = await seedStore(join(work, "stack", "dapp.sqlite"), profile.inspectStore, join(root, "bench-results", "cache"));
  log(`graphql: seeded ${seed.count} attestations in ${seed.seconds.toFixed(1)} s`);
  const stack = await startWholeStack(ctx, "v1");
  try {
    const api = stack.urls.api;
    // Before timing anything: both answer the same attestations (GraphQL newest first, at most TAKE). The
    // seeder leaves a few sample owners empty (their rows went to the target owner): those are left out.
    const owners: Address[] = [];
    let listed = 0;
    for (const owner of seed.sampleOwners) {
      const gql = await fetch(`${api}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: graphqlBody(owner) });
      const rest = await fetch(`${api}/api/core/attestations/${owner}`);
      const fromGraphql = graphqlIds(gql.status, Buffer.from(await gql.arrayBuffer()));
      const fromRest = restIds(rest.status, Buffer.from(await rest.arrayBuffer()));
      if (fromGraphql.length !== Math.min(TAKE, fromRest.length) || fromGraphql.some((id) => !fromRest.includes(id))) {
        throw new Error(`graphql: ${owner}'s attestations differ: GraphQL ${fromGraphql.length}, REST ${fromRest.length}`);
      }
      if (fromRest.length === 0) continue;
      owners.push(owner);
      listed += fromRest.length;
    }
    if (owners.length === 0) throw new Error("graphql: no seeded owner has attestations");
    const bodies = owners.map(graphqlBody);
    const graphqlRequest = (i: number) => ({ method: "POST" as const, path: "/graphql", body: bodies[i % bodies.length] as Buffer, headers: { "content-type": "application/json" } });
    const restRequest = (i: number) => ({ method: "GET" as const, path: `/api/core/attestations/${owners[i % owners.length]}` });

    const load = (next: LoadOptions["next"], check: (status: number, body: Buffer) => unknown): LoadOptions => ({
      baseUrl: api,
      concurrency: CONCURRENCY,
      count: profile.requests,
      warmup: profile.warmup,
      next,
      check: (status, body) => void check(status, body),
    });
    // Interleaved rounds: noise from the rest of the machine falls on both alike.
    const [gql, rest] = await runInterleaved([load(graphqlRequest, graphqlIds), load(restRequest, restIds)], ROUNDS);
    if (gql === undefined || rest === undefined) throw new Error("graphql: a load did not run");
    log(`graphql: GraphQL ${gql.rps.toFixed(0)}/s p50 ${gql.p50.toFixed(2)} ms p99 ${gql.p99.toFixed(2)} ms; REST ${rest.rps.toFixed(0)}/s p50 ${rest.p50.toFixed(2)} ms p99 ${rest.p99.toFixed(2)} ms`);

    const [rps, p50, p99] = graphqlFigureNames();
    const floorName = (m: string): string => `REST attestations by owner c${CONCURRENCY} ${m}`;
    const figures = [
      figure("api", rps as string, "req/s", gql.rps, { name: floorName("rps"), value: rest.rps }),
      figure("api", p50 as string, "ms", gql.p50, { name: floorName("p50"), value: rest.p50 }),
      figure("api", p99 as string, "ms", gql.p99, { name: floorName("p99"), value: rest.p99 }),
    ];
    const note =
      `graphql: the whole stack (Rollups v1) on ${seed.count.toLocaleString("en-US")} seeded attestations; the same ${owners.length} owners for both ` +
      `(${(listed / owners.length).toFixed(1)} attestations each on average; ${seed.sampleOwners.length - owners.length} empty sample owners left out; each checked first to answer the same ids both ways); ` +
      `${profile.requests.toLocaleString("en-US")} timed requests each after ${profile.warmup} to warm up, ${CONCURRENCY} connections, ${ROUNDS} interleaved rounds; ` +
      `answers of ${gql.lastBodyBytes} bytes (GraphQL: ${TAKE} at most, with data and decodedDataJson) against ${rest.lastBodyBytes} (REST), for the last owner asked; rate limits off.`;
    return { figures, notes: [note] };
  } finally {
    await stack.stop();
  }
}
