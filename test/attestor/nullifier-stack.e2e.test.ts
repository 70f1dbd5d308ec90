/**
 * Issue 52 end to end (docs/nullifiers.md): the stack as `npm start -- --attestors 3 --demo-provider` runs
 * it, whose three attestors hold the key the stack dealt 2 of 3 (scripts/lib/stack-nullifier-keys.ts),
 * registered as npm start registers it. The demo provider's accounts (one per bearer token) prove for a
 * schema unique per account: account 1 for owner A through the api's own prover; the same account for owner
 * B, proven on B's machine (`npm run prove`), refused ACCOUNT_ALREADY_BOUND; account 2 for B accepted; A
 * again a refresh. What one attestor's share alone makes is refused by the dapp. No account id is in any
 * input's calldata, notice, report, receipt, api answer or log line of the run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createPublicClient, hexToString, http, stringToHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attestationInput, proveOnUserSide, type ProvingSchema } from "../../client/prove.ts";
import { keysOfWire } from "../../common/claim-nullifier.ts";
import { dealKey } from "../../common/nullifier-dealer.ts";
import { schemaIdOf } from "../../common/ids.ts";
import type { NullifierKeys } from "../../common/nullifier.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { localAttestorAddress, registerLocalAttestor } from "../../scripts/lib/attestor-registration.ts";
import { demoAccountOf } from "../../scripts/lib/demo-account.ts";
import { demoProviderCa } from "../../scripts/lib/stack-pieces.ts";
import { registerLocalNullifierKeys } from "../../scripts/lib/stack-nullifier-keys.ts";
import { TEST_JWT_SECRET, tokenFor } from "../support/api-fixtures.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { callApi, recipient, runProjectScript, type ApiAnswer } from "../api/attestor-e2e-support.ts";

const definition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const field = "data.balance";
const unique = { provider: "http", flowType: "balance-per-account", domain: "localhost", bucketDefinitions: { [field]: definition }, dataKeys: ["data.currency"], freshnessHalfLife: 3600, proof: "attestor" as const, attestorQuorum: 2, accountIdField: "data.accountId" };
const uniqueId = schemaIdOf(unique);
/** Two bank logins of the demo provider: each opens its own account. */
const LOGINS = { one: "Bearer login-one-4f2a", two: "Bearer login-two-9c7d" };
const ACCOUNTS = Object.values(LOGINS).map(demoAccountOf);
const ownerA = privateKeyToAccount(hardhatPrivateKey(3));
const ownerB = privateKeyToAccount(hardhatPrivateKey(4));
const ownerC = privateKeyToAccount(hardhatPrivateKey(5));
const lower = (a: Address): Address => a.toLowerCase() as Address;

let stack: TestStack;
const call = (method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer> => callApi(stack.urls.api, method, path, token, body);
const demoUrl = (): string => `${stack.urls.demoProvider as string}/balance.json`;
/** Every api answer of the run, searched at the end. */
const answers: unknown[] = [];
const claimIds: Hex[] = [];

async function apiClaim(owner: Address, login: string): Promise<ApiAnswer> {
  const answer = await call("POST", "/api/core/claim", await tokenFor("user", owner), {
    provider: "http",
    params: { url: demoUrl(), method: "GET", headers: { authorization: login } },
    bucketDefinition: { field, ...definition },
    schemaId: uniqueId,
    proofMode: "reveal",
  });
  answers.push(answer.body);
  if (answer.status === 200) claimIds.push(answer.body.data?.claimId as Hex);
  return answer;
}

beforeAll(async () => {
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL (issue 51)
    attestor: true,
    attestors: 3,
    demoProvider: true,
    env: { JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", ATTESTOR_PROVERS: "2", LOG_LEVEL: "info" },
  });
  // As npm start does once its api is up: the attestors, then the key they hold in shares.
  const env = { JWT_SECRET: TEST_JWT_SECRET };
  for (const k of [1, 2, 3]) expect(await registerLocalAttestor(stack.urls.api, stack.dataDir, env, k)).toBe("registered");
  expect(await registerLocalNullifierKeys(stack.urls.api, stack.dataDir, env)).toBe("2 of 3, registered");
  expect(await registerLocalNullifierKeys(stack.urls.api, stack.dataDir, env)).toBe("2 of 3, already registered");
  const admin = await tokenFor("admin", stack.addresses.admin);
  const key = { publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" };
  expect((await call("POST", "/api/core/encryption-key", admin, key)).status).toBe(200);
  expect((await call("POST", "/api/core/provider-schema", admin, unique)).body.data).toEqual({ schema_id: uniqueId });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

describe("one demo-provider account backs one owner, with three attestors holding the key 2 of 3", () => {
  it("the api reads the registered key set: t = 2, each share held by one of the stack's attestors", async () => {
    const keys = await call("GET", "/api/core/nullifier-keys");
    expect(keys.status).toBe(200);
    expect(keys.body.data).toMatchObject({ threshold: 2, commitments: [1, 2, 3].map((k) => expect.objectContaining({ index: k, attestor: lower(localAttestorAddress(stack.dataDir, k)) })) });
  });

  it("a key set registration through the api that is not the admin's, not well formed or under another group key is refused, nothing changed", async () => {
    const registered = (await call("GET", "/api/core/nullifier-keys")).body.data;
    const other = dealKey({ threshold: 2, indices: [1, 2, 3] });
    const holders = [1, 2, 3].map((index) => ({ index, address: localAttestorAddress(stack.dataDir, index) }));
    const admin = await tokenFor("admin", stack.addresses.admin);
    const asUser = await call("POST", "/api/core/nullifier-keys", await tokenFor("user", ownerA.address), { keySet: other.keySet, attestors: holders });
    expect([asUser.status, asUser.body.error?.code]).toEqual([403, "AUTH_INSUFFICIENT"]);
    const malformed = await call("POST", "/api/core/nullifier-keys", admin, { keySet: { ...other.keySet, groupKey: "0x12" }, attestors: holders });
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
    expect(JSON.stringify(malformed.body.error)).toContain("keySet.groupKey");
    const anotherKey = await call("POST", "/api/core/nullifier-keys", admin, { keySet: other.keySet, attestors: holders });
    expect([anotherKey.status, anotherKey.body.error?.code]).toEqual([422, "ROLLUP_REJECTED"]);
    expect(JSON.stringify(anotherKey.body.error)).toMatch(/keySet\.groupKey: not the registered group key 0x[0-9a-f]{64}: a new key would change every nullifier/);
    expect((await call("GET", "/api/core/nullifier-keys")).body.data).toEqual(registered);
  });

  it("account 1 for A through the api; for B on B's machine, ACCOUNT_ALREADY_BOUND; account 2 for B accepted; A again a refresh", { timeout: 300_000 }, async () => {
    const first = await apiClaim(ownerA.address, LOGINS.one);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toMatchObject({ bucket: "mid", uniquePerAccount: true });
    const view = await call("GET", `/api/core/attestation/${first.body.data?.claimId as string}`);
    expect(view.body.data).toMatchObject({ owner: lower(ownerA.address), schemaId: uniqueId, uniquePerAccount: true });
    answers.push(view.body);

    // B proves the same account on its own machine and relays through the api: the rollup's answer, 409.
    const env = { ROLLUP_URL: stack.urls.node, RPC_URL: stack.urls.rpc, ATTESTOR_URL: stack.urls.attestors.join(","), ATTESTOR_CA_FILES: demoProviderCa(stack) };
    const prove = (login: string, token: string) =>
      runProjectScript("prove", ["--url", demoUrl(), "--schema", uniqueId, "--header", `Authorization: ${login}`, "--mode", "reveal", "--token", token, "--api", stack.urls.api], env);
    const stolen = await prove(LOGINS.one, await tokenFor("user", ownerB.address));
    expect(stolen.status, stolen.stderr).toBe(1);
    expect(stolen.stderr).toMatch(/^ACCOUNT_ALREADY_BOUND: /);
    const own = await prove(LOGINS.two, await tokenFor("user", ownerB.address));
    expect(own.status, own.stderr).toBe(0);
    const ownOut = JSON.parse(own.stdout) as { claimId: Hex; uniquePerAccount: boolean };
    expect(ownOut.uniquePerAccount).toBe(true);
    claimIds.push(ownOut.claimId);
    answers.push(stolen.stdout, stolen.stderr, own.stdout);

    const refresh = await apiClaim(ownerA.address, LOGINS.one);
    expect(refresh.status, JSON.stringify(refresh.body)).toBe(200);
    const byOwner = async (owner: Address) => ((await call("GET", `/api/core/attestations/${owner}`)).body.data as unknown as unknown[]).length;
    expect([await byOwner(ownerA.address), await byOwner(ownerB.address)]).toEqual([2, 1]);
  });

  it("what one attestor's share alone makes is refused by the dapp, with its reason, writing nothing", { timeout: 180_000 }, async () => {
    const wire = (await call("GET", "/api/core/nullifier-keys")).body.data as { threshold: number; groupKey: Hex; commitments: { index: number; commitment: Hex; attestor: Address }[]; registeredAt: number };
    const keys = keysOfWire({ threshold: wire.threshold, group_key: wire.groupKey, commitments: wire.commitments, registered_at: wire.registeredAt });
    // Both attestors sign (the schema's quorum), but the nullifier is finished from attestor 1's share alone,
    // as if one share were the key: N = k_1·P, with an honest unblinding proof for it.
    const alone: NullifierKeys = { ...keys, threshold: 1 };
    const schema: ProvingSchema = { schemaId: uniqueId, domain: "localhost", field, definition, quorum: 2, dataKeys: ["data.currency"], bucketFields: [field], nullifier: { accountField: "data.accountId", keys: alone } };
    const proven = await proveOnUserSide({
      request: { url: demoUrl(), headers: { authorization: LOGINS.two } },
      schema,
      sealTo: { kind: "admin", publicKey: Buffer.from(recipient.publicKey).toString("base64") },
      owner: lower(ownerC.address),
      attestorUrls: stack.urls.attestors,
      mode: "reveal",
      caFiles: demoProviderCa(stack),
    });
    expect(proven.nullifier?.shares.map((s) => s.index)).toEqual([1]);
    const verdict = await stack.send(attestationInput(proven, lower(ownerC.address)), ownerC);
    expect(verdict.status).toBe("REJECTED");
    const report = hexToString(verdict.reports[0] as Hex);
    expect(report).toContain("NULLIFIER_REJECTED");
    expect(report).toContain("too_few_shares");
    // The same share given twice does not make two.
    const doubled = { ...proven, nullifier: { ...(proven.nullifier as NonNullable<typeof proven.nullifier>), shares: [proven.nullifier?.shares[0], proven.nullifier?.shares[0]] } } as typeof proven;
    const twice = await stack.send(attestationInput(doubled, lower(ownerC.address)), ownerC);
    expect([twice.status, hexToString(twice.reports[0] as Hex)]).toEqual(["REJECTED", expect.stringContaining("duplicate_share")]);
    expect(((await call("GET", `/api/core/attestations/${ownerC.address}`)).body.data as unknown as unknown[]).length).toBe(0);
  });

  it("no account id is in any input's calldata, notice, report, receipt, api answer or log line of the run", { timeout: 120_000 }, async () => {
    const traces = ACCOUNTS.flatMap((account) => [account, stringToHex(account).slice(2), Buffer.from(account).toString("base64")]);
    const read = JSON.stringify(await stack.graphql<unknown>("{ inputs(first: 1000) { edges { node { index payload notices { edges { node { payload } } } reports { edges { node { payload } } } } } } }"));
    const payloads = (read.match(/0x[0-9a-f]+/g) ?? []).map((hex) => hexToString(hex as Hex));
    expect(payloads.filter((text) => text.includes('"nullifier"')).length).toBeGreaterThanOrEqual(4);
    // The transactions' calldata on the chain, as anyone reads it.
    const calldata: string[] = [];
    const chain = createPublicClient({ transport: http(stack.urls.rpc) });
    const latest = await chain.getBlockNumber();
    for (let n = 0n; n <= latest; n++) calldata.push(...(await chain.getBlock({ blockNumber: n, includeTransactions: true })).transactions.map((t) => t.input));
    // The claims that carry a nullifier are among them (its key's bytes in the payload, as sent).
    expect(calldata.filter((input) => input.includes(stringToHex('"nullifier"').slice(2))).length).toBeGreaterThanOrEqual(4);
    const receipts = await Promise.all(claimIds.map(async (id) => (await call("GET", `/api/core/attestation/${id}/receipt`)).body));
    expect(receipts.filter((r) => (r as { success: boolean }).success).length).toBe(claimIds.length);
    const logDir = join(stack.dataDir, "logs");
    const logs = readdirSync(logDir).map((f) => [f, readFileSync(join(logDir, f), "latin1")] as const);
    expect(logs.length).toBeGreaterThanOrEqual(6);
    for (const [where, text] of [["inputs", read], ["decoded payloads", payloads.join("\n")], ["calldata", calldata.join("\n")], ["receipts", JSON.stringify(receipts)], ["answers", JSON.stringify(answers)], ...logs] as const) {
      for (const trace of traces) expect(text.toLowerCase(), where).not.toContain(trace.toLowerCase());
    }
  });
});
