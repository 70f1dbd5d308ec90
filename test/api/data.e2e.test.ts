/**
 * GET /api/core/attestation/:claimId/data (an extension beyond the specification) end to end: the real
 * stack with an api that holds the registered key's secret (ENCRYPTION_SECRET_KEY), a real local
 * provider, real grants, expiries and revocations through the rollup. Second api configurations (a wrong
 * key, no key) run in-process through `app.request()` against the same stack's rollup.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nacl from "tweetnacl";
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../api/app.ts";
import { loadConfig } from "../../api/config.ts";
import { openSealed, sealForKey } from "../../common/seal.ts";
import { namedContent } from "../../common/sealed-content.ts";
import { createServices } from "../../api/services.ts";
import { AttestationClient } from "../../client/index.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { inputIdOf } from "../../common/ids.ts";
import { bearer, TEST_JWT_SECRET, tokenFor, USER_A, USER_B, type ErrorShape, failure } from "../support/api-fixtures.ts";
import { recorderFor, type ConformanceRecorder } from "../support/conformance.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";

let stack: TestStack;
let provider: ProviderServer;
let anon: AttestationClient;
let admin: AttestationClient;
let userA: AttestationClient;
let userB: AttestationClient;
let schemaId: Hex;
let claimId: Hex;
let encryptedData: Hex;
const scratchDirs: string[] = [];
const recipient = nacl.box.keyPair();
const a = USER_A.toLowerCase();
const b = USER_B.toLowerCase();
const bucketDefinition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
let clientNo = 0;

/** A distinct client address per test (the api trusts X-Forwarded-For here): the attestations group allows 10 a minute. */
function asClient(client: AttestationClient): AttestationClient {
  clientNo += 1;
  return client.withHeaders({ "x-forwarded-for": `203.0.113.${clientNo}` });
}

/** A client acting as a fresh address that no one has granted anything. */
async function stranger(): Promise<{ client: AttestationClient; address: string }> {
  const address = privateKeyToAccount(generatePrivateKey()).address;
  return { client: asClient(anon.withToken(await tokenFor("user", address))), address: address.toLowerCase() };
}

/** The api's configuration pointed at this stack's rollup and chain, for in-process instances. */
function stackConfig(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), "api-data-"));
  scratchDirs.push(dataDir);
  return loadConfig({
    ROLLUP_URL: stack.urls.node,
    RPC_URL: stack.urls.rpc,
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: dataDir,
    RATE_LIMITS: "off",
    LOG_LEVEL: "warn",
    ...env,
  });
}

let conformance: ConformanceRecorder;

beforeAll(async () => {
  provider = await startProviderServer();
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    env: {
      PROVIDER_ALLOWED_HOSTS: "127.0.0.1",
      TRUST_PROXY: "true",
      JWT_SECRET: TEST_JWT_SECRET,
      ENCRYPTION_SECRET_KEY: Buffer.from(recipient.secretKey).toString("base64"),
    },
  });
  conformance = await recorderFor(stack.urls.api);
  anon = new AttestationClient({ baseUrl: stack.urls.api, fetch: conformance.fetch });
  admin = anon.withToken(await tokenFor("admin", stack.addresses.admin));
  userA = anon.withToken(await tokenFor("user", USER_A));
  userB = anon.withToken(await tokenFor("user", USER_B));

  const registrar = asClient(admin);
  schemaId = (
    await registrar.registerSchema({
      provider: "http",
      flowType: "balance",
      domain: "127.0.0.1",
      bucketDefinitions: { "data.balance": bucketDefinition },
      dataKeys: ["data.currency"],
      freshnessHalfLife: 86400,
    })
  ).schema_id;
  await registrar.registerEncryptionKey({ publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" });
  provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
  const claimed = await asClient(userA).claim({
    provider: "http",
    params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
    bucketDefinition: { field: "data.balance", ...bucketDefinition },
  });
  claimId = claimed.claimId;
  const envelope = await stack.inspect({ type: "attestation", params: { attestation_id: claimId } });
  encryptedData = (JSON.parse(hexToUtf8(envelope.reports[0]?.payload ?? "0x")) as { encrypted_data: Hex }).encrypted_data;
});

afterAll(async () => {
  await stack?.stop();
  await provider?.close();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

describe("GET /api/core/attestation/:claimId/data", () => {
  it("the owner reads its own data: the sealed box as stored and, with the key configured, the opened JSON", async () => {
    const client = asClient(userA);
    const result = await client.attestationData(claimId);
    expect(result).toEqual({
      claimId,
      schemaId,
      owner: a,
      encrypted_data: encryptedData,
      data: { "data.currency": "EUR", "data.balance": 512.5 },
    });
    // The stored box is what the key holder opens itself, too.
    expect(namedContent(openSealed(result.encrypted_data, recipient.secretKey), { dataKeys: ["data.currency"], bucketFields: ["data.balance"] })).toEqual({ ok: true, value: result.data });
    expect(client.lastHeaders?.get("X-RateLimit-Limit")).toBe("10");
  });

  it("a grantee with a live grant reads it; once the grant is revoked, 404 NO_GRANT_FOUND {owner, requester}", async () => {
    const owner = asClient(userA);
    const { grantId } = await owner.grant({ requester: USER_B, schemaId, expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    const grantee = asClient(userB);
    expect(await grantee.attestationData(claimId)).toEqual({
      claimId,
      schemaId,
      owner: a,
      encrypted_data: encryptedData,
      data: { "data.currency": "EUR", "data.balance": 512.5 },
    });

    await owner.revokeGrant(grantId);
    const error = await failure(grantee.attestationData(claimId));
    expect([error.status, error.code, error.details]).toEqual([404, "NO_GRANT_FOUND", { owner: a, requester: b }]);
  });

  it("a requester without any grant: 404 NO_GRANT_FOUND {owner, requester}; an admin token acts as its own address", async () => {
    const { client, address } = await stranger();
    const error = await failure(client.attestationData(claimId));
    expect([error.status, error.code, error.details]).toEqual([404, "NO_GRANT_FOUND", { owner: a, requester: address }]);

    const asAdmin = await failure(asClient(admin).attestationData(claimId));
    expect([asAdmin.status, asAdmin.code, asAdmin.details]).toEqual([
      404,
      "NO_GRANT_FOUND",
      { owner: a, requester: stack.addresses.admin.toLowerCase() },
    ]);
  });

  it("a grant that has expired: 403 GRANT_EXPIRED {grant_id, expired_at}", async () => {
    const { client, address } = await stranger();
    // The dapp wants expires_at past the input's block time, the api past its own clock: clear both.
    const chain = createPublicClient({ transport: http(stack.urls.rpc) });
    const blockTime = Number((await chain.getBlock()).timestamp);
    const expiresAt = Math.max(Math.floor(Date.now() / 1000), blockTime) + 3;
    const { grantId } = await asClient(userA).grant({ requester: address as Hex, schemaId, expiresAt });

    // A short wait for the wall clock to pass the expiry (the api reads the same clock).
    const waitMs = expiresAt * 1000 - Date.now() + 100;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const error = await failure(client.attestationData(claimId));
    expect([error.status, error.code, error.details]).toEqual([403, "GRANT_EXPIRED", { grant_id: grantId, expired_at: expiresAt }]);
  });

  it("a plaintext that is not JSON: 500 DECRYPTION_FAILED {reason}", async () => {
    // Sent straight to the InputBox by the admin (an attestor), sealed to the registered key.
    const verdict = await stack.send({
      type: "create_attestation",
      params: {
        schema_id: schemaId,
        owner: USER_A,
        provider: "http",
        encrypted_data: sealForKey(new TextEncoder().encode("not json"), Buffer.from(recipient.publicKey).toString("base64")),
        bucket_values: { "data.balance": "low" },
      },
    });
    expect(verdict.status).toBe("ACCEPTED");
    const error = await failure(asClient(userA).attestationData(inputIdOf("create_attestation", verdict.index)));
    expect([error.status, error.code, error.details]).toEqual([500, "DECRYPTION_FAILED", { reason: "plaintext is not JSON" }]);
  });

  it("an api holding a different key: 500 DECRYPTION_FAILED {reason}; an api holding none answers without data", async () => {
    const path = `/api/core/attestation/${claimId}/data`;
    const headers = bearer(await tokenFor("user", USER_A));

    const other = Buffer.from(nacl.box.keyPair().secretKey).toString("base64");
    const wrongKey = createApi(createServices(stackConfig({ ENCRYPTION_SECRET_KEY: other })));
    const failed = await wrongKey.request(path, { headers });
    const body = (await failed.json()) as ErrorShape;
    expect([failed.status, body.error.code, body.error.details]).toEqual([500, "DECRYPTION_FAILED", { reason: "wrong key or tampered data" }]);

    const keyless = createApi(createServices(stackConfig({})));
    const plain = await keyless.request(path, { headers });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({
      success: true,
      data: { claimId, schemaId, owner: a, encrypted_data: encryptedData },
    });
  });

  it("without a token: 401 AUTH_MISSING; an unknown or malformed claim: 404 ATTESTATION_NOT_FOUND {claim_id}", async () => {
    const missing = await failure(asClient(anon).attestationData(claimId));
    expect([missing.status, missing.code, missing.details]).toEqual([401, "AUTH_MISSING", undefined]);

    const client = asClient(userA);
    const unknown = `0x${"f".repeat(64)}`;
    const notFound = await failure(client.attestationData(unknown));
    expect([notFound.status, notFound.code, notFound.details]).toEqual([404, "ATTESTATION_NOT_FOUND", { claim_id: unknown }]);
    const malformed = await failure(client.attestationData("not-a-claim"));
    expect([malformed.status, malformed.code, malformed.details]).toEqual([404, "ATTESTATION_NOT_FOUND", { claim_id: "not-a-claim" }]);
  });
});

// The exchanges of this suite's client, checked against the document the api serves (test/support/conformance.ts).
describe("the OpenAPI document against this suite's traffic", () => {
  it("every response and every accepted request conformed", () => {
    expect(conformance.exercised.size).toBeGreaterThan(0);
    expect(conformance.problems).toEqual([]);
  });
});
