/**
 * The api end to end: the real stack (hardhat chain, devnode, dapp, api as processes), a real local
 * provider over plain HTTP (allow-listed), the typed client and a real WebSocket client. One suite, run
 * against one api (test/api/e2e.test.ts) and against replicas behind haproxy sharing their limits in
 * Redis (test/api/e2e-replicas.test.ts).
 */
import nacl from "tweetnacl";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningApi } from "../../api/main.ts";
import { classifyChainError, type ChainErrorContext } from "../../api/rollup/submitter.ts";
import { openSealed } from "../../common/seal.ts";
import { AttestationApiError, AttestationClient, connectEvents, type EventStream } from "../../client/index.ts";
import { signGrantConsent, signRevokeConsent } from "../../client/consent.ts";
import { boxKeyPairOf, newBoxKeyPair, openAttestedData, shareContentKeys, signOwnerKey } from "../../client/keys.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { canonicalJson } from "../../common/canonical.ts";
import { keyIdOf, schemaIdOf } from "../../common/ids.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText } from "../../common/tls-claim.ts";
import { ConformanceRecorder, type OpenApiDoc } from "../support/conformance.ts";
import { seriesValue } from "../support/prometheus.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { closedPort, TEST_JWT_SECRET, tokenFor, USER_A, USER_A_KEY, USER_B, failure, startApiOn } from "../support/api-fixtures.ts";

const HARDHAT_KEYS = {
  2: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  5: "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  6: "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  7: "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  8: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
} as const;

export interface ApiEndToEndOptions {
  /** Api replicas behind the load balancer; 1 runs the api alone. */
  replicas: number;
  /** The node the stack runs and the api reads (ROLLUPS). Default v1. */
  rollups?: "v1" | "v2";
}

export function apiEndToEndSuite({ replicas, rollups = "v1" }: ApiEndToEndOptions): void {
  let stack: TestStack;
  let provider: ProviderServer;
  let events: EventStream;
  let anon: AttestationClient;
  let admin: AttestationClient;
  let userA: AttestationClient;
  let userB: AttestationClient;
  const extraApis: RunningApi[] = [];
  const recipient = nacl.box.keyPair();
  const a = USER_A.toLowerCase();
  const b = USER_B.toLowerCase();
  let clientNo = 0;
  /** Every exchange of the suite's main api, checked against the document it serves. */
  let conformance: ConformanceRecorder;

  /** A distinct client address per test (the api trusts X-Forwarded-For here), so rate limits stay per test. */
  function asClient(client: AttestationClient): AttestationClient {
    clientNo += 1;
    return client.withHeaders({ "x-forwarded-for": `198.51.100.${clientNo}` });
  }

  const schemaContent = (domain: string) => ({
    provider: "http",
    flowType: "balance",
    domain,
    bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
    dataKeys: ["data.currency"],
    freshnessHalfLife: 86400,
  });
  let schemaId: Hex;

  const claimFor = (path: string, headers: Record<string, string> = {}) => ({
    provider: "http" as const,
    params: { url: provider.url(path, "127.0.0.1"), method: "GET", headers },
    bucketDefinition: { field: "data.balance", boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] },
  });

  beforeAll(async () => {
    provider = await startProviderServer();
    stack = await startStack({
      api: true,
      apiReplicas: replicas,
      rollups,
      env: {
        PROVIDER_ALLOWED_HOSTS: "127.0.0.1",
        TRUST_PROXY: "true",
        JWT_SECRET: TEST_JWT_SECRET,
        NOTICE_POLL_MS: "100",
        ATTESTOR_URL: `ws://127.0.0.1:${await closedPort()}/ws`,
      },
    });
    const document = (await new AttestationClient({ baseUrl: stack.urls.api }).openapi()) as unknown as OpenApiDoc;
    conformance = new ConformanceRecorder(document);
    const base = new AttestationClient({ baseUrl: stack.urls.api, fetch: conformance.fetch });
    anon = base;
    admin = base.withToken(await tokenFor("admin", stack.addresses.admin));
    userA = base.withToken(await tokenFor("user", USER_A));
    userB = base.withToken(await tokenFor("user", USER_B));
    events = await connectEvents(stack.urls.ws);
  });

  afterAll(async () => {
    await events?.close();
    for (const api of extraApis) await api.stop();
    await stack?.stop();
    await provider?.close();
  });

  describe("health", () => {
    it("healthcheck, status and health report a working stack", async () => {
      const client = asClient(anon);
      expect(await client.healthcheck()).toEqual({ status: "ok", version: "0.1.0", core_enabled: true });
      const status = await client.status();
      expect(status).toEqual({
        enabled: true,
        rollupConnected: true,
        dappAddress: stack.addresses.dapp.toLowerCase(),
        processedInputs: expect.any(Number),
        inputsPerMinute: expect.any(Array),
        latestClaim: status.latestClaim === null ? null : { epochHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), firstIndex: expect.any(Number), lastIndex: expect.any(Number), blockNumber: expect.any(Number) },
      });
      expect(status.inputsPerMinute).toHaveLength(60);
      // No TLS attestor runs in this suite (test/api/attestor.e2e.test.ts runs one).
      expect(await client.health()).toEqual({ attestor: "ok", rollup: "ok", blockchain: "ok", tlsAttestor: "down" });
      expect(client.lastHeaders?.get("X-RateLimit-Limit")).toBe("100");
      // The dapp behind it is the one the suite asked for (riscv64 under npm run riscv64 -- e2e).
      expect(stack.logs("dapp")).toContain(`on ${process.env.TEST_DAPP_ARCH ?? process.arch};`);
    });

    it("the status's latest claim follows the claims the node makes after the first read", async () => {
      const client = asClient(anon);
      await client.status();
      // An input (any verdict will do), then its epoch closed: the node claims it on the History.
      const sent = await stack.send({ type: "health_probe", params: {} }, 3);
      expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
      let claim = (await client.status()).latestClaim;
      for (let tries = 0; (claim === null || claim.lastIndex < sent.index) && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        claim = (await client.status()).latestClaim;
      }
      expect(claim).toMatchObject({ lastIndex: expect.any(Number), blockNumber: expect.any(Number) });
      expect(claim?.lastIndex).toBeGreaterThanOrEqual(sent.index);
      expect(claim?.firstIndex).toBeLessThanOrEqual(sent.index);
    });
  });

  describe("schemas and keys (admin)", () => {
    it("a claim before any schema is SCHEMA_NOT_FOUND", async () => {
      const error = await failure(asClient(userA).claim(claimFor("/balance")));
      expect([error.status, error.code]).toEqual([404, "SCHEMA_NOT_FOUND"]);
      expect(error.details).toHaveProperty("schema_id");
    });

    it("registers a schema: the id is the content hash, the event goes out, reads see it", async () => {
      const client = asClient(admin);
      const content = schemaContent("127.0.0.1");
      const result = await client.registerSchema({ ...content, description: "Bank balance" });
      expect(result).toEqual({ schema_id: schemaIdOf(content) });
      schemaId = result.schema_id;
      await events.waitFor((e) => e.event === "schema:registered" && e.data.schema_id === schemaId);

      const list = await client.schemas();
      expect(list).toContainEqual({ schema_id: schemaId, name: "127.0.0.1/balance", description: "Bank balance", provider_type: "http" });
      expect(await client.schema(schemaId)).toEqual({
        schema_id: schemaId,
        name: "127.0.0.1/balance",
        description: "Bank balance",
        provider_type: "http",
        bucket_definitions: content.bucketDefinitions,
        data_keys: content.dataKeys,
        freshness_half_life: content.freshnessHalfLife,
        validity_period: null,
        require_signed_consent: false,
        sealing: "admin",
        bucket_counts: {},
      });
      // Registering identical content again answers the same id.
      expect(await client.registerSchema(content)).toEqual({ schema_id: schemaId });
    });

    it("an unknown schema is 404 SCHEMA_NOT_FOUND {schema_id}", async () => {
      const unknown = `0x${"0".repeat(63)}1`;
      const error = await failure(asClient(anon).schema(unknown));
      expect([error.status, error.code, error.details]).toEqual([404, "SCHEMA_NOT_FOUND", { schema_id: unknown }]);
    });

    it("a claim before any key is 503 ENCRYPTION_KEY_MISSING", async () => {
      provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const error = await failure(asClient(userA).claim(claimFor("/balance")));
      expect([error.status, error.code]).toEqual([503, "ENCRYPTION_KEY_MISSING"]);
    });

    it("registers an encryption key; the same key again is ROLLUP_REJECTED", async () => {
      const client = asClient(admin);
      const publicKey = Buffer.from(recipient.publicKey).toString("base64");
      expect(await client.registerEncryptionKey({ publicKey, algorithm: "nacl-box" })).toEqual({ keyId: keyIdOf(recipient.publicKey) });
      const again = await failure(client.registerEncryptionKey({ publicKey, algorithm: "nacl-box" }));
      expect([again.status, again.code]).toEqual([422, "ROLLUP_REJECTED"]);
      expect(again.details).toEqual({ reason: expect.stringContaining("DUPLICATE") });
    });
  });

  describe("claims and attestations", () => {
    let claimId: Hex;

    it("a claim fetches, buckets, seals and records; reads and the WebSocket see it", async () => {
      const client = asClient(userA);
      provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const result = await client.claim(claimFor("/balance", { authorization: "Bearer provider-secret" }));
      expect(result).toEqual({ claimId: expect.stringMatching(/^0x[0-9a-f]{64}$/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), bucket: "mid" });
      claimId = result.claimId;
      expect(provider.requests.at(-1)?.headers.authorization).toBe("Bearer provider-secret");

      const event = await events.waitFor((e) => e.event === "attestation:created" && e.data.claimId === claimId);
      expect(event.data).toEqual({ claimId, owner: a, provider: "http" });

      const attestation = await client.attestation(claimId);
      expect(attestation).toEqual({
        claimId,
        provider: "http",
        bucket: "mid",
        timestamp: expect.any(Number),
        owner: a,
        schemaId,
        inputIndex: expect.any(Number),
        itemIndex: null,
        attestor: null,
        attestors: [],
        // Validity (DECISIONS.md section 17): the api's wallet sent it; a schema without a validity period never expires.
        attester: expect.stringMatching(/^0x[0-9a-f]{40}$/),
        expiresAt: null,
        status: "valid",
        freshness: expect.any(Number),
        at: expect.any(Number),
        revocation: null,
      });
      expect(stack.replicaWallets.map((w) => w.toLowerCase())).toContain(attestation.attester);
      expect(attestation.freshness).toBeGreaterThan(0.99);
      // The transaction that carried it, found on the chain from the input's block.
      expect(await client.attestationInput(claimId)).toEqual({ claimId, inputIndex: attestation.inputIndex, itemIndex: null, blockNumber: expect.any(Number), txHash: result.txHash });
      // The schema counts it in its bucket once the api has read its notice.
      for (let tries = 0; (await client.schema(schemaId)).bucket_counts["data.balance"]?.mid === undefined && tries < 100; tries++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await client.schema(schemaId)).bucket_counts["data.balance"]?.mid).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(attestation.timestamp)).toBe(true);
      const list = await client.attestations(USER_A);
      expect(list).toContainEqual({ claimId, provider: "http", bucket: "mid", timestamp: attestation.timestamp, status: "valid", freshness: expect.any(Number) });
      expect(Object.keys(list[0] ?? {}).sort()).toEqual(["bucket", "claimId", "freshness", "provider", "status", "timestamp"]);

      // Only the key holder can read the sealed value: the field's value and the schema's data keys.
      const envelope = await stack.inspect({ type: "attestation", params: { attestation_id: claimId } });
      const view = JSON.parse(hexToUtf8(envelope.reports[0]?.payload ?? "0x")) as { encrypted_data: Hex; bucket_values: Record<string, string> };
      expect(view.bucket_values).toEqual({ "data.balance": "mid" });
      const opened = JSON.parse(new TextDecoder().decode(openSealed(view.encrypted_data, recipient.secretKey))) as unknown;
      expect(opened).toEqual({ "data.currency": "EUR", "data.balance": 512.5 });
    });

    it("an unknown claim is 404 ATTESTATION_NOT_FOUND {claim_id}", async () => {
      const unknown = `0x${"f".repeat(64)}`;
      const error = await failure(asClient(anon).attestation(unknown));
      expect([error.status, error.code, error.details]).toEqual([404, "ATTESTATION_NOT_FOUND", { claim_id: unknown }]);
      expect(await asClient(anon).attestations(USER_B)).toEqual([]);
    });

    it("lists every attestation of an owner even when the rollup ends its pages early at their byte budget", async () => {
      const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      const sealed = `0x${"ab".repeat(16 * 1024)}`; // the largest sealed data the dapp takes: 32 fill a page
      const params = { schema_id: schemaId, owner, provider: "http", encrypted_data: sealed, bucket_values: { "data.balance": "mid" } };
      for (let i = 0; i < 34; i++) {
        const verdict = await stack.send({ type: "create_attestation", params });
        expect([verdict.status, verdict.reports.map((r) => hexToUtf8(r))]).toEqual(["ACCEPTED", []]);
      }
      const listed = await asClient(anon).attestations(owner);
      expect(listed).toHaveLength(34);
      expect(new Set(listed.map((item) => item.claimId)).size).toBe(34);
    });

    it("provider failures map to the provider codes, never echoing the private value", async () => {
      const client = asClient(userA);
      provider.route("/huge-balance", { kind: "json", value: { data: { balance: 98765432, currency: "EUR" } } });
      const outside = await failure(client.claim(claimFor("/huge-balance")));
      expect([outside.status, outside.code]).toEqual([502, "PROVIDER_INVALID_RESPONSE"]);
      expect(outside.details).toEqual({ expected: expect.any(String), received: expect.any(String) });
      expect(JSON.stringify(outside.details) + outside.message).not.toContain("98765432");

      provider.route("/denied", { kind: "status", status: 401 });
      const denied = await failure(client.claim(claimFor("/denied")));
      expect([denied.status, denied.code]).toEqual([502, "PROVIDER_AUTH_FAILED"]);
      expect(denied.details).toMatchObject({ status: 401 });

      provider.route("/broken", { kind: "status", status: 500 });
      const broken = await failure(client.claim(claimFor("/broken")));
      expect([broken.status, broken.code]).toEqual([502, "PROVIDER_UNAVAILABLE"]);

      provider.route("/text", { kind: "json", value: { data: { balance: "lots" } } });
      const text = await failure(client.claim(claimFor("/text")));
      expect([text.status, text.code]).toEqual([502, "PROVIDER_INVALID_RESPONSE"]);
    });

    it("a bucketDefinition that differs from the schema's is INVALID_REQUEST", async () => {
      const request = claimFor("/balance");
      request.bucketDefinition.labels = ["l", "m", "h"];
      const error = await failure(asClient(userA).claim(request));
      expect([error.status, error.code]).toEqual([400, "INVALID_REQUEST"]);
      expect(error.details).toEqual({ field: "bucketDefinition", issue: expect.any(String) });
    });

    it("a claim naming its schemaId works; a claim needs a token", async () => {
      provider.route("/balance", { kind: "json", value: { data: { balance: 5, currency: "USD" } } });
      const result = await asClient(userB).claim({ ...claimFor("/balance"), schemaId });
      expect(result.bucket).toBe("low");
      expect((await asClient(anon).attestation(result.claimId)).owner).toBe(b);
      const error = await failure(asClient(anon).claim(claimFor("/balance")));
      expect([error.status, error.code]).toEqual([401, "AUTH_MISSING"]);
    });

    it("a user-proven claim whose signed claims do not check is INVALID_REQUEST naming the reason; one needs a token", async () => {
      // A claim in the attestor's format for this schema, signed by a key the rollup does not trust.
      const forger = privateKeyToAccount(generatePrivateKey());
      const range = binRange({ boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] }, "mid");
      if (range === undefined) throw new Error("no bin");
      const base = {
        provider: "http",
        parameters: canonicalJson(claimParameters({ url: provider.url("/balance", "127.0.0.1").replace("http:", "https:"), method: "GET", field: "data.balance", range })),
        owner: forger.address,
        timestampS: Math.floor(Date.now() / 1000),
        context: canonicalJson({ ...claimContext(a as Hex, schemaId, "0x01"), providerHash: "0x00" }),
        epoch: 1,
      };
      const identifier = claimIdentifier(base);
      const claim = { ...base, identifier };
      const proofs = [{ claim, signature: await forger.signMessage({ message: claimSignText(claim, identifier) }) }];
      const body = { schemaId, field: "data.balance", bucket: "mid", encryptedData: "0x0102" as Hex, proofs };
      const forged = await failure(asClient(userA).claimProven(body));
      expect([forged.status, forged.code, forged.details]).toEqual([
        400,
        "INVALID_REQUEST",
        { field: "proofs", issue: `signed by ${forger.address.toLowerCase()}, which is not a registered attestor` },
      ]);
      const bare = await failure(asClient(userA).claimProven({ ...body, proofs: [] }));
      expect([bare.status, bare.code, bare.details?.field]).toEqual([400, "INVALID_REQUEST", "proofs"]);
      const anonymous = await failure(asClient(anon).claimProven(body));
      expect([anonymous.status, anonymous.code]).toEqual([401, "AUTH_MISSING"]);
    });

    it("the 11th attestation call in a minute is 429 RATE_LIMITED with Retry-After", async () => {
      const client = asClient(anon);
      for (let i = 0; i < 10; i++) await client.attestations(USER_A);
      expect(client.lastHeaders?.get("X-RateLimit-Remaining")).toBe("0");
      const error = await failure(client.attestations(USER_A));
      expect([error.status, error.code]).toEqual([429, "RATE_LIMITED"]);
      expect(error.details).toEqual({ limit: 10, window: "60s", retry_after: expect.any(Number) });
      expect(error.headers.get("Retry-After")).toBe(String(error.details?.retry_after));
    });
  });

  describe("validity: revocation, freshness, verify", () => {
    /** A fresh owner per test, with a token of its own. */
    async function newOwner(): Promise<{ address: Hex; client: AttestationClient }> {
      const address = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;
      return { address, client: anon.withToken(await tokenFor("user", address)) };
    }
    const closeEpoch = async (): Promise<void> => {
      const response = await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
      expect(response.status).toBe(200);
    };

    it("verify: valid at the api's clock, each minimum refused with its reason, freshness 0.5 one half-life later", async () => {
      provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const owner = await newOwner();
      const claimed = await asClient(owner.client).claim(claimFor("/balance"));
      const attestation = await asClient(anon).attestation(claimed.claimId);
      const reader = asClient(anon);
      const plain = await reader.verify({ owner: owner.address, schemaId });
      expect(plain).toMatchObject({ valid: true, reasons: [], checked: 1, attestation: { claimId: claimed.claimId, bucket: "mid", status: "valid" } });
      expect(["ready", "pending"]).toContain(plain.proofStatus);
      expect(await reader.verify({ owner: owner.address, schemaId, minBucket: "mid", minFreshness: 0.9 })).toMatchObject({ valid: true });
      const higher = await reader.verify({ owner: owner.address, schemaId, minBucket: "high" });
      expect(higher).toMatchObject({ valid: false, reasons: [{ code: "BUCKET_BELOW_MINIMUM", message: `attestation ${claimed.claimId}: data.balance is "mid", below the minimum "high"` }] });
      // One half-life (the schema's 86,400 s) after it was made: freshness 0.5 exactly.
      const later = await reader.verify({ owner: owner.address, schemaId, at: attestation.timestamp + 86400, minFreshness: 0.6 });
      expect(later).toMatchObject({ valid: false, freshness: 0.5, at: attestation.timestamp + 86400, reasons: [{ code: "NOT_FRESH" }] });
      expect(await reader.verify({ owner: owner.address, schemaId, at: attestation.timestamp + 86400, minFreshness: 0.5 })).toMatchObject({ valid: true, freshness: 0.5 });
      const attestor = `0x${"7".repeat(40)}`;
      expect(await reader.verify({ owner: owner.address, schemaId, attestors: [attestor] })).toMatchObject({ valid: false, reasons: [{ code: "ATTESTOR_MISSING", message: `attestation ${claimed.claimId} was not proven by attestor ${attestor}` }] });
      expect(await asClient(anon).verify({ owner: USER_B, schemaId: `0x${"e".repeat(64)}` }).catch((e: unknown) => e)).toMatchObject({ status: 404, code: "SCHEMA_NOT_FOUND" });
      const nobody = await asClient(anon).verify({ owner: privateKeyToAccount(generatePrivateKey()).address, schemaId });
      expect(nobody).toMatchObject({ valid: false, attestation: null, checked: 0, proofStatus: "none", proof: null, reasons: [{ code: "NO_ATTESTATION" }] });
    });

    it("verify refuses bad parameters, each in its own words", async () => {
      const client = asClient(anon);
      const owner = USER_A;
      const cases: [Parameters<AttestationClient["verify"]>[0], string, string][] = [
        [{ owner: "0x1234", schemaId }, "owner", "a 0x-prefixed 20-byte hex address"],
        [{ owner, schemaId: "0x12" }, "schemaId", "a 0x-prefixed 32-byte hex schema id"],
        [{ owner, schemaId, minFreshness: 1.5 }, "minFreshness", "a number in (0, 1]"],
        [{ owner, schemaId, attestors: ["nope"] }, "attestor", "1 to 16 comma-separated addresses"],
        [{ owner, schemaId, minBucket: "enormous" }, "minBucket", '"enormous" is not one of the field\'s labels (low, mid, high)'],
      ];
      for (const [query, parameter, expected] of cases) {
        const error = await failure(client.verify(query));
        expect([error.status, error.code, error.details?.parameter, error.details?.expected]).toEqual([400, "INVALID_PARAMETER", parameter, expected]);
      }
    });

    it("an owner withdraws its own attestation: marked revoked, the WebSocket says so, verify falls back to none, then to a newer one", async () => {
      provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const owner = await newOwner();
      const first = await asClient(owner.client).claim(claimFor("/balance"));
      // Not its owner: refused, nothing sent.
      const stranger = await failure(asClient(userB).revokeAttestation(first.claimId, { reason: "not mine" }));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);
      const badReason = await failure(asClient(owner.client).revokeAttestation(first.claimId, { reason: 'say "no"' }));
      expect([badReason.status, badReason.code, badReason.details?.field]).toEqual([400, "INVALID_REQUEST", "reason"]);
      expect((await asClient(anon).attestation(first.claimId)).status).toBe("valid");

      const revoked = await asClient(owner.client).revokeAttestation(first.claimId, { reason: "account closed" });
      expect(revoked).toEqual({
        claimId: first.claimId,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        revocation: { revokedAt: expect.any(Number), revoker: expect.stringMatching(/^0x[0-9a-f]{40}$/), reason: "account closed", supersededBy: null, inputIndex: expect.any(Number) },
      });
      const event = await events.waitFor((e) => e.event === "attestation:revoked" && e.data.claimId === first.claimId);
      expect(event.data).toMatchObject({ claimId: first.claimId, owner: owner.address, schema_id: schemaId, reason: "account closed", superseded_by: null });
      // Still readable, marked.
      expect(await asClient(anon).attestation(first.claimId)).toMatchObject({ status: "revoked", revocation: { reason: "account closed" } });
      expect(await asClient(anon).verify({ owner: owner.address, schemaId })).toMatchObject({
        valid: false,
        attestation: { claimId: first.claimId, status: "revoked" },
        reasons: [{ code: "REVOKED", message: expect.stringContaining(`attestation ${first.claimId} was revoked at`) }],
      });
      const twice = await failure(asClient(owner.client).revokeAttestation(first.claimId, {}));
      expect([twice.status, twice.code]).toEqual([409, "ALREADY_REVOKED"]);

      const second = await asClient(owner.client).claim(claimFor("/balance"));
      expect(await asClient(anon).verify({ owner: owner.address, schemaId })).toMatchObject({ valid: true, checked: 1, attestation: { claimId: second.claimId } });
      // An admin revokes anyone's, naming its successor.
      const third = await asClient(owner.client).claim(claimFor("/balance"));
      expect(await asClient(admin).revokeAttestation(second.claimId, { supersededBy: third.claimId })).toMatchObject({ revocation: { supersededBy: third.claimId } });
      const unknown = await failure(asClient(admin).revokeAttestation(`0x${"d".repeat(64)}`, {}));
      expect([unknown.status, unknown.code]).toEqual([404, "ATTESTATION_NOT_FOUND"]);
    });

    it("a revocation's notice has a base-layer proof once its epoch is claimed; verify hands the relied-on attestation's proof", async () => {
      provider.route("/balance", { kind: "json", value: { data: { balance: "5000", currency: "EUR" } } });
      const owner = await newOwner();
      const kept = await asClient(owner.client).claim(claimFor("/balance"));
      const dropped = await asClient(owner.client).claim(claimFor("/balance"));
      const standing = await failure(asClient(anon).revocationProof(dropped.claimId));
      expect([standing.status, standing.code]).toEqual([404, "NOT_REVOKED"]);
      await asClient(owner.client).revokeAttestation(dropped.claimId, { reason: "duplicate" });
      await closeEpoch();
      const proof = await asClient(anon).revocationProof(dropped.claimId);
      const notice = JSON.parse(hexToUtf8(proof.notice as Hex)) as { event: string; data: Record<string, unknown> };
      expect(notice).toEqual({
        event: "attestation:revoked",
        data: { claimId: dropped.claimId, owner: owner.address, schema_id: schemaId, revoker: expect.stringMatching(/^0x[0-9a-f]{40}$/), revoked_at: expect.any(Number), reason: "duplicate", superseded_by: null },
      });
      const verdict = await asClient(anon).verify({ owner: owner.address, schemaId, minBucket: "high" });
      expect(verdict).toMatchObject({ valid: true, checked: 2, attestation: { claimId: kept.claimId }, proofStatus: "ready" });
      expect(JSON.parse(hexToUtf8(verdict.proof?.notice as Hex))).toMatchObject({ event: "attestation:created", data: { claimId: kept.claimId, bucket_values: { "data.balance": "high" } } });
    });

    it("a schema's validity period gives each attestation an expiry: expired from that second on, readable and marked", async () => {
      const content = { ...schemaContent("expiring.example"), validityPeriod: 3600 };
      const registered = await asClient(admin).registerSchema(content);
      expect(registered.schema_id).toBe(schemaIdOf(content));
      expect((await asClient(anon).schema(registered.schema_id)).validity_period).toBe(3600);
      const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      const params = { schema_id: registered.schema_id, owner, provider: "http", encrypted_data: "0x01", bucket_values: { "data.balance": "low" } };
      const verdict = await stack.send({ type: "create_attestation", params });
      expect(verdict.status).toBe("ACCEPTED");
      const [listed] = await asClient(anon).attestations(owner);
      const attestation = await asClient(anon).attestation(listed?.claimId as string);
      expect(attestation).toMatchObject({ expiresAt: attestation.timestamp + 3600, status: "valid" });
      const reader = asClient(anon);
      expect(await reader.verify({ owner, schemaId: registered.schema_id, at: attestation.timestamp + 3599 })).toMatchObject({ valid: true });
      expect(await reader.verify({ owner, schemaId: registered.schema_id, at: attestation.timestamp + 3600 })).toMatchObject({
        valid: false,
        attestation: { status: "expired", expiresAt: attestation.timestamp + 3600 },
        reasons: [{ code: "EXPIRED", message: `attestation ${attestation.claimId} expired at ${attestation.timestamp + 3600}` }],
      });
    });
  });

  describe("grants", () => {
    const expiresAt = () => Math.floor(Date.now() / 1000) + 3600;

    it("grant, check, refuse a stranger's revoke, revoke, check again", async () => {
      const owner = asClient(userA);
      const expires = expiresAt();
      const granted = await owner.grant({ requester: USER_B, schemaId, expiresAt: expires });
      expect(granted).toEqual({ grantId: expect.stringMatching(/^0x[0-9a-f]{64}$/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const created = await events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      expect(created.data).toEqual({ grantId: granted.grantId, owner: a, requester: b });

      expect(await owner.access(USER_A, USER_B)).toEqual({
        hasAccess: true,
        // The api relayed it on the token's word (consent "relayed"); a signed grant says "signed".
        grants: [{ grantId: granted.grantId, schemaId, expiresAt: expires, consent: "relayed" }],
      });
      expect(await owner.access(USER_B, USER_A)).toEqual({ hasAccess: false, grants: [] });

      const stranger = await failure(asClient(userB).revokeGrant(granted.grantId));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);

      await owner.revokeGrant(granted.grantId);
      const revoked = await events.waitFor((e) => e.event === "grant:revoked" && e.data.grantId === granted.grantId);
      expect(revoked.data).toEqual({ grantId: granted.grantId, owner: a });
      expect((await owner.access(USER_A, USER_B)).hasAccess).toBe(false);

      const twice = await failure(owner.revokeGrant(granted.grantId));
      expect([twice.status, twice.code]).toEqual([404, "NOT_FOUND"]);
    });

    it("DELETE answers {success: true} without data", async () => {
      const owner = asClient(userA);
      const granted = await owner.grant({ requester: USER_B, schemaId, expiresAt: expiresAt() });
      const raw = await owner.raw("DELETE", `/api/core/grant/${granted.grantId}`);
      expect([raw.status, raw.body]).toEqual([200, { success: true }]);
    });

    it("a grant on an unknown schema is 404 SCHEMA_NOT_FOUND", async () => {
      const unknown = `0x${"e".repeat(64)}` as Hex;
      const error = await failure(asClient(userA).grant({ requester: USER_B, schemaId: unknown, expiresAt: expiresAt() }));
      expect([error.status, error.code, error.details]).toEqual([404, "SCHEMA_NOT_FOUND", { schema_id: unknown }]);
    });

    it("lists the grants an address gave and the live ones it received", async () => {
      const requester = privateKeyToAccount(generatePrivateKey()).address;
      const granted = await asClient(userA).grant({ requester, schemaId, expiresAt: expiresAt() });
      await events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      const ofA = await asClient(anon).grantsOf(USER_A);
      expect(ofA.given).toContainEqual({ grantId: granted.grantId, requester: requester.toLowerCase(), schemaId, createdAt: expect.any(Number), expiresAt: expect.any(Number), consent: "relayed" });
      const ofRequester = await asClient(anon).grantsOf(requester);
      expect(ofRequester).toEqual({ given: [], received: [{ grantId: granted.grantId, owner: a, schemaId, expiresAt: expect.any(Number), consent: "relayed" }] });
    });

    it("concurrent writes from the one wallet never collide", async () => {
      const requesters = Array.from({ length: 5 }, () => privateKeyToAccount(generatePrivateKey()).address);
      const owner = asClient(userA);
      const results = await Promise.all(requesters.map((requester) => owner.grant({ requester, schemaId, expiresAt: expiresAt() })));
      expect(new Set(results.map((r) => r.grantId)).size).toBe(requesters.length);
      const access = await Promise.all(requesters.map((requester) => owner.access(USER_A, requester)));
      expect(access.every((r) => r.hasAccess)).toBe(true);
    });

    it("inputs sent straight to the InputBox reach the WebSocket too", async () => {
      const ownerAddress = privateKeyToAccount(HARDHAT_KEYS[2]).address.toLowerCase();
      const verdict = await stack.send({ type: "grant_access", params: { requester: USER_B, schema_id: schemaId, expires_at: expiresAt() } }, 2);
      expect(verdict.status).toBe("ACCEPTED");
      const event = await events.waitFor((e) => e.event === "grant:created" && e.data.owner === ownerAddress);
      expect(event.data).toMatchObject({ owner: ownerAddress, requester: b });
    });

    it("a WebSocket client can narrow its events to one owner", async () => {
      const filtered = await connectEvents(stack.urls.ws, { subscribe: ["grant:created"], owner: USER_B });
      const fromA = await asClient(userA).grant({ requester: USER_B, schemaId, expiresAt: expiresAt() + 1 });
      const fromB = await asClient(userB).grant({ requester: USER_A, schemaId, expiresAt: expiresAt() });
      // B's grant straight to the InputBox (above) may reach this client first: a replica relays notices at its own pace.
      const got = await filtered.waitFor((e) => e.event === "grant:created" && e.data.grantId === fromB.grantId);
      expect(got.data).toMatchObject({ grantId: fromB.grantId, owner: b });
      await events.waitFor((e) => e.event === "grant:created" && e.data.grantId === fromA.grantId);
      expect(filtered.received.filter((e) => e.event === "grant:created" && e.data.owner !== b)).toHaveLength(0);
      await filtered.close();
    });
  });

  describe("consent the owner signs", () => {
    const owner = privateKeyToAccount(USER_A_KEY);

    it("the domain names this chain and application; a signed grant is recorded as signed, a relayed one as relayed", async () => {
      const domain = await asClient(anon).consentDomain();
      expect(domain).toEqual({ name: "Attestation rollup", version: "1", chainId: 31337, verifyingContract: stack.addresses.dapp.toLowerCase() });
      const requester = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;
      const grant = { requester, schemaId, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const consent = await signGrantConsent(owner, domain, grant);
      const signed = await asClient(userA).grant({ ...grant, consent });
      const relayed = await asClient(userA).grant({ ...grant, requester: privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex });
      const given = (await asClient(anon).grantsOf(USER_A)).given;
      expect(given.find((g) => g.grantId === signed.grantId)?.consent).toBe("signed");
      expect(given.find((g) => g.grantId === relayed.grantId)?.consent).toBe("relayed");
      expect((await asClient(anon).access(USER_A, requester)).grants).toEqual([expect.objectContaining({ grantId: signed.grantId, consent: "signed" })]);
      // The same signature again: the rollup refuses its nonce, the api says why.
      await asClient(userA).revokeGrant(signed.grantId);
      const replay = await failure(asClient(userA).grant({ ...grant, consent }));
      expect([replay.status, replay.code, replay.details?.reason]).toEqual([403, "CONSENT_REJECTED", expect.stringContaining(`consent: nonce ${consent.nonce} was already used`)]);
    });

    it("a schema that requires the owner's consent: the api's relay alone is refused; the owner's signature grants and revokes", async () => {
      const content = { ...schemaContent("consent.example"), requireSignedConsent: true };
      const strict = (await asClient(admin).registerSchema(content)).schema_id;
      expect((await asClient(anon).schema(strict)).require_signed_consent).toBe(true);
      const domain = await asClient(anon).consentDomain();
      const grant = { requester: USER_B.toLowerCase() as Hex, schemaId: strict, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const relayed = await failure(asClient(userA).grant(grant));
      expect([relayed.status, relayed.code, relayed.details?.reason]).toEqual([403, "CONSENT_REJECTED", expect.stringContaining("an operator's word is refused")]);
      // Signed by someone else than the token's owner: refused too.
      const forged = await failure(asClient(userA).grant({ ...grant, consent: await signGrantConsent(privateKeyToAccount(generatePrivateKey()), domain, grant) }));
      expect([forged.code, forged.details?.reason]).toEqual(["CONSENT_REJECTED", expect.stringContaining("not by the owner")]);
      const granted = await asClient(userA).grant({ ...grant, consent: await signGrantConsent(owner, domain, grant) });
      const unsignedRevoke = await failure(asClient(userA).revokeGrant(granted.grantId));
      expect(unsignedRevoke.code).toBe("CONSENT_REJECTED");
      await asClient(userA).revokeGrant(granted.grantId, await signRevokeConsent(owner, domain, granted.grantId));
      expect((await asClient(anon).access(USER_A, USER_B)).grants.map((g) => g.grantId)).not.toContain(granted.grantId);
    });
  });

  describe("data only the owner and its grantees open", () => {
    const owner = privateKeyToAccount(USER_A_KEY);
    const requester = privateKeyToAccount(HARDHAT_KEYS[2]);
    const ownerKeys = newBoxKeyPair();
    const requesterKeys = newBoxKeyPair();
    let sealed: Hex;
    const sealedClaim = () => ({ ...claimFor("/owner-balance", { authorization: "Bearer owner-secret" }), schemaId: sealed });

    it("a schema that seals to the owner: no claim before the owner's key; the owner registers its key on its own word", async () => {
      sealed = (await asClient(admin).registerSchema({ ...schemaContent("127.0.0.1"), sealing: "owner" })).schema_id;
      expect((await asClient(anon).schema(sealed)).sealing).toBe("owner");
      provider.route("/owner-balance", { kind: "json", value: { data: { balance: "4321.5", currency: "CHF" } } });
      const missing = await failure(asClient(userA).claim(sealedClaim()));
      expect([missing.status, missing.code, missing.details]).toEqual([409, "OWNER_KEY_MISSING", { owner: a, schema_id: sealed }]);
      const unknown = await failure(asClient(anon).ownerKey(a));
      expect([unknown.status, unknown.code]).toEqual([404, "NOT_FOUND"]);

      const domain = await asClient(anon).consentDomain();
      // Signed by another wallet than the token's: the rollup refuses, nothing is registered.
      const forged = await failure(asClient(userA).registerOwnerKey(ownerKeys.publicKey, await signOwnerKey(requester, domain, ownerKeys.keyId)));
      expect([forged.status, forged.code]).toEqual([403, "CONSENT_REJECTED"]);
      expect(await asClient(userA).registerOwnerKey(ownerKeys.publicKey, await signOwnerKey(owner, domain, ownerKeys.keyId))).toEqual({
        keyId: ownerKeys.keyId,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(await asClient(anon).ownerKey(a)).toEqual({ owner: a, keyId: ownerKeys.keyId, publicKey: ownerKeys.publicKey, algorithm: "nacl-box", createdAt: expect.any(Number) });
      await asClient(userB).registerOwnerKey(requesterKeys.publicKey, await signOwnerKey(requester, domain, requesterKeys.keyId));
      const bad = await failure(asClient(userB).registerOwnerKey("not-a-key", await signOwnerKey(requester, domain, requesterKeys.keyId)));
      expect([bad.status, bad.code]).toEqual([400, "INVALID_KEY_FORMAT"]);
    });

    it("the owner opens its data with its own key, the admin's key does not; a grant with keys lets the requester open it, until revoked", async () => {
      const first = await asClient(userA).claim(sealedClaim());
      const own = await asClient(userA).attestationData(first.claimId);
      // The api holds no key to this data: it serves the sealed bytes, never the plaintext.
      expect(own).not.toHaveProperty("data");
      expect(openAttestedData(own.encrypted_data as Hex, ownerKeys)).toEqual({ "data.currency": "CHF", "data.balance": 4321.5 });
      expect(() => openAttestedData(own.encrypted_data as Hex, boxKeyPairOf(Buffer.from(recipient.secretKey).toString("base64")))).toThrow();

      const noGrant = await failure(asClient(userB).attestationData(first.claimId));
      expect(noGrant.code).toBe("NO_GRANT_FOUND");
      const domain = await asClient(anon).consentDomain();
      const grant = { requester: b as Hex, schemaId: sealed, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const keys = shareContentKeys(ownerKeys, requesterKeys.publicKey, [{ claimId: first.claimId, encryptedData: own.encrypted_data as Hex }]);
      const granted = await asClient(userA).grant({ ...grant, consent: await signGrantConsent(owner, domain, grant), keys });
      const read = await asClient(userB).attestationData(first.claimId);
      expect(read).not.toHaveProperty("data");
      expect(openAttestedData(read.encrypted_data as Hex, requesterKeys, read.sealedKey as Hex)).toEqual({ "data.currency": "CHF", "data.balance": 4321.5 });

      // An attestation made after the grant: no key for it until the owner shares one.
      const second = await asClient(userA).claim(sealedClaim());
      expect((await failure(asClient(userB).attestationData(second.claimId))).code).toBe("NO_GRANT_FOUND");
      const secondData = await asClient(userA).attestationData(second.claimId);
      const more = shareContentKeys(ownerKeys, requesterKeys.publicKey, [{ claimId: second.claimId, encryptedData: secondData.encrypted_data as Hex }]);
      const stranger = await failure(asClient(userB).shareKeys(granted.grantId, more));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);
      expect(await asClient(userA).shareKeys(granted.grantId, more)).toEqual({ grantId: granted.grantId, txHash: expect.any(String), shared: 1 });
      const later = await asClient(userB).attestationData(second.claimId);
      expect(openAttestedData(later.encrypted_data as Hex, requesterKeys, later.sealedKey as Hex)).toMatchObject({ "data.balance": 4321.5 });

      await asClient(userA).revokeGrant(granted.grantId);
      expect((await failure(asClient(userB).attestationData(first.claimId))).code).toBe("NO_GRANT_FOUND");
      const afterRevoke = await failure(asClient(userA).shareKeys(granted.grantId, more));
      expect([afterRevoke.status, afterRevoke.code, afterRevoke.message]).toEqual([404, "NOT_FOUND", expect.stringContaining(granted.grantId)]);
    });
  });

  describe("Sign-In with Ethereum against the running api", () => {
    it("a SIWE login yields a user token the write endpoints accept", async () => {
      const client = asClient(anon);
      const account = privateKeyToAccount(USER_A_KEY);
      const { nonce, domain, chainId } = await client.authNonce();
      const message = createSiweMessage({ address: account.address, chainId, domain, nonce, uri: stack.urls.api, version: "1" });
      const { token, expiresAt } = await client.login(message, await account.signMessage({ message }));
      expect(expiresAt).toBeGreaterThan(Date.now() / 1000);
      // A fresh requester: user A already holds a live grant to USER_B on this schema (a duplicate is rejected).
      const requester = privateKeyToAccount(generatePrivateKey()).address;
      const granted = await client.withToken(token).grant({ requester, schemaId, expiresAt: Math.floor(Date.now() / 1000) + 7200 });
      const event = await events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      expect(event.data).toMatchObject({ owner: a });
    });
  });

  describe("chain and rollup failures (extra api instances on the same stack)", () => {
    async function extraApi(env: Record<string, string>): Promise<AttestationClient> {
      const api = await startApiOn(stack, env);
      extraApis.push(api);
      return new AttestationClient({ baseUrl: api.url, token: await tokenFor("admin", stack.addresses.admin) });
    }
    const someKey = () => ({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" as const });

    it("an unfunded wallet: 503 INSUFFICIENT_FUNDS {wallet, balance, required}", async () => {
      const key = generatePrivateKey();
      const client = await extraApi({ PRIVATE_KEY: key });
      const error = await failure(client.registerEncryptionKey(someKey()));
      expect([error.status, error.code]).toEqual([503, "INSUFFICIENT_FUNDS"]);
      expect(error.details).toEqual({ wallet: privateKeyToAccount(key).address, balance: "0", required: expect.stringMatching(/^\d+$/) });
    });

    it("a wallet the dapp does not trust: 422 ROLLUP_REJECTED; a transaction sent behind the api's back does not break the next write", async () => {
      const client = await extraApi({ PRIVATE_KEY: HARDHAT_KEYS[5] });
      const rejected = await failure(client.registerEncryptionKey(someKey()));
      expect([rejected.status, rejected.code]).toEqual([422, "ROLLUP_REJECTED"]);
      expect(rejected.details).toEqual({ reason: expect.stringContaining("UNAUTHORIZED_SENDER") });

      // Another sender on the same account takes the nonce the api counted on using next.
      const wallet = createWalletClient({ account: privateKeyToAccount(HARDHAT_KEYS[5]), transport: http(stack.urls.rpc) });
      await wallet.sendTransaction({ to: USER_B, value: 1n, chain: null });
      expect((await failure(client.registerEncryptionKey(someKey()))).code).toBe("ROLLUP_REJECTED");
    });

    it("a nonce conflict reported by the node is NONCE_TOO_LOW {expected, received} (integers)", async () => {
      const account = privateKeyToAccount(HARDHAT_KEYS[5]);
      const wallet = createWalletClient({ account, transport: http(stack.urls.rpc) });
      const publicClient = createPublicClient({ transport: http(stack.urls.rpc) });
      const current = await publicClient.getTransactionCount({ address: account.address, blockTag: "pending" });
      expect(current).toBeGreaterThan(0);
      let thrown: unknown;
      try {
        await wallet.sendTransaction({ to: USER_B, value: 1n, nonce: current - 1, chain: null });
      } catch (error) {
        thrown = error;
      }
      const mapped = await classifyChainError(thrown, {
        wallet: account.address,
        rpcUrl: stack.urls.rpc,
        publicClient: publicClient as unknown as ChainErrorContext["publicClient"],
        nonce: current - 1,
      });
      expect(mapped.code).toBe("NONCE_TOO_LOW");
      expect(mapped.status).toBe(409);
      expect(mapped.details).toEqual({ expected: current, received: current - 1 });
    });

    it("an api started later learns schemas and the key from the rollup's history", async () => {
      const attestor = privateKeyToAccount(HARDHAT_KEYS[8]).address;
      const verdict = await stack.send({ type: "set_role", params: { address: attestor, role: "attestor", enabled: true } }, 0);
      expect(verdict.status).toBe("ACCEPTED");
      const late = await extraApi({ PRIVATE_KEY: HARDHAT_KEYS[8], PROVIDER_ALLOWED_HOSTS: "127.0.0.1" });
      provider.route("/balance", { kind: "json", value: { data: { balance: 2500, currency: "EUR" } } });
      const result = await late.withToken(await tokenFor("user", USER_B)).claim(claimFor("/balance"));
      expect(result.bucket).toBe("high");
      expect(await asClient(anon).attestation(result.claimId)).toMatchObject({ owner: b, bucket: "high", provider: "http" });
    });

    it("no InputAdded event (wrong InputBox address): 502 INPUT_TX_FAILED {reason, wallet}", async () => {
      // Its own funded wallet, so the main api's nonce bookkeeping is left alone.
      const client = await extraApi({ INPUTBOX_ADDRESS: USER_B, PRIVATE_KEY: HARDHAT_KEYS[6] });
      const error = await failure(client.registerEncryptionKey(someKey()));
      expect([error.status, error.code]).toEqual([502, "INPUT_TX_FAILED"]);
      expect(error.details).toEqual({ reason: expect.any(String), wallet: privateKeyToAccount(HARDHAT_KEYS[6]).address });
    });

    it("a rollup whose verdicts cannot be read: 503 ROLLUP_UNAVAILABLE {url, error} naming the pending input", async () => {
      // v1 reads verdicts through GraphQL, v2 through JSON-RPC below the node's URL.
      const closed = `http://127.0.0.1:${await closedPort()}`;
      const [env, reader] = rollups === "v2" ? [{ ROLLUP_URL: closed }, `${closed}/rpc`] : [{ GRAPHQL_URL: `${closed}/graphql` }, `${closed}/graphql`];
      const client = await extraApi({ ...env, VERDICT_TIMEOUT_MS: "300", PRIVATE_KEY: HARDHAT_KEYS[7] });
      const error = await failure(client.registerEncryptionKey(someKey()));
      expect([error.status, error.code]).toEqual([503, "ROLLUP_UNAVAILABLE"]);
      // Beyond {url, error}: the input is on chain and may still be processed, so the answer says which.
      expect(error.details).toEqual({
        url: reader,
        error: expect.any(String),
        input_index: expect.any(Number),
        tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
    });
  });

  describe("metrics", () => {
    it("GET /metrics on the api's port (each replica's): Prometheus text with this suite's requests and its transactions", async () => {
      // Behind the balancer a scrape reaches one replica; Prometheus scrapes each, so does this test.
      const texts = await Promise.all(
        stack.apiReplicaUrls.map(async (url) => {
          const response = await fetch(`${url}/metrics`);
          expect(response.status).toBe(200);
          expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
          return response.text();
        }),
      );
      const total = (series: string) =>
        texts.reduce((sum, text) => {
          const value = seriesValue(text, series);
          return sum + (Number.isNaN(value) ? 0 : value);
        }, 0);
      expect(total('api_http_requests_total{route="/api/core/claim",method="POST",status="200"}')).toBeGreaterThanOrEqual(1);
      expect(total("api_writes_per_transaction_count")).toBeGreaterThanOrEqual(1);
      expect(total('api_transactions_total{outcome="success"}')).toBeGreaterThanOrEqual(1);
      // An InputBox transaction costs tens of thousands of gas at least.
      expect(total("api_transaction_gas_used_sum") / total("api_transaction_gas_used_count")).toBeGreaterThan(21_000);
      expect(total('api_http_request_duration_seconds_count{route="/api/core/schemas",method="GET"}')).toBeGreaterThanOrEqual(1);
      // The events client of this suite is connected (to one replica).
      expect(total("api_websocket_clients")).toBeGreaterThanOrEqual(1);
      if (replicas > 1) {
        // Every replica served and wrote: the balancer spread the suite's writes.
        for (const text of texts) expect(seriesValue(text, "api_writes_per_transaction_count")).toBeGreaterThanOrEqual(1);
        for (const text of texts) expect(seriesValue(text, "api_redis_up")).toBe(1);
      }
    });
  });

  describe("the OpenAPI document against this suite's traffic", () => {
    it("every exchange conformed, and every documented operation was exercised", async () => {
      // The extensions the other suites cover in depth: called here once so this suite alone covers the document.
      const owner = asClient(userA);
      const [first] = await owner.attestations(a);
      expect(first).toBeDefined();
      const claimId = first?.claimId ?? "0x";
      await expect(owner.attestationData(claimId)).resolves.toMatchObject({ claimId, owner: a });
      // Ready or not yet claimed: both are documented answers.
      const proof = await owner.attestationProof(claimId).then(
        () => "ready",
        (error: unknown) => (error instanceof AttestationApiError ? error.code : String(error)),
      );
      expect(["ready", "PROOF_NOT_READY"]).toContain(proof);
      // TLS attestors (test/api/attestor.e2e.test.ts proves claims through one): register, list, remove.
      const someAttestor = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      expect(await asClient(admin).registerAttestor({ address: someAttestor, name: "e2e" })).toEqual({ address: someAttestor, enabled: true });
      expect(await asClient(anon).attestors()).toContainEqual({ address: someAttestor, name: "e2e", addedAt: expect.any(Number) });
      expect(await asClient(admin).registerAttestor({ address: someAttestor, enabled: false })).toEqual({ address: someAttestor, enabled: false });
      expect(await asClient(anon).attestors()).not.toContainEqual(expect.objectContaining({ address: someAttestor }));
      await asClient(anon).openapi();
      expect(conformance.problems).toEqual([]);
      expect(conformance.operations.filter((op) => !conformance.exercised.has(op))).toEqual([]);
    });
  });
}
