/**
 * The api end to end: the real stack (hardhat chain, devnode, dapp, api as processes), a real local
 * provider over plain HTTP (allow-listed), the typed client and a real WebSocket client. One suite, run
 * against one api (test/api/e2e.test.ts) and against replicas behind haproxy sharing their limits in
 * Redis (test/api/e2e-replicas.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient, connectEvents } from "../../client/index.ts";
import { keyIdOf, schemaIdOf } from "../../common/ids.ts";
import { ConformanceRecorder, type OpenApiDoc } from "../support/conformance.ts";
import { startProviderServer } from "../support/provider-server.ts";
import { startRecordingProxy } from "../support/recording-proxy.ts";
import { freePorts, startStack } from "../support/stack.ts";
import { closedPort, TEST_JWT_SECRET, tokenFor, USER_A, USER_B, failure } from "../support/api-fixtures.ts";
import { claimsTests } from "./e2e-suite/claims.ts";
import { SuiteContext, type ApiEndToEndOptions } from "./e2e-suite/context.ts";
import { grantsTests } from "./e2e-suite/grants.ts";
import { operationsTests } from "./e2e-suite/operations.ts";
import { graphqlTests } from "./e2e-suite/graphql.ts";
import { quorumTests } from "./e2e-suite/quorum.ts";
import { readersTests } from "./e2e-suite/readers.ts";

export type { ApiEndToEndOptions } from "./e2e-suite/context.ts";

export function apiEndToEndSuite(options: ApiEndToEndOptions): void {
  const ctx = new SuiteContext(options);

  beforeAll(async () => {
    ctx.provider = await startProviderServer();
    // With readers, the api reaches the node through a recording proxy: what it sends the node is kept.
    const [nodePort] = ctx.readers > 0 ? await freePorts(1) : [];
    ctx.nodeProxy = nodePort === undefined ? undefined : await startRecordingProxy(nodePort);
    ctx.stack = await startStack({
      api: true,
      apiReplicas: ctx.replicas,
      rollups: ctx.rollups,
      readers: ctx.readers,
      ...(ctx.quorum > 0 ? { quorum: ctx.quorum } : {}),
      ...(nodePort === undefined ? {} : { ports: { node: nodePort }, apiNodeUrl: ctx.nodeProxy?.url }),
      env: {
        PROVIDER_ALLOWED_HOSTS: "127.0.0.1",
        TRUST_PROXY: "true",
        JWT_SECRET: TEST_JWT_SECRET,
        NOTICE_POLL_MS: "100",
        ATTESTOR_URL: `ws://127.0.0.1:${await closedPort()}/ws`,
      },
    });
    const document = (await new AttestationClient({ baseUrl: ctx.stack.urls.api }).openapi()) as unknown as OpenApiDoc;
    ctx.conformance = new ConformanceRecorder(document);
    const base = new AttestationClient({ baseUrl: ctx.stack.urls.api, fetch: ctx.conformance.fetch });
    ctx.anon = base;
    ctx.admin = base.withToken(await tokenFor("admin", ctx.stack.addresses.admin));
    ctx.userA = base.withToken(await tokenFor("user", USER_A));
    ctx.userB = base.withToken(await tokenFor("user", USER_B));
    ctx.events = await connectEvents(ctx.stack.urls.ws);
  });

  afterAll(async () => {
    await ctx.events?.close();
    for (const api of ctx.extraApis) await api.stop();
    await ctx.stack?.stop();
    await ctx.provider?.close();
    await ctx.nodeProxy?.close();
  });

  describe("health", () => {
    it("healthcheck, status and health report a working stack", async () => {
      const client = ctx.asClient(ctx.anon);
      expect(await client.healthcheck()).toEqual({ status: "ok", version: "0.1.0", core_enabled: true });
      const status = await client.status();
      expect(status).toEqual({
        enabled: true,
        rollupConnected: true,
        dappAddress: ctx.stack.addresses.dapp.toLowerCase(),
        processedInputs: expect.any(Number),
        inputsPerMinute: expect.any(Array),
        latestClaim: status.latestClaim === null ? null : { epochHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), firstIndex: expect.any(Number), lastIndex: expect.any(Number), blockNumber: expect.any(Number) },
        contracts: { registry: ctx.stack.contracts?.registry.toLowerCase(), gate: ctx.stack.contracts?.gate.toLowerCase() },
        readers: ctx.stack.urls.readers.map((url) => ({ url, kind: expect.any(String), health: "serving", processedInputCount: expect.any(Number), reason: null })),
        // Who signs receipts, and where they hold (docs/receipts.md).
        receipts: { signer: expect.stringMatching(/^0x[0-9a-f]{40}$/), domain: { name: "EAS Attestation", version: "1.3.0", chainId: 31337, verifyingContract: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) } },
        // v2: who claims, as the node says it; v1 keeps its Authority and says nothing.
        consensus: ctx.rollups === "v1" ? null : expect.objectContaining({ kind: ctx.quorum > 0 ? "quorum" : "authority", needed: ctx.quorum > 0 ? Math.floor(ctx.quorum / 2) + 1 : 1, members: expect.any(Array), wrongVotes: [] }),
        // The stack's pieces as its supervisor wrote them: every one running, none restarted.
        stack: ctx.stack.pieces.map((piece) => ({ piece, running: true, pid: expect.any(Number), restarts: 0, lastExit: null })),
      });
      expect(status.inputsPerMinute).toHaveLength(60);
      // No TLS attestor runs in this suite (test/api/attestor.e2e.test.ts runs one).
      expect(await client.health()).toEqual({ attestor: "ok", rollup: "ok", blockchain: "ok", tlsAttestor: "down" });
      expect(client.lastHeaders?.get("X-RateLimit-Limit")).toBe("100");
      // The dapp behind it is the one the suite asked for (riscv64 under npm run riscv64 -- e2e).
      expect(ctx.stack.logs("dapp")).toContain(`on ${process.env.TEST_DAPP_ARCH ?? process.arch};`);
    });

    it("the status's latest claim follows the claims the node makes after the first read", async () => {
      const client = ctx.asClient(ctx.anon);
      await client.status();
      // An input (any verdict will do), then its epoch closed: the node claims it on the History.
      const sent = await ctx.stack.send({ type: "health_probe", params: {} }, 3);
      expect((await fetch(`${ctx.stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
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
      const error = await failure(ctx.asClient(ctx.userA).claim(ctx.claimFor("/balance")));
      expect([error.status, error.code]).toEqual([404, "SCHEMA_NOT_FOUND"]);
      expect(error.details).toHaveProperty("schema_id");
    });

    it("registers a schema: the id is the content hash, the event goes out, reads see it", async () => {
      const client = ctx.asClient(ctx.admin);
      const content = ctx.schemaContent("127.0.0.1");
      const result = await client.registerSchema({ ...content, description: "Bank balance" });
      expect(result).toEqual({ schema_id: schemaIdOf(content) });
      ctx.schemaId = result.schema_id;
      await ctx.events.waitFor((e) => e.event === "schema:registered" && e.data.schema_id === ctx.schemaId);

      const list = await client.schemas();
      expect(list).toContainEqual({ schema_id: ctx.schemaId, name: "127.0.0.1/balance", description: "Bank balance", provider_type: "http" });
      expect(await client.schema(ctx.schemaId)).toEqual({
        schema_id: ctx.schemaId,
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
      expect(await client.registerSchema(content)).toEqual({ schema_id: ctx.schemaId });
    });

    it("an unknown schema is 404 SCHEMA_NOT_FOUND {schema_id}", async () => {
      const unknown = `0x${"0".repeat(63)}1`;
      const error = await failure(ctx.asClient(ctx.anon).schema(unknown));
      expect([error.status, error.code, error.details]).toEqual([404, "SCHEMA_NOT_FOUND", { schema_id: unknown }]);
    });

    it("a claim before any key is 503 ENCRYPTION_KEY_MISSING", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const error = await failure(ctx.asClient(ctx.userA).claim(ctx.claimFor("/balance")));
      expect([error.status, error.code]).toEqual([503, "ENCRYPTION_KEY_MISSING"]);
    });

    it("registers an encryption key; the same key again is ROLLUP_REJECTED", async () => {
      const client = ctx.asClient(ctx.admin);
      const publicKey = Buffer.from(ctx.recipient.publicKey).toString("base64");
      expect(await client.registerEncryptionKey({ publicKey, algorithm: "nacl-box" })).toEqual({ keyId: keyIdOf(ctx.recipient.publicKey) });
      const again = await failure(client.registerEncryptionKey({ publicKey, algorithm: "nacl-box" }));
      expect([again.status, again.code]).toEqual([422, "ROLLUP_REJECTED"]);
      expect(again.details).toEqual({ reason: expect.stringContaining("DUPLICATE") });
    });
  });

  claimsTests(ctx);
  graphqlTests(ctx);
  // Before the grants, which leave the suite's schema sealed to owners' keys.
  if (ctx.quorum > 0) quorumTests(ctx);
  grantsTests(ctx);
  operationsTests(ctx);

  // Last, once every other test has read and written: with readers, the node served the api no inspect.
  if (ctx.readers > 0) readersTests(ctx);
}
