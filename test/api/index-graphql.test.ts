/**
 * The index and EAS's GraphQL over it, on PGlite and on a real PostgreSQL server the suite starts, fed by a recorded node (test/support/index-node.ts): every
 * filter, order, page and aggregate against what the notices said; a replaced node empties the index; a read
 * that fails mid-way leaves the index where it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress, type Address, type Hex } from "viem";
import { changeListener, openIndex, type OpenIndex } from "../../api/index/db.ts";
import { Indexer } from "../../api/index/indexer.ts";
import { graphqlExecutor, type GraphqlBody } from "../../api/graphql/execute.ts";
import { ADMIN, BANK_SCHEMA, RecordedNode } from "../support/index-node.ts";
import { postgresBinaries, startPostgres, type PostgresServer } from "../support/postgres.ts";
import { until } from "../support/until.ts";

const A: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const B: Address = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const C: Address = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const T0 = 1_700_000_000;

const pgBinaries = postgresBinaries();
if (pgBinaries === undefined) console.warn("index-graphql: PostgreSQL's initdb and pg_ctl are not installed: the suite runs on PGlite only (Debian: apt-get install postgresql)");

describe.each(pgBinaries === undefined ? ["PGlite"] : ["PGlite", "PostgreSQL"])("the index on %s", (backend) => {
  let server: PostgresServer | undefined;
  let index: OpenIndex;
  let node: RecordedNode;
  let indexer: Indexer;
  // The indexer that replaces it in the last test: the answers kept follow both.
  let moved: Indexer | undefined;
  let run: (query: string, variables?: Record<string, unknown>) => Promise<{ status: number; body: GraphqlBody }>;
  let schemaId: Hex;
  let other: Hex;
  const ids: Hex[] = [];

  async function catchUp(): Promise<void> {
    for (;;) {
      const { caughtUp } = await indexer.step();
      if (caughtUp) return;
    }
  }

  const data = async (query: string, variables?: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const { status, body } = await run(query, variables);
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(status).toBe(200);
    return body.data as Record<string, unknown>;
  };
  const idsOf = (list: unknown): string[] => (list as { id: string }[]).map((a) => a.id);

  beforeAll(async () => {
    if (backend === "PostgreSQL") server = await startPostgres();
    index = await openIndex(server === undefined ? { kind: "pglite", dir: "memory://" } : { kind: "postgres", url: server.url, schema: "index_test" }, { migrate: true, readTimeoutMs: 2_000 });
    node = new RecordedNode();
    indexer = new Indexer(index, node, { application: "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e", pageSize: 3, log: () => undefined });
    await indexer.prepare();
    schemaId = node.registerSchema();
    other = node.registerSchema({ ...BANK_SCHEMA, domain: "other.test", name: "Other" }, T0 + 1);
    ids.push(...node.attest(schemaId, [A], "low", T0 + 10));
    ids.push(...node.attest(schemaId, [A, B, C], "mid", T0 + 20));
    ids.push(...node.attest(other, [B], "high", T0 + 30, B));
    ids.push(...node.attest(schemaId, [C], "high", T0 + 40));
    node.revoke(ids[1] as Hex, A, schemaId, T0 + 50);
    // Every query of the suite goes through the answers kept (api/graphql/answers.ts), versioned by the
    // indexers' commits as the indexer's own /graphql is: a stale answer would fail the tests after a change.
    const execute = graphqlExecutor(index, () => `${indexer.version}:${moved?.version ?? 0}`);
    run = (query, variables) => execute({ query, variables });
    await catchUp();
  }, 60_000);

  afterAll(async () => {
    await index?.close();
    await server?.stop();
  });

  describe("the indexer", () => {
    it("applies every input once, in order, past the batch notice and across pages cut mid-input", () => {
      expect(indexer.state).toMatchObject({ lastInput: node.inputs.length - 1, attestations: 6 });
    });

    it("leaves the index where it was when the node fails mid-read, and goes on from there", async () => {
      const before = indexer.state.lastInput;
      const [id] = node.attest(other, [C], "low", T0 + 60);
      node.failNext = 1;
      await expect(indexer.step()).rejects.toThrow(/went away/);
      expect(indexer.state.lastInput).toBe(before);
      await catchUp();
      expect(indexer.state.lastInput).toBe(before + 1);
      ids.push(id as Hex);
    });

    it("marks rows proven as far as the node's claimed epochs go", async () => {
      for (const input of node.inputs.slice(0, 4)) input.proven = true;
      await indexer.markProven();
      expect(indexer.state.provenThrough).toBe(3);
      const d = await data(`{ attestations(orderBy: [{ time: asc }]) { id proven inputIndex } }`);
      expect((d.attestations as { proven: boolean; inputIndex: number }[]).map((a) => a.proven)).toEqual([true, true, true, true, false, false, false]);
    });
  });

  describe("EAS's GraphQL over the index", () => {
    it("answers the latest 25 of everything, newest first", async () => {
      const d = await data(`query { attestations(take: 25, orderBy: { time: desc }) { id attester recipient refUID revocable revocationTime expirationTime data time } }`);
      expect(idsOf(d.attestations)).toEqual([...ids].reverse());
      expect((d.attestations as { time: number }[]).map((a) => a.time)).toEqual([T0 + 60, T0 + 40, T0 + 30, T0 + 20, T0 + 20, T0 + 20, T0 + 10]);
    });

    it("filters on every kind of field, with AND, OR and NOT", async () => {
      expect(idsOf((await data(`{ attestations(where: { schemaId: { equals: "${other}" } }) { id } }`)).attestations)).toEqual([ids[4], ids[6]]);
      expect(idsOf((await data(`{ attestations(where: { recipient: { equals: "${A.toLowerCase()}" } }) { id } }`)).attestations)).toEqual([ids[0], ids[1]]);
      expect(idsOf((await data(`{ attestations(where: { attester: { equals: "${B}" } }) { id } }`)).attestations)).toEqual([ids[4]]);
      expect(idsOf((await data(`{ attestations(where: { time: { gte: ${T0 + 20}, lte: ${T0 + 30} } }) { id } }`)).attestations)).toEqual([ids[1], ids[2], ids[3], ids[4]]);
      expect(idsOf((await data(`{ attestations(where: { decodedDataJson: { contains: "high" } }) { id } }`)).attestations)).toEqual([ids[4], ids[5]]);
      expect(idsOf((await data(`{ attestations(where: { revoked: { equals: true } }) { id } }`)).attestations)).toEqual([ids[1]]);
      expect(idsOf((await data(`{ attestations(where: { OR: [{ recipient: { equals: "${B}" } }, { time: { lt: ${T0 + 15} } }] }) { id } }`)).attestations)).toEqual([ids[0], ids[2], ids[4]]);
      expect(idsOf((await data(`{ attestations(where: { AND: [{ schemaId: { equals: "${schemaId}" } }], NOT: [{ recipient: { in: ["${A}", "${C}"] } }] }) { id } }`)).attestations)).toEqual([ids[2]]);
      expect(idsOf((await data(`{ attestations(where: { recipient: { not: { equals: "${A}" } }, schema: { is: { creator: { equals: "${ADMIN}" } } } }) { id } }`)).attestations)).toEqual([ids[2], ids[3], ids[4], ids[5], ids[6]]);
      expect(idsOf((await data(`{ attestations(where: { id: { startsWith: "${(ids[3] as string).slice(0, 12).toUpperCase()}", mode: insensitive } }) { id } }`)).attestations)).toEqual([ids[3]]);
    });

    it("orders on several fields and pages with take, skip and cursor as Prisma does", async () => {
      const all = idsOf((await data(`{ attestations(orderBy: [{ recipient: asc }, { time: desc }]) { id } }`)).attestations);
      expect(all).toHaveLength(7);
      const page = idsOf((await data(`{ attestations(orderBy: [{ recipient: asc }, { time: desc }], take: 2, skip: 1, cursor: { id: "${all[2]}" }) { id } }`)).attestations);
      expect(page).toEqual(all.slice(3, 5));
      const first = await data(`{ findFirstAttestation(orderBy: { time: desc }) { id } }`);
      expect((first.findFirstAttestation as { id: string }).id).toBe(ids[6]);
    });

    it("answers distinct, and the OrThrow queries with an error when there is nothing", async () => {
      const d = await data(`{ attestations(distinct: [recipient], orderBy: [{ time: desc }]) { id recipient } }`);
      expect(d.attestations).toEqual([
        { id: ids[6], recipient: getAddress(C) },
        { id: ids[4], recipient: getAddress(B) },
        { id: ids[1], recipient: getAddress(A) },
      ]);
      expect((await data(`{ getAttestation(where: { id: "${ids[2]}" }) { id } }`)).getAttestation).toEqual({ id: ids[2] });
      const missing = await run(`{ getAttestation(where: { id: "0x${"00".repeat(32)}" }) { id } }`);
      expect(missing.body.errors?.[0]).toMatchObject({ message: "No Attestation found", extensions: { code: "NOT_FOUND" } });
    });

    it("counts, groups and aggregates", async () => {
      const d = await data(`{ all: aggregateAttestation { _count { _all } } one: aggregateAttestation(where: { schemaId: { equals: "${schemaId}" } }) { _count { _all id } } revoked: aggregateAttestation(where: { revoked: { equals: true } }) { _count { _all } _min { time } _max { time recipient } } }`);
      expect(d).toEqual({ all: { _count: { _all: 7 } }, one: { _count: { _all: 5, id: 5 } }, revoked: { _count: { _all: 1 }, _min: { time: T0 + 20 }, _max: { time: T0 + 20, recipient: getAddress(A) } } });
      const g = await data(`{ groupByAttestation(by: [schemaId], orderBy: [{ _count: { id: desc } }]) { schemaId _count { _all } } }`);
      expect(g.groupByAttestation).toEqual([
        { schemaId, _count: { _all: 5 } },
        { schemaId: other, _count: { _all: 2 } },
      ]);
    });

    it("answers schemata with creator, txid, time, their names and their attestations' count", async () => {
      const d = await data(`{ schema(where: { id: "${schemaId}" }) { id schema creator resolver revocable index txid time name provider schemaNames { name isCreator } _count { attestations } attestations(take: 2, orderBy: { time: desc }) { id } } schemata(orderBy: { attestations: { _count: desc } }) { id } }`);
      expect(d.schema).toMatchObject({ id: schemaId, creator: ADMIN, index: "1", name: "Bank balance", provider: "http", schemaNames: [{ name: "Bank balance", isCreator: true }], _count: { attestations: 5 } });
      expect((d.schema as { txid: string }).txid).toMatch(/^0x[0-9a-f]{64}$/);
      expect(idsOf((d.schema as { attestations: unknown }).attestations)).toEqual([ids[5], ids[3]]);
      expect(idsOf(d.schemata)).toEqual([schemaId, other]);
      expect((await data(`{ attestation(where: { id: "${ids[4]}" }) { schema { id name } } }`)).attestation).toEqual({ schema: { id: other, name: "Other" } });
    });

    it("answers null for an attestation or schema it does not have", async () => {
      expect(await data(`{ attestation(where: { id: "0x${"00".repeat(32)}" }) { id } schema(where: { id: "nope" }) { id } }`)).toEqual({ attestation: null, schema: null });
    });

    it.each([
      ["a take past the limit", `{ attestations(take: 101) { id } }`, /take: 101 is out of range/],
      ["a skip past the limit", `{ attestations(skip: 10001) { id } }`, /skip: 10001 is out of range/],
      ["lists inside lists past the row limit", `{ schemata { attestations { schema { attestations { id } } } } }`, /may answer \d+ rows/],
      ["a field EAS has but the index does not", `{ attestations { id ipfs } }`, /Cannot query field "ipfs"/],
      ["the sealed data", `{ attestations { encrypted_data } }`, /Cannot query field "encrypted_data"/],
      ["a where nested past the limit", `{ attestations(where: { AND: [{ AND: [{ AND: [{ AND: [{ AND: [{ AND: [{ AND: [{ id: { equals: "x" } }] }] }] }] }] }] }] }) { id } }`, /nested \d+ levels deep/],
    ])("refuses %s before any read", async (_name, query, message) => {
      const { status, body } = await run(query);
      expect(status).toBe(400);
      expect(body.errors?.[0]?.message).toMatch(message);
    });

    it("refuses a variable's take out of range before any read", async () => {
      const { status, body } = await run(`query($n: Int) { attestations(take: $n) { id } }`, { n: 500 });
      expect(status).toBe(400);
      expect(body.errors?.[0]?.message).toMatch(/take: 500 is out of range/);
    });
  });

  describe("a large input", () => {
    it("applies an input whose notices alone pass the read ahead whole", async () => {
      const owners = Array.from({ length: 20 }, (_, i) => getAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`));
      const made = node.attest(other, owners, "mid", T0 + 70);
      await catchUp();
      expect(indexer.state.attestations).toBe(7 + made.length);
      expect((await data(`{ aggregateAttestation(where: { decodedDataJson: { contains: "mid" }, time: { equals: ${T0 + 70} } }) { _count { _all } } }`)).aggregateAttestation).toEqual({ _count: { _all: 20 } });
    });
  });

  describe("a replaced node", () => {
    it("empties the index when the node no longer has what it indexed, then reads it again", async () => {
      const fresh = new RecordedNode();
      const s = fresh.registerSchema();
      fresh.attest(s, [C], "low", T0);
      moved = new Indexer(index, fresh, { application: "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e", pageSize: 100, log: () => undefined });
      await moved.prepare();
      expect(await moved.verify()).toBe(false);
      for (;;) if ((await moved.step()).caughtUp) break;
      expect(moved.state).toMatchObject({ lastInput: 1, attestations: 1 });
      expect(idsOf((await data(`{ attestations { id } }`)).attestations)).toHaveLength(1);
    });
  });

  describe("answers kept", () => {
    it("answers the same request again without a read until the index changes, and reads for a fresh request", async () => {
      let reads = 0;
      const counted = { read: <T>(read: Parameters<OpenIndex["read"]>[0]): Promise<T> => ((reads += 1), index.read(read) as Promise<T>) };
      const execute = graphqlExecutor(counted, () => String(indexer.version));
      const request = { query: `{ aggregateAttestation { _count { _all } } attestations(take: 1, orderBy: { time: desc }) { id } }` };
      const first = await execute(request);
      const readsOfOne = reads;
      expect(readsOfOne).toBeGreaterThan(0);
      // Kept on its second sighting, served from the third, as the same JSON.
      expect((await execute(request)).body).toEqual(first.body);
      expect(reads).toBe(2 * readsOfOne);
      const kept = await execute(request);
      expect(reads).toBe(2 * readsOfOne);
      expect(kept.body).toEqual(first.body);
      expect(kept.text).toBe(JSON.stringify(first.body));
      // Requests each seen once (a variable new every time) are read, never kept, and push nothing out.
      const once = `query($n: Int) { attestations(take: 1, skip: $n) { id } }`;
      for (let n = 0; n < 20; n++) await execute({ query: once, variables: { n } });
      const readsAfterOnce = reads;
      expect(readsAfterOnce).toBeGreaterThanOrEqual(2 * readsOfOne + 20);
      await execute(request);
      expect(reads).toBe(readsAfterOnce);
      await execute(request, true);
      expect(reads).toBe(readsAfterOnce + readsOfOne);
      // Another input: the next answer is read again, and says so.
      const before = (first.body.data?.aggregateAttestation as { _count: { _all: number } })._count._all;
      const [id] = node.attest(other, [A], "low", T0 + 80);
      await catchUp();
      const after = await execute(request);
      expect(after.body.data).toEqual({ aggregateAttestation: { _count: { _all: before + 1 } }, attestations: [{ id }] });
      expect(reads).toBe(readsAfterOnce + 2 * readsOfOne);
      // A refusal or a failed field is never kept.
      const bad = { query: `{ attestations(take: 500) { id } }` };
      for (let k = 0; k < 3; k++) expect((await execute(bad)).status).toBe(400);
      expect(reads).toBe(readsAfterOnce + 2 * readsOfOne);
    });

    // Only PostgreSQL has an api reading it itself (with PGlite the api asks the indexer).
    if (backend === "PostgreSQL") it("an api reading PostgreSQL itself hears of every commit (LISTEN), and keeps nothing while it cannot hear", async () => {
      const location = index.location;
      if (location.kind !== "postgres") throw new Error("PostgreSQL only");
      const listener = changeListener(location, 50);
      try {
        const heard = await until(() => listener.version(), (v) => v !== undefined, "the listener connected", 10_000, 20);
        const request = { query: `{ attestations(take: 1, orderBy: { time: desc }) { id } }` };
        const execute = graphqlExecutor(index, listener.version);
        // Asked twice, the answer is kept (the third is served from it), and only the change heard can retire it.
        const first = await execute(request);
        await execute(request);
        expect((await execute(request)).text).toBe(JSON.stringify(first.body));
        const [id] = node.attest(schemaId, [B], "mid", T0 + 90);
        await catchUp();
        // The indexer's commit is heard (PostgreSQL delivers it at commit), and the next answer is read again.
        await until(() => listener.version(), (v) => v !== heard, "the commit's notification", 10_000, 10);
        expect((await execute(request)).body.data).toEqual({ attestations: [{ id }] });
        expect(first.body.data).not.toEqual({ attestations: [{ id }] });
      } finally {
        await listener.close();
      }
      expect(listener.version()).toBeUndefined();
    });
  });
});
