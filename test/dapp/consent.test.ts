/**
 * Consent the owner signs (DECISIONS.md section 16) in the real dapp: a grant or revoke carrying the
 * owner's EIP-712 signature is applied whoever sends it and recorded as signed; a replayed, expired,
 * wrong-domain or wrong-signer signature is refused and writes nothing; a schema that requires the
 * owner's own consent refuses an operator's relay; a dapp that does not know its domain refuses
 * signatures rather than guess.
 */
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentDomain, grantTypedData, revokeTypedData } from "../../common/consent.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import type { AccessCheck, GrantView } from "../../common/wire.ts";
import { SCHEMA } from "./fixtures.ts";
import { ADMIN, BOB, firstReport, type Harness, OPERATOR, startHarness, stateDigest, T0 } from "./harness.ts";

const CHAIN_ID = 31337;
const APPLICATION = "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e" as Address;
const STRICT = { ...SCHEMA, flowType: "strict", requireSignedConsent: true };
const s1 = schemaIdOf(SCHEMA);
const strict = schemaIdOf(STRICT);
const owner = privateKeyToAccount(generatePrivateKey());
const OWNER = owner.address.toLowerCase() as Address;
const stranger = privateKeyToAccount(generatePrivateKey());

let h: Harness;
let clock = T0;
let nonceCounter = 0;
const nonce = (): Hex => `0x${(++nonceCounter).toString(16).padStart(64, "0")}`;

beforeAll(async () => {
  h = await startHarness({ application: { chainId: CHAIN_ID, address: APPLICATION } });
  for (const [type, params] of [
    ["register_schema", SCHEMA],
    ["register_schema", STRICT],
    ["set_role", { address: OPERATOR, role: "operator", enabled: true }],
  ] as const) {
    expect((await h.input(type, params, { timestamp: ++clock })).status).toBe("accept");
  }
});

afterAll(async () => {
  await h.close();
});

const digest = (): string => stateDigest(h);

async function signedGrant(o: { signer?: typeof owner; chainId?: number; schemaId?: Hex; requester?: Address; deadline?: number; nonce?: Hex } = {}) {
  const consent = { nonce: o.nonce ?? nonce(), deadline: o.deadline ?? clock + 1000 };
  const grant = { owner: OWNER, requester: o.requester ?? BOB, schemaId: o.schemaId ?? s1, expiresAt: clock + 10_000 };
  const typed = grantTypedData(consentDomain(o.chainId ?? CHAIN_ID, APPLICATION), { ...grant, ...consent });
  const signature = await (o.signer ?? owner).signTypedData(typed);
  return { requester: grant.requester, schema_id: grant.schemaId, expires_at: grant.expiresAt, owner: OWNER, consent: { ...consent, signature } };
}

describe("a grant the owner signed", () => {
  it("is applied whoever sends it, recorded as signed, and its signature is never applied twice", async () => {
    const params = await signedGrant();
    const out = await h.input("grant_access", params, { sender: stranger.address, timestamp: ++clock });
    expect([out.status, firstReport(out)]).toEqual(["accept", undefined]);
    const grants = await h.read<GrantView[]>("grants_by_owner", { owner: OWNER });
    expect(grants).toEqual([expect.objectContaining({ grant_id: inputIdOf("grant_access", out.index), requester: BOB, consent: "signed" })]);
    expect(await h.read<AccessCheck>("check_access", { owner: OWNER, requester: BOB })).toMatchObject({ has_access: true, grants: [{ consent: "signed" }] });
    // The same signed grant again (the grant revoked first, so only the nonce stands in the way).
    const revoke = await h.input("revoke_grant", { grant_id: inputIdOf("grant_access", out.index) }, { sender: OWNER, timestamp: ++clock });
    expect(revoke.status).toBe("accept");
    const before = digest();
    const replay = await h.input("grant_access", params, { sender: ADMIN, timestamp: ++clock });
    expect(firstReport(replay)).toEqual({ error: { code: "CONSENT_REJECTED", message: `consent: nonce ${params.consent.nonce} was already used (input ${out.index})` } });
    expect(digest()).toBe(before);
  });

  it("refuses an expired, a stranger's, another chain's or an altered signature, writing nothing", async () => {
    const before = digest();
    const expired = await signedGrant({ deadline: clock });
    const byStranger = await signedGrant({ signer: stranger });
    const otherChain = await signedGrant({ chainId: 1 });
    const altered = { ...(await signedGrant()), requester: OPERATOR };
    const cases: [Record<string, unknown>, RegExp][] = [
      [expired, new RegExp(`^consent: the signature's deadline ${clock} has passed \\(block time ${clock + 1}\\)$`)],
      [byStranger, new RegExp(`^consent: signed by ${stranger.address.toLowerCase()}, not by the owner ${OWNER} \\(or for another chain, application or message\\)$`)],
      [otherChain, /^consent: signed by 0x[0-9a-f]{40}, not by the owner/],
      [altered, /^consent: signed by 0x[0-9a-f]{40}, not by the owner/],
      [{ ...(await signedGrant()), consent: { nonce: nonce(), deadline: clock + 100, signature: `0x${"00".repeat(65)}` } }, /^consent: the signature does not recover$/],
    ];
    for (const [params, message] of cases) {
      const out = await h.input("grant_access", params, { sender: ADMIN, timestamp: clock + 1 });
      expect(firstReport(out)).toEqual({ error: { code: "CONSENT_REJECTED", message: expect.stringMatching(message) } });
    }
    const noOwner = await h.input("grant_access", { ...(await signedGrant()), owner: undefined }, { sender: ADMIN, timestamp: clock + 1 });
    expect(firstReport(noOwner)).toEqual({ error: { code: "INVALID_PARAMS", message: "owner: required with consent" } });
    expect(digest()).toBe(before);
  });
});

describe("a schema that requires the owner's own consent", () => {
  it("refuses an operator's relay of a grant and of a revoke; takes the owner's signature or its own wallet", async () => {
    const before = digest();
    const relayed = await h.input("grant_access", { requester: BOB, schema_id: strict, expires_at: clock + 10_000, owner: OWNER }, { sender: OPERATOR, timestamp: ++clock });
    expect(firstReport(relayed)).toEqual({
      error: { code: "CONSENT_REJECTED", message: `consent: schema ${strict} requires the owner's own consent: sign it (consent) or send it from ${OWNER}; an operator's word is refused` },
    });
    expect(digest()).toBe(before);
    const signed = await h.input("grant_access", await signedGrant({ schemaId: strict }), { sender: OPERATOR, timestamp: ++clock });
    expect(signed.status).toBe("accept");
    const grantId = inputIdOf("grant_access", signed.index);
    const direct = await h.input("grant_access", { requester: OPERATOR, schema_id: strict, expires_at: clock + 10_000 }, { sender: OWNER, timestamp: ++clock });
    expect(direct.status).toBe("accept");
    expect((await h.read<GrantView[]>("grants_by_owner", { owner: OWNER })).map((g) => g.consent)).toEqual(["signed", "owner"]);

    const relayedRevoke = await h.input("revoke_grant", { grant_id: grantId, owner: OWNER }, { sender: OPERATOR, timestamp: ++clock });
    expect(firstReport(relayedRevoke)).toMatchObject({ error: { code: "CONSENT_REJECTED" } });
    const consent = { nonce: nonce(), deadline: clock + 100 };
    const signature = await owner.signTypedData(revokeTypedData(consentDomain(CHAIN_ID, APPLICATION), { owner: OWNER, grantId, ...consent }));
    const signedRevoke = await h.input("revoke_grant", { grant_id: grantId, owner: OWNER, consent: { ...consent, signature } }, { sender: OPERATOR, timestamp: ++clock });
    expect(signedRevoke.status).toBe("accept");
    expect((await h.read<GrantView[]>("grants_by_owner", { owner: OWNER })).map((g) => g.consent)).toEqual(["owner"]);
  });

  it("keeps taking an operator's relay for a schema that does not require consent, recorded as relayed", async () => {
    const out = await h.input("grant_access", { requester: stranger.address, schema_id: s1, expires_at: clock + 10_000, owner: OWNER }, { sender: OPERATOR, timestamp: ++clock });
    expect(out.status).toBe("accept");
    expect(await h.read<AccessCheck>("check_access", { owner: OWNER, requester: stranger.address })).toMatchObject({ grants: [{ consent: "relayed" }] });
  });
});

describe("a dapp that does not know its chain and address", () => {
  it("refuses signed consent rather than guess the domain", async () => {
    const bare = await startHarness();
    try {
      expect((await bare.input("register_schema", SCHEMA)).status).toBe("accept");
      const out = await bare.input("grant_access", await signedGrant(), { sender: ADMIN });
      expect(firstReport(out)).toEqual({
        error: { code: "CONSENT_REJECTED", message: "consent: this rollup does not know its chain id and application address (DAPP_CHAIN_ID, DAPP_ADDRESS), so it cannot check a signature" },
      });
    } finally {
      await bare.close();
    }
  });
});
