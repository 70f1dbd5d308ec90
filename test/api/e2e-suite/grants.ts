/**
 * Grants, consent the owner signs, and data only the owner and its grantees open, through the api. Part of
 * the api's end-to-end suite (test/api/e2e-suite.ts).
 */
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { connectEvents } from "../../../client/index.ts";
import { contentSchemaOf } from "../../../common/sealed-content.ts";
import { signGrantConsent, signRevokeConsent } from "../../../client/consent.ts";
import { boxKeyPairOf, newBoxKeyPair, openAttestedData, shareContentKeys, signOwnerKey } from "../../../client/keys.ts";
import { USER_A, USER_A_KEY, USER_B, failure } from "../../support/api-fixtures.ts";
import { HARDHAT_KEYS, type SuiteContext } from "./context.ts";

export function grantsTests(ctx: SuiteContext): void {
  describe("grants", () => {
    const expiresAt = () => Math.floor(Date.now() / 1000) + 3600;

    it("grant, check, refuse a stranger's revoke, revoke, check again", async () => {
      const owner = ctx.asClient(ctx.userA);
      const expires = expiresAt();
      const granted = await owner.grant({ requester: USER_B, schemaId: ctx.schemaId, expiresAt: expires });
      expect(granted).toEqual({ grantId: expect.stringMatching(/^0x[0-9a-f]{64}$/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const created = await ctx.events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      expect(created.data).toEqual({ grantId: granted.grantId, owner: ctx.a, requester: ctx.b });

      expect(await owner.access(USER_A, USER_B)).toEqual({
        hasAccess: true,
        // The api relayed it on the token's word (consent "relayed"); a signed grant says "signed".
        grants: [{ grantId: granted.grantId, schemaId: ctx.schemaId, expiresAt: expires, consent: "relayed" }],
      });
      expect(await owner.access(USER_B, USER_A)).toEqual({ hasAccess: false, grants: [] });

      const stranger = await failure(ctx.asClient(ctx.userB).revokeGrant(granted.grantId));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);

      await owner.revokeGrant(granted.grantId);
      const revoked = await ctx.events.waitFor((e) => e.event === "grant:revoked" && e.data.grantId === granted.grantId);
      expect(revoked.data).toEqual({ grantId: granted.grantId, owner: ctx.a });
      expect((await owner.access(USER_A, USER_B)).hasAccess).toBe(false);

      const twice = await failure(owner.revokeGrant(granted.grantId));
      expect([twice.status, twice.code]).toEqual([404, "NOT_FOUND"]);
    });

    it("DELETE answers {success: true} without data", async () => {
      const owner = ctx.asClient(ctx.userA);
      const granted = await owner.grant({ requester: USER_B, schemaId: ctx.schemaId, expiresAt: expiresAt() });
      const raw = await owner.raw("DELETE", `/api/core/grant/${granted.grantId}`);
      expect([raw.status, raw.body]).toEqual([200, { success: true }]);
    });

    it("a grant on an unknown schema is 404 SCHEMA_NOT_FOUND", async () => {
      const unknown = `0x${"e".repeat(64)}` as Hex;
      const error = await failure(ctx.asClient(ctx.userA).grant({ requester: USER_B, schemaId: unknown, expiresAt: expiresAt() }));
      expect([error.status, error.code, error.details]).toEqual([404, "SCHEMA_NOT_FOUND", { schema_id: unknown }]);
    });

    it("lists the grants an address gave and the live ones it received", async () => {
      const requester = privateKeyToAccount(generatePrivateKey()).address;
      const granted = await ctx.asClient(ctx.userA).grant({ requester, schemaId: ctx.schemaId, expiresAt: expiresAt() });
      await ctx.events.waitFor((e) => e.event === "grant:created" && e.data.grantId === granted.grantId);
      const ofA = await ctx.asClient(ctx.anon).grantsOf(USER_A);
      expect(ofA.given).toContainEqual({ grantId: granted.grantId, requester: requester.toLowerCase(), schemaId: ctx.schemaId, createdAt: expect.any(Number), expiresAt: expect.any(Number), consent: "relayed" });
      const ofRequester = await ctx.asClient(ctx.anon).grantsOf(requester);
      expect(ofRequester).toEqual({ given: [], received: [{ grantId: granted.grantId, owner: ctx.a, schemaId: ctx.schemaId, expiresAt: expect.any(Number), consent: "relayed" }] });
    });

    it("concurrent writes from the one wallet never collide", async () => {
      const requesters = Array.from({ length: 5 }, () => privateKeyToAccount(generatePrivateKey()).address);
      const owner = ctx.asClient(ctx.userA);
      const results = await Promise.all(requesters.map((requester) => owner.grant({ requester, schemaId: ctx.schemaId, expiresAt: expiresAt() })));
      expect(new Set(results.map((r) => r.grantId)).size).toBe(requesters.length);
      const access = await Promise.all(requesters.map((requester) => owner.access(USER_A, requester)));
      expect(access.every((r) => r.hasAccess)).toBe(true);
    });

    it("inputs sent straight to the InputBox reach the WebSocket too", async () => {
      const ownerAddress = privateKeyToAccount(HARDHAT_KEYS[2]).address.toLowerCase();
      const verdict = await ctx.stack.send({ type: "grant_access", params: { requester: USER_B, schema_id: ctx.schemaId, expires_at: expiresAt() } }, 2);
      expect(verdict.status).toBe("ACCEPTED");
      const event = await ctx.events.waitFor((e) => e.event === "grant:created" && e.data.owner === ownerAddress);
      expect(event.data).toMatchObject({ owner: ownerAddress, requester: ctx.b });
    });

    it("a WebSocket client can narrow its events to one owner", async () => {
      const filtered = await connectEvents(ctx.stack.urls.ws, { subscribe: ["grant:created"], owner: USER_B });
      const fromA = await ctx.asClient(ctx.userA).grant({ requester: USER_B, schemaId: ctx.schemaId, expiresAt: expiresAt() + 1 });
      const fromB = await ctx.asClient(ctx.userB).grant({ requester: USER_A, schemaId: ctx.schemaId, expiresAt: expiresAt() });
      // B's grant straight to the InputBox (above) may reach this client first: a replica relays notices at its own pace.
      const got = await filtered.waitFor((e) => e.event === "grant:created" && e.data.grantId === fromB.grantId);
      expect(got.data).toMatchObject({ grantId: fromB.grantId, owner: ctx.b });
      await ctx.events.waitFor((e) => e.event === "grant:created" && e.data.grantId === fromA.grantId);
      expect(filtered.received.filter((e) => e.event === "grant:created" && e.data.owner !== ctx.b)).toHaveLength(0);
      await filtered.close();
    });
  });

  describe("consent the owner signs", () => {
    const owner = privateKeyToAccount(USER_A_KEY);

    it("the domain names this chain and application; a signed grant is recorded as signed, a relayed one as relayed", async () => {
      const domain = await ctx.asClient(ctx.anon).consentDomain();
      expect(domain).toEqual({ name: "Attestation rollup", version: "1", chainId: 31337, verifyingContract: ctx.stack.addresses.dapp.toLowerCase() });
      const requester = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;
      const grant = { requester, schemaId: ctx.schemaId, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const consent = await signGrantConsent(owner, domain, grant);
      const signed = await ctx.asClient(ctx.userA).grant({ ...grant, consent });
      const relayed = await ctx.asClient(ctx.userA).grant({ ...grant, requester: privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex });
      const given = (await ctx.asClient(ctx.anon).grantsOf(USER_A)).given;
      expect(given.find((g) => g.grantId === signed.grantId)?.consent).toBe("signed");
      expect(given.find((g) => g.grantId === relayed.grantId)?.consent).toBe("relayed");
      expect((await ctx.asClient(ctx.anon).access(USER_A, requester)).grants).toEqual([expect.objectContaining({ grantId: signed.grantId, consent: "signed" })]);
      // The same signature again: the rollup refuses its nonce, the api says why.
      await ctx.asClient(ctx.userA).revokeGrant(signed.grantId);
      const replay = await failure(ctx.asClient(ctx.userA).grant({ ...grant, consent }));
      expect([replay.status, replay.code, replay.details?.reason]).toEqual([403, "CONSENT_REJECTED", expect.stringContaining(`consent: nonce ${consent.nonce} was already used`)]);
    });

    it("a schema that requires the owner's consent: the api's relay alone is refused; the owner's signature grants and revokes", async () => {
      const content = { ...ctx.schemaContent("consent.example"), requireSignedConsent: true };
      const strict = (await ctx.asClient(ctx.admin).registerSchema(content)).schema_id;
      expect((await ctx.asClient(ctx.anon).schema(strict)).require_signed_consent).toBe(true);
      const domain = await ctx.asClient(ctx.anon).consentDomain();
      const grant = { requester: USER_B.toLowerCase() as Hex, schemaId: strict, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const relayed = await failure(ctx.asClient(ctx.userA).grant(grant));
      expect([relayed.status, relayed.code, relayed.details?.reason]).toEqual([403, "CONSENT_REJECTED", expect.stringContaining("an operator's word is refused")]);
      // Signed by someone else than the token's owner: refused too.
      const forged = await failure(ctx.asClient(ctx.userA).grant({ ...grant, consent: await signGrantConsent(privateKeyToAccount(generatePrivateKey()), domain, grant) }));
      expect([forged.code, forged.details?.reason]).toEqual(["CONSENT_REJECTED", expect.stringContaining("not by the owner")]);
      const granted = await ctx.asClient(ctx.userA).grant({ ...grant, consent: await signGrantConsent(owner, domain, grant) });
      const unsignedRevoke = await failure(ctx.asClient(ctx.userA).revokeGrant(granted.grantId));
      expect(unsignedRevoke.code).toBe("CONSENT_REJECTED");
      await ctx.asClient(ctx.userA).revokeGrant(granted.grantId, await signRevokeConsent(owner, domain, granted.grantId));
      expect((await ctx.asClient(ctx.anon).access(USER_A, USER_B)).grants.map((g) => g.grantId)).not.toContain(granted.grantId);
    });
  });

  describe("data only the owner and its grantees open", () => {
    const owner = privateKeyToAccount(USER_A_KEY);
    const requester = privateKeyToAccount(HARDHAT_KEYS[2]);
    const ownerKeys = newBoxKeyPair();
    const requesterKeys = newBoxKeyPair();
    let sealed: Hex;
    const sealedClaim = () => ({ ...ctx.claimFor("/owner-balance", { authorization: "Bearer owner-secret" }), schemaId: sealed });

    it("a schema that seals to the owner: no claim before the owner's key; the owner registers its key on its own word", async () => {
      sealed = (await ctx.asClient(ctx.admin).registerSchema({ ...ctx.schemaContent("127.0.0.1"), sealing: "owner" })).schema_id;
      expect((await ctx.asClient(ctx.anon).schema(sealed)).sealing).toBe("owner");
      ctx.provider.route("/owner-balance", { kind: "json", value: { data: { balance: "4321.5", currency: "CHF" } } });
      const missing = await failure(ctx.asClient(ctx.userA).claim(sealedClaim()));
      expect([missing.status, missing.code, missing.details]).toEqual([409, "OWNER_KEY_MISSING", { owner: ctx.a, schema_id: sealed }]);
      const unknown = await failure(ctx.asClient(ctx.anon).ownerKey(ctx.a));
      expect([unknown.status, unknown.code]).toEqual([404, "NOT_FOUND"]);

      const domain = await ctx.asClient(ctx.anon).consentDomain();
      // Signed by another wallet than the token's: the rollup refuses, nothing is registered.
      const forged = await failure(ctx.asClient(ctx.userA).registerOwnerKey(ownerKeys.publicKey, await signOwnerKey(requester, domain, ownerKeys.keyId)));
      expect([forged.status, forged.code]).toEqual([403, "CONSENT_REJECTED"]);
      expect(await ctx.asClient(ctx.userA).registerOwnerKey(ownerKeys.publicKey, await signOwnerKey(owner, domain, ownerKeys.keyId))).toEqual({
        keyId: ownerKeys.keyId,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(await ctx.asClient(ctx.anon).ownerKey(ctx.a)).toEqual({ owner: ctx.a, keyId: ownerKeys.keyId, publicKey: ownerKeys.publicKey, algorithm: "nacl-box", createdAt: expect.any(Number) });
      await ctx.asClient(ctx.userB).registerOwnerKey(requesterKeys.publicKey, await signOwnerKey(requester, domain, requesterKeys.keyId));
      const bad = await failure(ctx.asClient(ctx.userB).registerOwnerKey("not-a-key", await signOwnerKey(requester, domain, requesterKeys.keyId)));
      expect([bad.status, bad.code]).toEqual([400, "INVALID_KEY_FORMAT"]);
    });

    it("the owner opens its data with its own key, the admin's key does not; a grant with keys lets the requester open it, until revoked", async () => {
      // The schema's public view names the values the data is sealed as (common/sealed-content.ts).
      const view = await ctx.asClient(ctx.anon).schema(sealed);
      const names = contentSchemaOf(view);
      const first = await ctx.asClient(ctx.userA).claim(sealedClaim());
      const own = await ctx.asClient(ctx.userA).attestationData(first.claimId);
      // The api holds no key to this data: it serves the sealed bytes, never the plaintext.
      expect(own).not.toHaveProperty("data");
      expect(openAttestedData(own.encrypted_data as Hex, ownerKeys, undefined, names)).toEqual({ "data.currency": "CHF", "data.balance": 4321.5 });
      expect(() => openAttestedData(own.encrypted_data as Hex, boxKeyPairOf(Buffer.from(ctx.recipient.secretKey).toString("base64")))).toThrow();

      const noGrant = await failure(ctx.asClient(ctx.userB).attestationData(first.claimId));
      expect(noGrant.code).toBe("NO_GRANT_FOUND");
      const domain = await ctx.asClient(ctx.anon).consentDomain();
      const grant = { requester: ctx.b as Hex, schemaId: sealed, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      const keys = shareContentKeys(ownerKeys, requesterKeys.publicKey, [{ claimId: first.claimId, encryptedData: own.encrypted_data as Hex }]);
      const granted = await ctx.asClient(ctx.userA).grant({ ...grant, consent: await signGrantConsent(owner, domain, grant), keys });
      const read = await ctx.asClient(ctx.userB).attestationData(first.claimId);
      expect(read).not.toHaveProperty("data");
      expect(openAttestedData(read.encrypted_data as Hex, requesterKeys, read.sealedKey as Hex, names)).toEqual({ "data.currency": "CHF", "data.balance": 4321.5 });

      // An attestation made after the grant: no key for it until the owner shares one.
      const second = await ctx.asClient(ctx.userA).claim(sealedClaim());
      expect((await failure(ctx.asClient(ctx.userB).attestationData(second.claimId))).code).toBe("NO_GRANT_FOUND");
      const secondData = await ctx.asClient(ctx.userA).attestationData(second.claimId);
      const more = shareContentKeys(ownerKeys, requesterKeys.publicKey, [{ claimId: second.claimId, encryptedData: secondData.encrypted_data as Hex }]);
      const stranger = await failure(ctx.asClient(ctx.userB).shareKeys(granted.grantId, more));
      expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);
      expect(await ctx.asClient(ctx.userA).shareKeys(granted.grantId, more)).toEqual({ grantId: granted.grantId, txHash: expect.any(String), shared: 1 });
      const later = await ctx.asClient(ctx.userB).attestationData(second.claimId);
      expect(openAttestedData(later.encrypted_data as Hex, requesterKeys, later.sealedKey as Hex, names)).toMatchObject({ "data.balance": 4321.5 });

      await ctx.asClient(ctx.userA).revokeGrant(granted.grantId);
      expect((await failure(ctx.asClient(ctx.userB).attestationData(first.claimId))).code).toBe("NO_GRANT_FOUND");
      const afterRevoke = await failure(ctx.asClient(ctx.userA).shareKeys(granted.grantId, more));
      expect([afterRevoke.status, afterRevoke.code, afterRevoke.message]).toEqual([404, "NOT_FOUND", expect.stringContaining(granted.grantId)]);
    });
  });
}
