/**
 * The index on real stacks (docs/index.md), v1 and v2 on PGlite and v1 on a PostgreSQL server the api reads
 * itself: the indexer follows the devnode's notices, the api
 * answers EAS's GraphQL from it, and the whole index equals the rollup's state as its inspect reads say,
 * also after the indexer is SIGKILLed from outside again and again while inputs arrive; a client that
 * names its write's input finds it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress, type Address, type Hex } from "viem";
import { compareIndex, graphqlData } from "../../api/index/check.ts";
import { RollupReader } from "../../api/rollup/inspect.ts";
import { BANK_SCHEMA, schemaIdOfParams } from "../support/index-node.ts";
import { EAS_CURL_BODY, EAS_LATEST_25, easAttestationByUid } from "../support/eas-docs.ts";
import { postgresBinaries, startPostgres, type PostgresServer } from "../support/postgres.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";

const OWNERS: Address[] = ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"];
const LABELS = ["low", "mid", "high"];

const VARIANTS = [
  { name: "Rollups v1, PGlite", rollups: "v1" as const, postgres: false },
  { name: "Rollups v2, PGlite", rollups: "v2" as const, postgres: false },
  // Where initdb is missing the PostgreSQL stack is left out, saying so (CI installs it).
  ...(postgresBinaries() === undefined ? [] : [{ name: "Rollups v1, PostgreSQL read by the api", rollups: "v1" as const, postgres: true }]),
];
if (postgresBinaries() === undefined) console.warn("index.e2e: PostgreSQL's initdb and pg_ctl are not installed: the PostgreSQL stack is left out (Debian: apt-get install postgresql)");

describe.each(VARIANTS)("$name", (variant) => {
  let server: PostgresServer | undefined;
  let stack: TestStack;
  let schemaId: Hex;
  let made = 0;

  const item = (n: number) => ({
    type: "create_attestation",
    params: { schema_id: schemaId, owner: OWNERS[n % OWNERS.length], provider: "http", encrypted_data: "0x0102", bucket_values: { "data.balance": LABELS[n % LABELS.length] } },
  });

  /** One input of `count` attestations; returns its input index. */
  async function attest(count: number): Promise<number> {
    const items = Array.from({ length: count }, (_, i) => item(made + i));
    const verdict = await stack.send(count === 1 ? items[0] : { type: "batch", params: { items } });
    expect(verdict.status).toBe("ACCEPTED");
    made += count;
    return verdict.index;
  }

  const indexed = async (): Promise<number> => (await graphqlData<{ aggregateAttestation: { _count: { _all: number } } }>(`${stack.urls.index}/graphql`, `{ aggregateAttestation { _count { _all } } }`)).aggregateAttestation._count._all;

  async function post(query: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { data?: Record<string, unknown>; errors?: { message: string }[] } }> {
    const response = await fetch(`${stack.urls.api}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ query }) });
    return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] } };
  }

  beforeAll(async () => {
    if (variant.postgres) server = await startPostgres();
    // With DATABASE_URL the indexer writes a PostgreSQL server and the api reads it itself.
    stack = await startStack({ api: true, rollups: variant.rollups, env: { RATE_LIMITS: "off", ...(server === undefined ? {} : { DATABASE_URL: server.url }) } });
    expect((await stack.send({ type: "register_schema", params: BANK_SCHEMA })).status).toBe("ACCEPTED");
    schemaId = schemaIdOfParams(BANK_SCHEMA);
    await attest(1);
    await attest(5);
    await attest(12);
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await server?.stop();
  });

  const reader = (): RollupReader => new RollupReader({ rollupUrl: stack.urls.node, ...(variant.rollups === "v2" ? { v2Application: stack.addresses.dapp } : {}) });

  describe("the index on a real stack", () => {
    it("answers EAS's first query, the latest 25 attestations, through the api", async () => {
      await until(indexed, (n) => n === made, "the index to hold every attestation");
      const { status, body } = await post(`query { attestations(take: 25, orderBy: { time: desc }) { id attester recipient time schemaId decodedDataJson } }`);
      expect(status).toBe(200);
      const list = body.data?.attestations as { id: string; recipient: string; schemaId: string; time: number }[];
      expect(list).toHaveLength(made);
      expect(new Set(list.map((a) => a.recipient))).toEqual(new Set(OWNERS.map((o) => getAddress(o))));
      expect(list.every((a) => a.schemaId === schemaId)).toBe(true);
      expect([...list.map((a) => a.time)]).toEqual([...list.map((a) => a.time)].sort((a, b) => b - a));
    });

    it("answers every query of EAS's GraphQL API page verbatim (its curl body, the latest 25, an attestation by UID)", async () => {
      // docs.attest.org, "GraphQL API": the curl of "Getting Started", byte for byte.
      const curl = await fetch(`${stack.urls.api}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: EAS_CURL_BODY,
      });
      expect(curl.status).toBe(200);
      const fromCurl = ((await curl.json()) as { data: { attestations: { id: string }[] } }).data.attestations;
      expect(fromCurl).toHaveLength(made);
      // "Get the latest 25 attestations".
      const latest = await post(EAS_LATEST_25);
      const list = latest.body.data?.attestations as { id: string; data: string; revocable: boolean; refUID: string }[];
      expect(list).toHaveLength(made);
      expect(list.every((a) => a.revocable && a.refUID === `0x${"00".repeat(32)}` && a.data.startsWith("0x"))).toBe(true);
      // "Get a specific Attestation by UID", with one of ours for EAS's example UID.
      const one = await post(easAttestationByUid(list[0]?.id ?? ""));
      expect(one.body.data?.attestation).toEqual(list[0] === undefined ? null : expect.objectContaining({ id: list[0].id, data: list[0].data }));
    });

    it("equals the rollup's state, attestation by attestation, with a revocation", async () => {
      const [first] = (await graphqlData<{ attestations: { id: string }[] }>(`${stack.urls.index}/graphql`, `{ attestations(take: 1) { id } }`)).attestations;
      const revoked = await stack.send({ type: "revoke_attestation", params: { attestation_id: first?.id, reason: "test" } });
      expect(revoked.status).toBe("ACCEPTED");
      await until(
        async () => (await graphqlData<{ attestation: { revoked: boolean } }>(`${stack.urls.index}/graphql`, `{ attestation(where: { id: "${first?.id}" }) { revoked } }`)).attestation.revoked,
        (revokedNow) => revokedNow,
        "the revocation in the index",
      );
      const comparison = await compareIndex(`${stack.urls.index}/graphql`, reader(), OWNERS);
      expect(comparison).toMatchObject({ schemata: 1, owners: 3, attestations: made, revoked: 1, difference: undefined });
    });

    it("answers a client that names its write's input once the index holds it (read-your-writes)", async () => {
      const input = await attest(1);
      const { status, body } = await post(`{ aggregateAttestation { _count { _all } } }`, { "X-Min-Input-Index": String(input) });
      expect(status).toBe(200);
      expect((body.data?.aggregateAttestation as { _count: { _all: number } })._count._all).toBe(made);
    });

    it("keeps an answer asked again and again until the index's next commit, then answers the new state", async () => {
      const count = `{ aggregateAttestation { _count { _all } } }`;
      const countOf = async (): Promise<number> => ((await post(count)).body.data?.aggregateAttestation as { _count: { _all: number } })._count._all;
      await until(indexed, (n) => n === made, "the index to hold every attestation");
      // Asked three times: kept on the second, served from the third (the api keeps it, whichever the backend).
      for (let k = 0; k < 3; k++) expect(await countOf()).toBe(made);
      await attest(1);
      await until(indexed, (n) => n === made, "the index to hold the new attestation");
      // The commit is heard (the indexer's /changes, or PostgreSQL's LISTEN) and the kept answer retired.
      await until(countOf, (n) => n === made, "the api's answer after the commit", 5_000, 20);
    });

    it("refuses, with what it needs, a request naming an input the index will not reach, and bodies it cannot read", async () => {
      const ahead = await post(`{ aggregateAttestation { _count { _all } } }`, { "X-Min-Input-Index": "1000000" });
      expect(ahead.status).toBe(503);
      expect(ahead.body).toMatchObject({ success: false, error: { code: "INDEX_BEHIND", details: { inputIndex: 1_000_000 } } });
      const indexer = `${stack.urls.index}/graphql`;
      const notJson = await fetch(indexer, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
      expect([notJson.status, ((await notJson.json()) as { errors: { message: string }[] }).errors[0]?.message]).toEqual([400, "the body is not JSON"]);
      const huge = await fetch(indexer, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(100_000) });
      expect(huge.status).toBe(413);
      // The indexer goes on serving.
      expect((await fetch(`${stack.urls.index}/health`)).status).toBe(200);
    });

    it("stays equal to the rollup when the indexer is SIGKILLed from outside while inputs arrive", async () => {
      const sending = (async () => {
        for (let i = 0; i < 12; i++) await attest(1 + (i % 4));
      })();
      for (let kill = 0; kill < 3; kill++) {
        await new Promise((r) => setTimeout(r, 400 + kill * 150));
        await stack.kill("indexer", "SIGKILL");
        await stack.start("indexer");
      }
      await sending;
      await until(indexed, (n) => n === made, `the index to hold all ${made} attestations after the kills`, 60_000);
      const comparison = await compareIndex(`${stack.urls.index}/graphql`, reader(), OWNERS);
      expect(comparison).toMatchObject({ attestations: made, difference: undefined });
    }, 240_000);
  });
});
