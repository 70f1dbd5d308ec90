/**
 * A claim against an HTTPS provider, end to end: the real stack, with the api process trusting a test CA
 * only through Node's own NODE_EXTRA_CA_CERTS (read at its start), as an operator with a local CA would.
 */
import nacl from "tweetnacl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSealed } from "../../common/seal.ts";
import { namedContent } from "../../common/sealed-content.ts";
import { AttestationClient } from "../../client/index.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { failure, TEST_JWT_SECRET, tokenFor, USER_A } from "../support/api-fixtures.ts";
import { startProviderServer, TLS_1_1_ONLY, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";

const bucketDefinition = { field: "data.balance", boundaries: [0, 100, 1000], labels: ["low", "mid"] };
const schema = {
  provider: "http",
  flowType: "balance",
  domain: "localhost",
  bucketDefinitions: { "data.balance": { boundaries: bucketDefinition.boundaries, labels: bucketDefinition.labels } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
};
const recipient = nacl.box.keyPair();

let pki: TestPki;
let modern: ProviderServer;
let legacy: ProviderServer;
let stack: TestStack;
let user: AttestationClient;

beforeAll(async () => {
  pki = createTestPki();
  modern = await startProviderServer({ tls: pki.localhost });
  legacy = await startProviderServer({ tls: { ...pki.localhost, ...TLS_1_1_ONLY } });
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    // `localhost` resolves to loopback, which only an allow-listed host may; plain http stays refused for it.
    env: { NODE_EXTRA_CA_CERTS: pki.ca.certPath, PROVIDER_ALLOWED_HOSTS: "localhost", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off" },
  });
  const admin = new AttestationClient({ baseUrl: stack.urls.api, token: await tokenFor("admin", stack.addresses.admin) });
  await admin.registerSchema(schema);
  await admin.registerEncryptionKey({ publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" });
  user = new AttestationClient({ baseUrl: stack.urls.api, token: await tokenFor("user", USER_A) });
});

afterAll(async () => {
  await stack?.stop();
  await modern?.close();
  await legacy?.close();
  pki?.cleanup();
});

describe("a claim over HTTPS with a local CA", () => {
  it("fetches over TLS, buckets, seals and records the attestation", async () => {
    modern.route("/balance", { kind: "json", value: { data: { balance: "250.5", currency: "EUR" } } });
    const claim = await user.claim({ provider: "http", params: { url: modern.url("/balance"), method: "GET", headers: {} }, bucketDefinition });
    expect(claim.bucket).toBe("mid");

    const attestation = await user.attestation(claim.claimId);
    expect(attestation).toMatchObject({ claimId: claim.claimId, provider: "http", bucket: "mid", owner: USER_A.toLowerCase() });
    const data = await user.attestationData(claim.claimId);
    expect(data.schemaId).toBe(schemaIdOf(schema));
    const opened = namedContent(openSealed(data.encrypted_data, recipient.secretKey), { dataKeys: ["data.currency"], bucketFields: ["data.balance"] });
    expect(opened).toEqual({ ok: true, value: { "data.currency": "EUR", "data.balance": 250.5 } });
  });

  it("a provider that only speaks TLS 1.1 is 502 ZKTLS_PROOF_FAILED {reason}", async () => {
    legacy.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
    const error = await failure(user.claim({ provider: "http", params: { url: legacy.url("/balance"), method: "GET", headers: {} }, bucketDefinition }));
    expect([error.status, error.code, Object.keys(error.details ?? {})]).toEqual([502, "ZKTLS_PROOF_FAILED", ["reason"]]);
  });
});
