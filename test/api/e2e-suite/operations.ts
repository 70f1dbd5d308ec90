/**
 * Sign-In with Ethereum, chain and rollup failures, metrics, and the OpenAPI document against the suite's
 * traffic. Part of the api's end-to-end suite (test/api/e2e-suite.ts).
 */
import nacl from "tweetnacl";
import { createPublicClient, createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { classifyChainError, type ChainErrorContext } from "../../../api/rollup/submitter.ts";
import { AttestationApiError, AttestationClient } from "../../../client/index.ts";
import { dealKey } from "../../../common/nullifier-dealer.ts";
import { seriesValue } from "../../support/prometheus.ts";
import { closedPort, tokenFor, USER_A_KEY, USER_B, failure } from "../../support/api-fixtures.ts";
import { startApiOn } from "../../support/api-in-process.ts";
import { HARDHAT_KEYS, type SuiteContext } from "./context.ts";

export function operationsTests(ctx: SuiteContext): void {
  describe("Sign-In with Ethereum against the running api", () => {
    it("a SIWE login yields a user token the write endpoints accept", async () => {
      const client = ctx.asClient(ctx.anon);
      const account = privateKeyToAccount(USER_A_KEY);
      const { nonce, domain, chainId } = await client.authNonce();
      const message = createSiweMessage({ address: account.address, chainId, domain, nonce, uri: ctx.stack.urls.api, version: "1" });
      const { token, expiresAt } = await client.login(message, await account.signMessage({ message }));
      expect(expiresAt).toBeGreaterThan(Date.now() / 1000);
      // A fresh requester: user A already holds a live grant to USER_B on this schema (a duplicate is rejected).
      const requester = privateKeyToAccount(generatePrivateKey()).address;
      const granted = await client.withToken(token).grant({ requester, schemaId: ctx.schemaId, expiresAt: Math.floor(Date.now() / 1000) + 7200 });
      const event = await ctx.events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      expect(event.data).toMatchObject({ owner: ctx.a });
    });
  });

  describe("chain and rollup failures (extra api instances on the same stack)", () => {
    async function extraApi(env: Record<string, string>): Promise<AttestationClient> {
      const api = await startApiOn(ctx.stack, env);
      ctx.extraApis.push(api);
      return new AttestationClient({ baseUrl: api.url, token: await tokenFor("admin", ctx.stack.addresses.admin) });
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
      const wallet = createWalletClient({ account: privateKeyToAccount(HARDHAT_KEYS[5]), transport: http(ctx.stack.urls.rpc) });
      await wallet.sendTransaction({ to: USER_B, value: 1n, chain: null });
      expect((await failure(client.registerEncryptionKey(someKey()))).code).toBe("ROLLUP_REJECTED");
    });

    it("a nonce conflict reported by the node is NONCE_TOO_LOW {expected, received} (integers)", async () => {
      const account = privateKeyToAccount(HARDHAT_KEYS[5]);
      const wallet = createWalletClient({ account, transport: http(ctx.stack.urls.rpc) });
      const publicClient = createPublicClient({ transport: http(ctx.stack.urls.rpc) });
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
        rpcUrl: ctx.stack.urls.rpc,
        publicClient: publicClient as unknown as ChainErrorContext["publicClient"],
        nonce: current - 1,
      });
      expect(mapped.code).toBe("NONCE_TOO_LOW");
      expect(mapped.status).toBe(409);
      expect(mapped.details).toEqual({ expected: current, received: current - 1 });
    });

    it("an api started later learns schemas and the key from the rollup's history", async () => {
      const attestor = privateKeyToAccount(HARDHAT_KEYS[8]).address;
      const verdict = await ctx.stack.send({ type: "set_role", params: { address: attestor, role: "attestor", enabled: true } }, 0);
      expect(verdict.status).toBe("ACCEPTED");
      const late = await extraApi({ PRIVATE_KEY: HARDHAT_KEYS[8], PROVIDER_ALLOWED_HOSTS: "127.0.0.1" });
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: 2500, currency: "EUR" } } });
      const lateUser = late.withToken(await tokenFor("user", USER_B));
      const result = await lateUser.claim(ctx.claimFor("/balance"));
      expect(result.bucket).toBe("high");
      // Written through another api: the suite's api is told which input to wait for (read-your-writes across apis).
      const seen = lateUser.inputIndexSeen;
      expect(seen).toEqual(expect.any(Number));
      expect(await ctx.asClient(ctx.anon).withHeaders({ "X-Min-Input-Index": String(seen) }).attestation(result.claimId)).toMatchObject({ owner: ctx.b, bucket: "high", provider: "http" });
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
      const [env, reader] = ctx.rollups === "v2" ? [{ ROLLUP_URL: closed }, `${closed}/rpc`] : [{ GRAPHQL_URL: `${closed}/graphql` }, `${closed}/graphql`];
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
        ctx.stack.apiReplicaUrls.map(async (url) => {
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
      if (ctx.replicas > 1) {
        // Every replica served and wrote: the balancer spread the suite's writes.
        for (const text of texts) expect(seriesValue(text, "api_writes_per_transaction_count")).toBeGreaterThanOrEqual(1);
        for (const text of texts) expect(seriesValue(text, "api_redis_up")).toBe(1);
      }
    });
  });

  describe("the OpenAPI document against this suite's traffic", () => {
    it("every exchange conformed, and every documented operation was exercised", async () => {
      // The extensions the other suites cover in depth: called here once so this suite alone covers the document.
      const owner = ctx.asClient(ctx.userA);
      const [first] = await owner.attestations(ctx.a);
      expect(first).toBeDefined();
      const claimId = first?.claimId ?? "0x";
      await expect(owner.attestationData(claimId)).resolves.toMatchObject({ claimId, owner: ctx.a });
      // Ready or not yet claimed: both are documented answers.
      const proof = await owner.attestationProof(claimId).then(
        () => "ready",
        (error: unknown) => (error instanceof AttestationApiError ? error.code : String(error)),
      );
      expect(["ready", "PROOF_NOT_READY"]).toContain(proof);
      // TLS attestors (test/api/attestor.e2e.test.ts proves claims through one): register, list, remove.
      const someAttestor = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      expect(await ctx.asClient(ctx.admin).registerAttestor({ address: someAttestor, name: "e2e" })).toEqual({ address: someAttestor, enabled: true });
      expect(await ctx.asClient(ctx.anon).attestors()).toContainEqual({ address: someAttestor, name: "e2e", addedAt: expect.any(Number) });
      expect(await ctx.asClient(ctx.admin).registerAttestor({ address: someAttestor, enabled: false })).toEqual({ address: someAttestor, enabled: false });
      expect(await ctx.asClient(ctx.anon).attestors()).not.toContainEqual(expect.objectContaining({ address: someAttestor }));
      // The nullifier key set (test/attestor/nullifier-stack.e2e.test.ts makes nullifiers with one): none,
      // then one dealt 2 of 2 to two fresh attestors, read back.
      expect((await failure(ctx.asClient(ctx.anon).nullifierKeys())).code).toBe("NOT_FOUND");
      const holders = [1, 2].map((index) => ({ index, address: privateKeyToAccount(generatePrivateKey()).address.toLowerCase() }));
      for (const { address } of holders) await ctx.asClient(ctx.admin).registerAttestor({ address, name: "nullifier share holder" });
      const dealt = dealKey({ threshold: 2, indices: [1, 2] });
      expect(await ctx.asClient(ctx.admin).registerNullifierKeys({ keySet: dealt.keySet, attestors: holders })).toEqual({ threshold: 2, groupKey: dealt.keySet.groupKey });
      expect(await ctx.asClient(ctx.anon).nullifierKeys()).toEqual({ threshold: 2, groupKey: dealt.keySet.groupKey, commitments: dealt.keySet.commitments.map((c, i) => ({ ...c, attestor: holders[i]?.address })), registeredAt: expect.any(Number) });
      await ctx.asClient(ctx.anon).openapi();
      expect(ctx.conformance.problems).toEqual([]);
      expect(ctx.conformance.operations.filter((op) => !ctx.conformance.exercised.has(op))).toEqual([]);
    });
  });
}
