/**
 * Claims and attestations, and their validity (revocation, freshness, verify), through the api. Part of
 * the api's end-to-end suite (test/api/e2e-suite.ts).
 */
import { decodeBatchNotice, placeInBatch } from "../../../common/attestation-batch.ts";
import { getAddress, zeroAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { openSealed } from "../../../common/seal.ts";
import { namedContent } from "../../../common/sealed-content.ts";
import { AttestationClient } from "../../../client/index.ts";
import { hexToUtf8 } from "../../../common/hex.ts";
import { canonicalJson } from "../../../common/canonical.ts";
import { REVOCATION_DATA_SCHEMA, REVOCATION_SCHEMA_UID } from "../../../common/receipt.ts";
import { schemaIdOf } from "../../../common/ids.ts";
import { binRange } from "../../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText } from "../../../common/tls-claim.ts";
import { tokenFor, USER_A, USER_B, failure } from "../../support/api-fixtures.ts";
import { sdk, type SdkSignedOffchain } from "../../support/eas-sdk.ts";
import { inputsOnChain } from "../../support/stack.ts";
import { until } from "../../support/until.ts";
import type { SuiteContext } from "./context.ts";

export function claimsTests(ctx: SuiteContext): void {
  /**
   * A claim's answer carries its receipt at once (docs/receipts.md): eas-sdk verifies it against the signer
   * the status publishes, its fields are the attestation's, and GET receipt answers the same bytes.
   */
  const receiptHolds = async (result: Awaited<ReturnType<AttestationClient["claim"]>>): Promise<void> => {
    const status = await ctx.asClient(ctx.anon).status();
    expect(result.receipt).not.toBeNull();
    const { signer, receipt } = result.receipt as NonNullable<typeof result.receipt>;
    expect(signer).toBe(status.receipts.signer);
    expect(status.receipts.domain).toEqual({ name: "EAS Attestation", version: "1.3.0", chainId: 31337, verifyingContract: getAddress(ctx.stack.contracts?.registry ?? zeroAddress) });
    expect(receipt.domain).toEqual(status.receipts.domain);
    const offchain = new sdk.Offchain({ address: receipt.domain.verifyingContract, version: receipt.domain.version, chainId: BigInt(receipt.domain.chainId) }, 2);
    expect(offchain.verifyOffchainAttestationSignature(signer, receipt as unknown as SdkSignedOffchain)).toBe(true);
    const attestation = await ctx.asClient(ctx.anon).attestation(result.claimId);
    expect(receipt.message).toMatchObject({ schema: attestation.schemaId, recipient: getAddress(attestation.owner), time: attestation.timestamp, expirationTime: 0, revocable: true, refUID: result.claimId });
    expect(await ctx.asClient(ctx.anon).attestationReceipt(result.claimId)).toEqual(result.receipt);
    // The api's verdict on it: signed, or already proven if its epoch closed meanwhile; a field changed, invalid.
    const judged = await ctx.asClient(ctx.anon).verifyReceipt({ signer, receipt });
    expect(judged).toMatchObject({ kind: "attestation", claimId: result.claimId, mismatches: [] });
    expect(["SIGNED", "VALID"]).toContain(judged.verdict);
    const forged = await ctx.asClient(ctx.anon).verifyReceipt({ signer, receipt: { ...receipt, message: { ...receipt.message, time: receipt.message.time + 1 } } });
    expect(forged).toMatchObject({ verdict: "INVALID", reason: expect.stringMatching(/a field was changed$/) });
    // Not a receipt at all: refused as a request, naming the field, before any read.
    const notReceipt = await ctx.asClient(ctx.anon).raw("POST", "/api/core/verify/receipt", { signer, receipt: { ...receipt, uid: "0x12" } });
    expect([notReceipt.status, notReceipt.body]).toMatchObject([400, { error: { code: "INVALID_REQUEST", details: { field: "receipt.uid" } } }]);
    const unknown = await failure(ctx.asClient(ctx.anon).attestationReceipt(`0x${"00".repeat(32)}`));
    expect([unknown.status, unknown.code]).toEqual([404, "ATTESTATION_NOT_FOUND"]);
  };

  /** `client` waiting for the last input on chain: one sent past the api, which then cannot know of it. */
  const afterInputBox = async (client: AttestationClient): Promise<AttestationClient> => client.withHeaders({ "X-Min-Input-Index": String((await inputsOnChain(ctx.stack)) - 1) });

  describe("claims and attestations", () => {
    let claimId: Hex;

    it("a claim fetches, buckets, seals and records; reads and the WebSocket see it", async () => {
      const client = ctx.asClient(ctx.userA);
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const result = await client.claim(ctx.claimFor("/balance", { authorization: "Bearer provider-secret" }));
      expect(result).toEqual({ claimId: expect.stringMatching(/^0x[0-9a-f]{64}$/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), bucket: "mid", uniquePerAccount: false, receipt: expect.objectContaining({ signer: expect.any(String) }) });
      claimId = result.claimId;
      expect(ctx.provider.requests.at(-1)?.headers.authorization).toBe("Bearer provider-secret");
      await receiptHolds(result);

      const event = await ctx.events.waitFor((e) => e.event === "attestation:created" && e.data.claimId === claimId);
      expect(event.data).toEqual({ claimId, owner: ctx.a, provider: "http" });

      const attestation = await client.attestation(claimId);
      expect(attestation).toEqual({
        claimId,
        provider: "http",
        bucket: "mid",
        timestamp: expect.any(Number),
        owner: ctx.a,
        schemaId: ctx.schemaId,
        inputIndex: expect.any(Number),
        itemIndex: null,
        attestor: null,
        attestors: [],
        uniquePerAccount: false,
        // Validity (DECISIONS.md section 17): the api's wallet sent it; a schema without a validity period never expires.
        attester: expect.stringMatching(/^0x[0-9a-f]{40}$/),
        expiresAt: null,
        status: "valid",
        freshness: expect.any(Number),
        at: expect.any(Number),
        revocation: null,
      });
      expect(ctx.stack.replicaWallets.map((w) => w.toLowerCase())).toContain(attestation.attester);
      expect(attestation.freshness).toBeGreaterThan(0.99);
      // The transaction that carried it, found on the chain from the input's block.
      expect(await client.attestationInput(claimId)).toEqual({ claimId, inputIndex: attestation.inputIndex, itemIndex: null, blockNumber: expect.any(Number), txHash: result.txHash });
      // The schema counts it in its bucket once the api has read its notice. Each replica follows the
      // notices on its own, so the count is asserted on the answer that had it, not on a later request
      // the balancer may send to a replica whose next poll is still to come.
      const counted = await until(() => client.schema(ctx.schemaId), (s) => s.bucket_counts["data.balance"]?.mid !== undefined, "the bucket count");
      expect(counted.bucket_counts["data.balance"]?.mid).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(attestation.timestamp)).toBe(true);
      const list = await client.attestations(USER_A);
      expect(list).toContainEqual({ claimId, provider: "http", bucket: "mid", timestamp: attestation.timestamp, status: "valid", freshness: expect.any(Number) });
      expect(Object.keys(list[0] ?? {}).sort()).toEqual(["bucket", "claimId", "freshness", "provider", "status", "timestamp"]);

      // Only the key holder can read the sealed value: the field's value and the schema's data keys.
      const envelope = await ctx.stack.inspect({ type: "attestation", params: { attestation_id: claimId } });
      const view = JSON.parse(hexToUtf8(envelope.reports[0]?.payload ?? "0x")) as { encrypted_data: Hex; bucket_values: Record<string, string> };
      expect(view.bucket_values).toEqual({ "data.balance": "mid" });
      // In a sealed box (ephemeral key, box: no nonce sent), the values alone, named by the schema (issue 37).
      const plaintext = openSealed(view.encrypted_data, ctx.recipient.secretKey);
      expect(new TextDecoder().decode(plaintext)).toBe('["EUR",512.5]');
      expect(view.encrypted_data.length).toBe(2 + 2 * (32 + 16 + plaintext.length));
      expect(namedContent(plaintext, { dataKeys: ["data.currency"], bucketFields: ["data.balance"] })).toEqual({ ok: true, value: { "data.currency": "EUR", "data.balance": 512.5 } });
    });

    it("an unknown claim is 404 ATTESTATION_NOT_FOUND {claim_id}", async () => {
      const unknown = `0x${"f".repeat(64)}`;
      const error = await failure(ctx.asClient(ctx.anon).attestation(unknown));
      expect([error.status, error.code, error.details]).toEqual([404, "ATTESTATION_NOT_FOUND", { claim_id: unknown }]);
      expect(await ctx.asClient(ctx.anon).attestations(USER_B)).toEqual([]);
    });

    it("lists every attestation of an owner even when the rollup ends its pages early at their byte budget", async () => {
      const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      const sealed = `0x${"ab".repeat(16 * 1024)}`; // the largest sealed data the dapp takes: 32 fill a page
      const params = { schema_id: ctx.schemaId, owner, provider: "http", encrypted_data: sealed, bucket_values: { "data.balance": "mid" } };
      // Sent one after the other (the client orders one sender's transactions), their verdicts awaited together.
      const verdicts = await Promise.all(Array.from({ length: 34 }, () => ctx.stack.send({ type: "create_attestation", params })));
      for (const verdict of verdicts) expect([verdict.status, verdict.reports.map((r) => hexToUtf8(r))]).toEqual(["ACCEPTED", []]);
      // Sent past the api: it is told which input to wait for (read-your-writes when readers serve its reads).
      const listed = await (await afterInputBox(ctx.asClient(ctx.anon))).attestations(owner);
      expect(listed).toHaveLength(34);
      expect(new Set(listed.map((item) => item.claimId)).size).toBe(34);
    });

    it("provider failures map to the provider codes, never echoing the private value", async () => {
      const client = ctx.asClient(ctx.userA);
      ctx.provider.route("/huge-balance", { kind: "json", value: { data: { balance: 98765432, currency: "EUR" } } });
      const outside = await failure(client.claim(ctx.claimFor("/huge-balance")));
      expect([outside.status, outside.code]).toEqual([502, "PROVIDER_INVALID_RESPONSE"]);
      expect(outside.details).toEqual({ expected: expect.any(String), received: expect.any(String) });
      expect(JSON.stringify(outside.details) + outside.message).not.toContain("98765432");

      ctx.provider.route("/denied", { kind: "status", status: 401 });
      const denied = await failure(client.claim(ctx.claimFor("/denied")));
      expect([denied.status, denied.code]).toEqual([502, "PROVIDER_AUTH_FAILED"]);
      expect(denied.details).toMatchObject({ status: 401 });

      ctx.provider.route("/broken", { kind: "status", status: 500 });
      const broken = await failure(client.claim(ctx.claimFor("/broken")));
      expect([broken.status, broken.code]).toEqual([502, "PROVIDER_UNAVAILABLE"]);

      ctx.provider.route("/text", { kind: "json", value: { data: { balance: "lots" } } });
      const text = await failure(client.claim(ctx.claimFor("/text")));
      expect([text.status, text.code]).toEqual([502, "PROVIDER_INVALID_RESPONSE"]);
    });

    it("a bucketDefinition that differs from the schema's is INVALID_REQUEST", async () => {
      const request = ctx.claimFor("/balance");
      request.bucketDefinition.labels = ["l", "m", "h"];
      const error = await failure(ctx.asClient(ctx.userA).claim(request));
      expect([error.status, error.code]).toEqual([400, "INVALID_REQUEST"]);
      expect(error.details).toEqual({ field: "bucketDefinition", issue: expect.any(String) });
    });

    it("a claim naming its schemaId works; a claim needs a token", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: 5, currency: "USD" } } });
      const result = await ctx.asClient(ctx.userB).claim({ ...ctx.claimFor("/balance"), schemaId: ctx.schemaId });
      expect(result.bucket).toBe("low");
      expect((await ctx.asClient(ctx.anon).attestation(result.claimId)).owner).toBe(ctx.b);
      const error = await failure(ctx.asClient(ctx.anon).claim(ctx.claimFor("/balance")));
      expect([error.status, error.code]).toEqual([401, "AUTH_MISSING"]);
    });

    it("a user-proven claim whose signed claims do not check is INVALID_REQUEST naming the reason; one needs a token", async () => {
      // A claim in the attestor's format for this schema, signed by a key the rollup does not trust.
      const forger = privateKeyToAccount(generatePrivateKey());
      const range = binRange({ boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] }, "mid");
      if (range === undefined) throw new Error("no bin");
      const base = {
        provider: "http",
        parameters: canonicalJson(claimParameters({ url: ctx.provider.url("/balance", "127.0.0.1").replace("http:", "https:"), method: "GET", field: "data.balance", range })),
        owner: forger.address,
        timestampS: Math.floor(Date.now() / 1000),
        context: canonicalJson({ ...claimContext(ctx.a as Hex, ctx.schemaId, "0x01"), providerHash: "0x00" }),
        epoch: 1,
      };
      const identifier = claimIdentifier(base);
      const claim = { ...base, identifier };
      const proofs = [{ claim, signature: await forger.signMessage({ message: claimSignText(claim, identifier) }) }];
      const body = { schemaId: ctx.schemaId, field: "data.balance", bucket: "mid", encryptedData: "0x0102" as Hex, proofs };
      const forged = await failure(ctx.asClient(ctx.userA).claimProven(body));
      expect([forged.status, forged.code, forged.details]).toEqual([
        400,
        "INVALID_REQUEST",
        { field: "proofs", issue: `signed by ${forger.address.toLowerCase()}, which is not a registered attestor` },
      ]);
      const bare = await failure(ctx.asClient(ctx.userA).claimProven({ ...body, proofs: [] }));
      expect([bare.status, bare.code, bare.details?.field]).toEqual([400, "INVALID_REQUEST", "proofs"]);
      const anonymous = await failure(ctx.asClient(ctx.anon).claimProven(body));
      expect([anonymous.status, anonymous.code]).toEqual([401, "AUTH_MISSING"]);
    });

    it("the 11th attestation call in a minute is 429 RATE_LIMITED with Retry-After", async () => {
      const client = ctx.asClient(ctx.anon);
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
      return { address, client: ctx.anon.withToken(await tokenFor("user", address)) };
    }
    const closeEpoch = async (): Promise<void> => {
      const response = await fetch(`${ctx.stack.urls.node}/epoch/close`, { method: "POST" });
      expect(response.status).toBe(200);
    };

    it("verify: valid at the api's clock, each minimum refused with its reason, freshness 0.5 one half-life later", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const owner = await newOwner();
      const claimed = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      const attestation = await ctx.asClient(ctx.anon).attestation(claimed.claimId);
      const reader = ctx.asClient(ctx.anon);
      const plain = await reader.verify({ owner: owner.address, schemaId: ctx.schemaId });
      expect(plain).toMatchObject({ valid: true, reasons: [], checked: 1, attestation: { claimId: claimed.claimId, bucket: "mid", status: "valid" } });
      expect(["ready", "pending"]).toContain(plain.proofStatus);
      expect(await reader.verify({ owner: owner.address, schemaId: ctx.schemaId, minBucket: "mid", minFreshness: 0.9 })).toMatchObject({ valid: true });
      const higher = await reader.verify({ owner: owner.address, schemaId: ctx.schemaId, minBucket: "high" });
      expect(higher).toMatchObject({ valid: false, reasons: [{ code: "BUCKET_BELOW_MINIMUM", message: `attestation ${claimed.claimId}: data.balance is "mid", below the minimum "high"` }] });
      // One half-life (the schema's 86,400 s) after it was made: freshness 0.5 exactly.
      const later = await reader.verify({ owner: owner.address, schemaId: ctx.schemaId, at: attestation.timestamp + 86400, minFreshness: 0.6 });
      expect(later).toMatchObject({ valid: false, freshness: 0.5, at: attestation.timestamp + 86400, reasons: [{ code: "NOT_FRESH" }] });
      expect(await reader.verify({ owner: owner.address, schemaId: ctx.schemaId, at: attestation.timestamp + 86400, minFreshness: 0.5 })).toMatchObject({ valid: true, freshness: 0.5 });
      const attestor = `0x${"7".repeat(40)}`;
      expect(await reader.verify({ owner: owner.address, schemaId: ctx.schemaId, attestors: [attestor] })).toMatchObject({ valid: false, reasons: [{ code: "ATTESTOR_MISSING", message: `attestation ${claimed.claimId} was not proven by attestor ${attestor}` }] });
      expect(await ctx.asClient(ctx.anon).verify({ owner: USER_B, schemaId: `0x${"e".repeat(64)}` }).catch((e: unknown) => e)).toMatchObject({ status: 404, code: "SCHEMA_NOT_FOUND" });
      const nobody = await ctx.asClient(ctx.anon).verify({ owner: privateKeyToAccount(generatePrivateKey()).address, schemaId: ctx.schemaId });
      expect(nobody).toMatchObject({ valid: false, attestation: null, checked: 0, proofStatus: "none", proof: null, reasons: [{ code: "NO_ATTESTATION" }] });
    });

    it("verify refuses bad parameters, each in its own words", async () => {
      const client = ctx.asClient(ctx.anon);
      const owner = USER_A;
      const cases: [Parameters<AttestationClient["verify"]>[0], string, string][] = [
        [{ owner: "0x1234", schemaId: ctx.schemaId }, "owner", "a 0x-prefixed 20-byte hex address"],
        [{ owner, schemaId: "0x12" }, "schemaId", "a 0x-prefixed 32-byte hex schema id"],
        [{ owner, schemaId: ctx.schemaId, minFreshness: 1.5 }, "minFreshness", "a number in (0, 1]"],
        [{ owner, schemaId: ctx.schemaId, attestors: ["nope"] }, "attestor", "1 to 16 comma-separated addresses"],
        [{ owner, schemaId: ctx.schemaId, minBucket: "enormous" }, "minBucket", '"enormous" is not one of the field\'s labels (low, mid, high)'],
      ];
      for (const [query, parameter, expected] of cases) {
        const error = await failure(client.verify(query));
        expect([error.status, error.code, error.details?.parameter, error.details?.expected]).toEqual([400, "INVALID_PARAMETER", parameter, expected]);
      }
    });

    it("an owner withdraws its own attestation: marked revoked, the WebSocket says so, verify falls back to none, then to a newer one", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
      const owner = await newOwner();
      const first = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      // Not its owner: refused, nothing sent.
      const stranger = await failure(ctx.asClient(ctx.userB).revokeAttestation(first.claimId, { reason: "not mine" }));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);
      const badReason = await failure(ctx.asClient(owner.client).revokeAttestation(first.claimId, { reason: 'say "no"' }));
      expect([badReason.status, badReason.code, badReason.details?.field]).toEqual([400, "INVALID_REQUEST", "reason"]);
      expect((await ctx.asClient(ctx.anon).attestation(first.claimId)).status).toBe("valid");

      const revoked = await ctx.asClient(owner.client).revokeAttestation(first.claimId, { reason: "account closed" });
      expect(revoked).toEqual({
        claimId: first.claimId,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        revocation: { revokedAt: expect.any(Number), revoker: expect.stringMatching(/^0x[0-9a-f]{40}$/), reason: "account closed", supersededBy: null, inputIndex: expect.any(Number) },
        receipt: expect.objectContaining({ signer: expect.any(String) }),
      });
      // Its receipt: the same signer's EAS off-chain attestation, revoking the attestation's receipt, which eas-sdk verifies.
      const { signer, receipt } = revoked.receipt as NonNullable<typeof revoked.receipt>;
      const offchain = new sdk.Offchain({ address: receipt.domain.verifyingContract, version: receipt.domain.version, chainId: BigInt(receipt.domain.chainId) }, 2);
      expect(offchain.verifyOffchainAttestationSignature(signer, receipt as unknown as SdkSignedOffchain)).toBe(true);
      expect(receipt.message).toMatchObject({ schema: REVOCATION_SCHEMA_UID, recipient: getAddress(owner.address), time: revoked.revocation?.revokedAt, revocable: false, refUID: first.claimId });
      const revokes = new sdk.SchemaEncoder(REVOCATION_DATA_SCHEMA).decodeData(receipt.message.data).find((d) => d.name === "receipt");
      expect(revokes?.value.value).toBe((await ctx.asClient(ctx.anon).attestationReceipt(first.claimId)).receipt.uid);
      expect(await ctx.asClient(ctx.anon).revocationReceipt(first.claimId)).toEqual(revoked.receipt);
      expect(["SIGNED", "VALID"]).toContain((await ctx.asClient(ctx.anon).verifyReceipt({ signer, receipt })).verdict);

      const event = await ctx.events.waitFor((e) => e.event === "attestation:revoked" && e.data.claimId === first.claimId);
      expect(event.data).toMatchObject({ claimId: first.claimId, owner: owner.address, schema_id: ctx.schemaId, reason: "account closed", superseded_by: null });
      // Still readable, marked.
      expect(await ctx.asClient(ctx.anon).attestation(first.claimId)).toMatchObject({ status: "revoked", revocation: { reason: "account closed" } });
      expect(await ctx.asClient(ctx.anon).verify({ owner: owner.address, schemaId: ctx.schemaId })).toMatchObject({
        valid: false,
        attestation: { claimId: first.claimId, status: "revoked" },
        reasons: [{ code: "REVOKED", message: expect.stringContaining(`attestation ${first.claimId} was revoked at`) }],
      });
      const twice = await failure(ctx.asClient(owner.client).revokeAttestation(first.claimId, {}));
      expect([twice.status, twice.code]).toEqual([409, "ALREADY_REVOKED"]);

      const second = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      expect(await ctx.asClient(ctx.anon).verify({ owner: owner.address, schemaId: ctx.schemaId })).toMatchObject({ valid: true, checked: 1, attestation: { claimId: second.claimId } });
      const notRevoked = await failure(ctx.asClient(ctx.anon).revocationReceipt(second.claimId));
      expect([notRevoked.status, notRevoked.code]).toEqual([404, "NOT_REVOKED"]);
      // An admin revokes anyone's, naming its successor.
      const third = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      expect(await ctx.asClient(ctx.admin).revokeAttestation(second.claimId, { supersededBy: third.claimId })).toMatchObject({ revocation: { supersededBy: third.claimId } });
      const unknown = await failure(ctx.asClient(ctx.admin).revokeAttestation(`0x${"d".repeat(64)}`, {}));
      expect([unknown.status, unknown.code]).toEqual([404, "ATTESTATION_NOT_FOUND"]);
    });

    it("a revocation's notice has a base-layer proof once its epoch is claimed; verify hands the relied-on attestation's proof", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "5000", currency: "EUR" } } });
      const owner = await newOwner();
      const kept = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      const dropped = await ctx.asClient(owner.client).claim(ctx.claimFor("/balance"));
      const standing = await failure(ctx.asClient(ctx.anon).revocationProof(dropped.claimId));
      expect([standing.status, standing.code]).toEqual([404, "NOT_REVOKED"]);
      await ctx.asClient(owner.client).revokeAttestation(dropped.claimId, { reason: "duplicate" });
      await closeEpoch();
      const proof = await ctx.asClient(ctx.anon).revocationProof(dropped.claimId);
      const notice = JSON.parse(hexToUtf8(proof.notice as Hex)) as { event: string; data: Record<string, unknown> };
      expect(notice).toEqual({
        event: "attestation:revoked",
        data: { claimId: dropped.claimId, owner: owner.address, schema_id: ctx.schemaId, revoker: expect.stringMatching(/^0x[0-9a-f]{40}$/), revoked_at: expect.any(Number), reason: "duplicate", superseded_by: null },
      });
      const verdict = await ctx.asClient(ctx.anon).verify({ owner: owner.address, schemaId: ctx.schemaId, minBucket: "high" });
      expect(verdict).toMatchObject({ valid: true, checked: 2, attestation: { claimId: kept.claimId }, proofStatus: "ready" });
      // No publisher runs in this suite: the stack's registry and gate hold nothing of it (test/api/publisher.e2e.test.ts brings them).
      expect(await ctx.asClient(ctx.anon).onChain(kept.claimId)).toEqual({
        claimId: kept.claimId,
        registry: { address: ctx.stack.contracts?.registry.toLowerCase(), recorded: false, valid: false, revokedAt: null },
        gate: { address: ctx.stack.contracts?.gate.toLowerCase(), recorded: false, attestorCount: 0, revokedAt: null },
      });
      expect(JSON.parse(hexToUtf8(verdict.proof?.notice as Hex))).toMatchObject({ event: "attestation:created", data: { claimId: kept.claimId, bucket_values: { "data.balance": "high" } } });
      // The batch notices a contract records them from: the input that made it, and the one that revoked it.
      const made = await ctx.asClient(ctx.anon).attestationBatch(dropped.claimId);
      expect(placeInBatch(decodeBatchNotice(made.notice as Hex), dropped.claimId, "created")).toBe(made.at);
      const revoked = await ctx.asClient(ctx.anon).revocationBatch(dropped.claimId);
      expect(decodeBatchNotice(revoked.notice as Hex).revoked[revoked.at]).toEqual({ uid: dropped.claimId, owner: owner.address, schemaId: ctx.schemaId });
      const notRevoked = await failure(ctx.asClient(ctx.anon).revocationBatch(kept.claimId));
      expect([notRevoked.status, notRevoked.code]).toEqual([404, "NOT_REVOKED"]);
    });

    it("a schema's validity period gives each attestation an expiry: expired from that second on, readable and marked", async () => {
      const content = { ...ctx.schemaContent("expiring.example"), validityPeriod: 3600 };
      const registered = await ctx.asClient(ctx.admin).registerSchema(content);
      expect(registered.schema_id).toBe(schemaIdOf(content));
      expect((await ctx.asClient(ctx.anon).schema(registered.schema_id)).validity_period).toBe(3600);
      const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      const params = { schema_id: registered.schema_id, owner, provider: "http", encrypted_data: "0x01", bucket_values: { "data.balance": "low" } };
      const verdict = await ctx.stack.send({ type: "create_attestation", params });
      expect(verdict.status).toBe("ACCEPTED");
      const reader = await afterInputBox(ctx.asClient(ctx.anon));
      const [listed] = await reader.attestations(owner);
      const attestation = await reader.attestation(listed?.claimId as string);
      expect(attestation).toMatchObject({ expiresAt: attestation.timestamp + 3600, status: "valid" });
      expect(await reader.verify({ owner, schemaId: registered.schema_id, at: attestation.timestamp + 3599 })).toMatchObject({ valid: true });
      expect(await reader.verify({ owner, schemaId: registered.schema_id, at: attestation.timestamp + 3600 })).toMatchObject({
        valid: false,
        attestation: { status: "expired", expiresAt: attestation.timestamp + 3600 },
        reasons: [{ code: "EXPIRED", message: `attestation ${attestation.claimId} expired at ${attestation.timestamp + 3600}` }],
      });
    });
  });
}
