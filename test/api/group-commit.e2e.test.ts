/**
 * Group commit against the real stack (issue 13): 200 claims, grants and revokes at once through the api.
 * Every write gets its own answer (its own id, or its own error code), the WebSocket sees each applied
 * write once, and the chain sees far fewer transactions than writes.
 */
import nacl from "tweetnacl";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AttestationClient, connectEvents, type EventStream } from "../../client/index.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { failure, TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";

let stack: TestStack;
let provider: ProviderServer;
let events: EventStream;
let base: AttestationClient;
let schemaId: Hex;

const BUCKETS = { field: "data.balance", boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const expiresAt = () => Math.floor(Date.now() / 1000) + 3600;

async function inputCount(): Promise<number> {
  const count = await stack.client.publicClient.readContract({
    address: stack.addresses.inputBox,
    abi: inputBoxAbi,
    functionName: "getNumberOfInputs",
    args: [stack.addresses.dapp],
  });
  return Number(count);
}

beforeAll(async () => {
  provider = await startProviderServer();
  provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", RATE_LIMITS: "off", JWT_SECRET: TEST_JWT_SECRET, NOTICE_POLL_MS: "100" },
  });
  base = new AttestationClient({ baseUrl: stack.urls.api });
  const admin = base.withToken(await tokenFor("admin", stack.addresses.admin));
  ({ schema_id: schemaId } = await admin.registerSchema({
    provider: "http",
    flowType: "balance",
    domain: "127.0.0.1",
    bucketDefinitions: { [BUCKETS.field]: { boundaries: BUCKETS.boundaries, labels: BUCKETS.labels } },
    dataKeys: ["data.currency"],
    freshnessHalfLife: 86400,
  }));
  await admin.registerEncryptionKey({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
  events = await connectEvents(stack.urls.ws);
}, 180_000);

afterAll(async () => {
  await events?.close();
  await stack?.stop();
  await provider?.close();
});

it("200 concurrent writes: each its own id or code, each applied write on the WebSocket once, far fewer transactions", { timeout: 240_000 }, async () => {
  const ownerA = base.withToken(await tokenFor("user", USER_A));
  const ownerB = base.withToken(await tokenFor("user", USER_B));
  // Grants of A that the writes below revoke (10 by A itself, 10 attempted by B).
  const existing = await Promise.all(Array.from({ length: 20 }, () => ownerA.grant({ requester: freshAddress(), schemaId, expiresAt: expiresAt() })));
  const claimants = await Promise.all(
    Array.from({ length: 14 }, async () => {
      const address = freshAddress();
      return { address: address.toLowerCase(), client: base.withToken(await tokenFor("user", address)) };
    }),
  );
  const pairRequesters = Array.from({ length: 5 }, freshAddress);
  const before = await inputCount();

  type Outcome = { kind: string; ok: true; value: unknown; owner?: string } | { kind: string; ok: false; status: number; code: string };
  const settle = async (kind: string, write: Promise<unknown>, owner?: string): Promise<Outcome> => {
    try {
      return { kind, ok: true, value: await write, ...(owner === undefined ? {} : { owner }) };
    } catch {
      const error = await failure(write);
      return { kind, ok: false, status: error.status, code: error.code };
    }
  };
  const writes: Promise<Outcome>[] = [
    ...Array.from({ length: 140 }, (_, i) => {
      const claimant = claimants[i % claimants.length] as (typeof claimants)[number];
      const write = claimant.client.claim({ provider: "http", params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} }, bucketDefinition: BUCKETS });
      return settle("claim", write, claimant.address);
    }),
    ...Array.from({ length: 20 }, () => settle("grant", ownerB.grant({ requester: freshAddress(), schemaId, expiresAt: expiresAt() }))),
    // Five pairs of grants of the same triple: the first to reach the rollup applies, the other is a duplicate.
    ...pairRequesters.flatMap((requester) => [0, 1].map(() => settle("pair", ownerB.grant({ requester, schemaId, expiresAt: expiresAt() })))),
    ...existing.slice(0, 10).map((g) => settle("revoke", ownerA.revokeGrant(g.grantId))),
    ...existing.slice(10).map((g) => settle("revoke-not-owner", ownerB.revokeGrant(g.grantId))),
    ...Array.from({ length: 10 }, (_, i) => settle("revoke-unknown", ownerA.revokeGrant(`0x${(i + 1).toString(16).padStart(64, "e")}`))),
  ];
  expect(writes).toHaveLength(200);
  const outcomes = await Promise.all(writes);
  const of = (kind: string) => outcomes.filter((o) => o.kind === kind);

  // Every write has its own answer.
  expect(of("claim").every((o) => o.ok)).toBe(true);
  expect(of("grant").every((o) => o.ok)).toBe(true);
  expect(of("revoke").every((o) => o.ok)).toBe(true);
  expect(of("revoke-not-owner").map((o) => (o.ok ? "ok" : `${o.status} ${o.code}`))).toEqual(Array(10).fill("403 NOT_OWNER"));
  expect(of("revoke-unknown").map((o) => (o.ok ? "ok" : `${o.status} ${o.code}`))).toEqual(Array(10).fill("404 NOT_FOUND"));
  const pairs = of("pair");
  expect(pairs.filter((o) => o.ok)).toHaveLength(5);
  expect(pairs.filter((o) => !o.ok).map((o) => (o.ok ? "" : o.code))).toEqual(Array(5).fill("ROLLUP_REJECTED"));

  // Each success has its own id, readable as the right object.
  const claims = of("claim").map((o) => (o.ok ? { ...(o.value as { claimId: Hex }), owner: o.owner as string } : undefined)).filter((c) => c !== undefined);
  const grants = [...of("grant"), ...pairs].flatMap((o) => (o.ok ? [o.value as { grantId: Hex }] : []));
  expect(new Set(claims.map((c) => c.claimId)).size).toBe(140);
  expect(new Set(grants.map((g) => g.grantId)).size).toBe(25);
  for (const claim of claims.slice(0, 40)) expect((await base.attestation(claim.claimId)).owner).toBe(claim.owner);
  const listed = await base.attestations(claimants[0]?.address as string);
  expect(listed.map((a) => a.claimId).sort()).toEqual(claims.filter((c) => c.owner === claimants[0]?.address).map((c) => c.claimId).sort());
  for (const requester of pairRequesters) expect((await base.access(USER_B, requester)).hasAccess).toBe(true);

  // The WebSocket saw each applied write once.
  const lastClaim = claims[claims.length - 1] as { claimId: Hex };
  await events.waitFor((e) => e.event === "attestation:created" && e.data.claimId === lastClaim.claimId, 30_000);
  const lastRevoke = existing[9] as { grantId: Hex };
  await events.waitFor((e) => e.event === "grant:revoked" && e.data.grantId === lastRevoke.grantId, 30_000);
  const lastGrant = grants[grants.length - 1] as { grantId: Hex };
  await events.waitFor((e) => e.event === "grant:created" && e.data.grantId === lastGrant.grantId, 30_000);
  const seen = (event: string, key: "claimId" | "grantId") =>
    events.received.filter((e) => e.event === event).map((e) => (e.data as Record<string, string>)[key]);
  const created = seen("attestation:created", "claimId");
  for (const claim of claims) expect(created.filter((id) => id === claim.claimId)).toHaveLength(1);
  const granted = seen("grant:created", "grantId");
  for (const grant of grants) expect(granted.filter((id) => id === grant.grantId)).toHaveLength(1);
  const revoked = seen("grant:revoked", "grantId");
  expect(revoked.sort()).toEqual(existing.slice(0, 10).map((g) => g.grantId).sort());

  // The chain saw far fewer transactions than writes (the first write of a quiet api goes alone).
  const transactions = (await inputCount()) - before;
  expect(transactions).toBeGreaterThan(1);
  expect(transactions).toBeLessThanOrEqual(50);
  // Groups with claims went as compact batches (issue 37): the claims compact, grants and revokes as JSON items in them.
  const { inputs } = await stack.graphql<{ inputs: { edges: { node: { payload: string } }[] } }>(`query { inputs(first: 1000) { edges { node { payload } } } }`);
  const payloads = inputs.edges.slice(before).map((e) => e.node.payload);
  expect(payloads.filter((p) => p.toLowerCase().startsWith("0xc101")).length).toBeGreaterThan(0);
});

it("a dapp killed while batches are in flight loses no write answered as a success", { timeout: 240_000 }, async () => {
  const claimants = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const address = freshAddress();
      return { address: address.toLowerCase(), client: base.withToken(await tokenFor("user", address)) };
    }),
  );
  const before = await inputCount();
  const writes = Array.from({ length: 60 }, (_, i) => {
    const claimant = claimants[i % claimants.length] as (typeof claimants)[number];
    return claimant.client
      .claim({ provider: "http", params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} }, bucketDefinition: BUCKETS })
      .then((result) => ({ ok: true as const, claimId: result.claimId, owner: claimant.address }))
      .catch(async (error: unknown) => ({ ok: false as const, code: (await failure(Promise.reject(error))).code }));
  });
  // Kill the dapp once the first batch is on chain, and bring it back: the node hands it the input again.
  for (let waited = 0; (await inputCount()) === before && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  await stack.kill("dapp");
  await stack.start("dapp");
  const outcomes = await Promise.all(writes);
  const successes = outcomes.flatMap((o) => (o.ok ? [o] : []));
  // A write may fail only with the code of an unanswered rollup; none is lost once answered.
  expect(outcomes.flatMap((o) => (o.ok ? [] : [o.code])).filter((code) => code !== "ROLLUP_UNAVAILABLE")).toEqual([]);
  expect(successes.length).toBeGreaterThan(0);
  for (const success of successes) expect((await base.attestation(success.claimId)).owner).toBe(success.owner);
  const listed = new Set((await Promise.all(claimants.map((c) => base.attestations(c.address)))).flat().map((a) => a.claimId));
  for (const success of successes) expect(listed.has(success.claimId)).toBe(true);
});
