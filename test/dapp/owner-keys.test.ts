/**
 * Data only the owner and its grantees open (docs/consent.md) in the real dapp: an owner's key registered
 * on its own word only; a schema sealing to the owner takes only data sealed to the owner's newest key
 * (and the admin's, for "owner+admin"); a grant carries content keys sealed on the owner's side for the
 * requester, who opens the data with its own key; after a revoke the requester gets no content key, old
 * or new. Real NaCl keys throughout: the data is sealed and opened as the owner and requester would.
 */
import nacl from "tweetnacl";
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentDomain, ownerKeyTypedData } from "../../common/consent.ts";
import { openOwnerSealed, resealContentKey, sealToOwner } from "../../common/content-seal.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { inputIdOf, keyIdOf, schemaIdOf } from "../../common/ids.ts";
import { keyIdOfBase64 } from "../../common/owner-sealed.ts";
import { sealForKey } from "../../common/seal.ts";
import type { ContentKeyView, OwnerKeyView } from "../../common/wire.ts";
import { SCHEMA } from "./fixtures.ts";
import { ATTESTOR, BOB, firstReport, type Harness, OPERATOR, startHarness, stateDigest, T0 } from "./harness.ts";

const CHAIN_ID = 31337;
const APPLICATION = "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e" as Address;
const OWNER_SEALED = { ...SCHEMA, flowType: "owner", sealing: "owner" as const };
const BOTH = { ...SCHEMA, flowType: "both", sealing: "owner+admin" as const };
const sOwner = schemaIdOf(OWNER_SEALED);
const sBoth = schemaIdOf(BOTH);

const owner = privateKeyToAccount(generatePrivateKey());
const OWNER = owner.address.toLowerCase() as Address;
const ownerBox = nacl.box.keyPair();
const requesterBox = nacl.box.keyPair();
const adminBox = nacl.box.keyPair();
const b64 = (key: Uint8Array): string => Buffer.from(key).toString("base64");
const PLAINTEXT = new TextEncoder().encode(JSON.stringify({ "data.balance": 512.5, "data.currency": "EUR" }));

let h: Harness;
let clock = T0;

beforeAll(async () => {
  h = await startHarness({ application: { chainId: CHAIN_ID, address: APPLICATION } });
  for (const [type, params] of [
    ["register_schema", OWNER_SEALED],
    ["register_schema", BOTH],
    ["register_schema", SCHEMA],
    ["register_encryption_key", { publicKey: b64(adminBox.publicKey), algorithm: "nacl-box" }],
    ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
    ["set_role", { address: OPERATOR, role: "operator", enabled: true }],
  ] as const) {
    expect((await h.input(type, params, { timestamp: ++clock })).status).toBe("accept");
  }
});

afterAll(async () => {
  await h.close();
});

const digest = (): string => stateDigest(h);

async function attest(encryptedData: Hex, schemaId: Hex = sOwner, who: Address = OWNER) {
  return h.input("create_attestation", { schema_id: schemaId, owner: who, provider: "http", encrypted_data: encryptedData, bucket_values: { balance: "low" } }, { sender: ATTESTOR, timestamp: ++clock });
}

describe("an owner's own key", () => {
  it("is registered only on the owner's word: an operator's relay is refused, its signature or its wallet are not", async () => {
    const before = digest();
    const relayed = await h.input("register_owner_key", { public_key: b64(ownerBox.publicKey), algorithm: "nacl-box", owner: OWNER }, { sender: OPERATOR, timestamp: ++clock });
    expect(firstReport(relayed)).toEqual({ error: { code: "CONSENT_REJECTED", message: `consent: an owner's key is registered only on its own word: sign it (consent) or send it from ${OWNER}` } });
    expect(digest()).toBe(before);
    const keyId = keyIdOf(ownerBox.publicKey);
    const consent = { nonce: `0x${"01".repeat(32)}` as Hex, deadline: clock + 100 };
    const signature = await owner.signTypedData(ownerKeyTypedData(consentDomain(CHAIN_ID, APPLICATION), { owner: OWNER, keyId, ...consent }));
    const signed = await h.input("register_owner_key", { public_key: b64(ownerBox.publicKey), algorithm: "nacl-box", owner: OWNER, consent: { ...consent, signature } }, { sender: OPERATOR, timestamp: ++clock });
    expect([signed.status, firstReport(signed)]).toEqual(["accept", undefined]);
    expect(await h.read<OwnerKeyView>("owner_key", { owner: OWNER })).toEqual({ owner: OWNER, key_id: keyId, public_key: b64(ownerBox.publicKey), algorithm: "nacl-box", created_at: clock });
    const again = await h.input("register_owner_key", { public_key: b64(ownerBox.publicKey), algorithm: "nacl-box" }, { sender: OWNER, timestamp: ++clock });
    expect(firstReport(again)).toEqual({ error: { code: "DUPLICATE", message: `key ${keyId} is already ${OWNER}'s newest key` } });
    // The requester registers its own from its own wallet.
    expect((await h.input("register_owner_key", { public_key: b64(requesterBox.publicKey), algorithm: "nacl-box" }, { sender: BOB, timestamp: ++clock })).status).toBe("accept");
  });
});

describe("a schema that seals to the owner", () => {
  it("takes only data sealed to the owner's newest key, which the owner opens and the admin's key does not", async () => {
    const before = digest();
    const refused: [Hex, string][] = [
      [sealForKey(PLAINTEXT, b64(adminBox.publicKey)), `encrypted_data: schema ${sOwner} seals to the owner's key: not owner-sealed data (it does not start with OKS1)`],
      [sealToOwner(PLAINTEXT, [b64(adminBox.publicKey)]), `encrypted_data: not sealed to key ${keyIdOf(ownerBox.publicKey)} (schema ${sOwner} seals to the owner's newest key)`],
      [sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey), b64(adminBox.publicKey)]), `encrypted_data: sealed to 2 keys; schema ${sOwner} seals to exactly 1`],
    ];
    for (const [data, message] of refused) expect(firstReport(await attest(data))).toEqual({ error: { code: "INVALID_PARAMS", message } });
    const keyless = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Address;
    expect(firstReport(await attest(sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]), sOwner, keyless))).toEqual({
      error: { code: "INVALID_PARAMS", message: `encrypted_data: schema ${sOwner} seals to the owner's key, and ${keyless} has registered none (register_owner_key)` },
    });
    expect(digest()).toBe(before);

    const sealed = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
    expect((await attest(sealed)).status).toBe("accept");
    expect(openOwnerSealed(sealed, ownerBox.secretKey, { keyId: keyIdOf(ownerBox.publicKey) })).toEqual(PLAINTEXT);
    expect(() => openOwnerSealed(sealed, adminBox.secretKey, { keyId: keyIdOf(adminBox.publicKey) })).toThrow(/not sealed to this key/);
    expect(() => openOwnerSealed(sealed, adminBox.secretKey, { keyId: keyIdOf(ownerBox.publicKey) })).toThrow(/wrong key or tampered data/);
  });

  it("owner+admin takes data sealed to both, which each opens", async () => {
    const both = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey), b64(adminBox.publicKey)]);
    expect((await attest(both, sBoth)).status).toBe("accept");
    expect(openOwnerSealed(both, adminBox.secretKey, { keyId: keyIdOfBase64(b64(adminBox.publicKey)) })).toEqual(PLAINTEXT);
    expect(firstReport(await attest(sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]), sBoth))).toMatchObject({ error: { code: "INVALID_PARAMS", message: expect.stringContaining("the owner's newest key and the admin's") } });
  });
});

describe("content keys shared with a grant", () => {
  it("the requester opens what the owner shared, while the grant stands; after a revoke it gets nothing, old or new", async () => {
    const sealed = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
    const made = await attest(sealed);
    const attestationId = inputIdOf("create_attestation", made.index);
    const ownerKeyId = keyIdOf(ownerBox.publicKey);
    // On the owner's side: the content key sealed again for the requester's registered key.
    const sealedKey = resealContentKey(sealed, ownerKeyId, ownerBox.secretKey, b64(requesterBox.publicKey));
    const granted = await h.input("grant_access", { requester: BOB, schema_id: sOwner, expires_at: clock + 10_000, keys: [{ attestation_id: attestationId, sealed_key: sealedKey }] }, { sender: OWNER, timestamp: ++clock });
    expect([granted.status, firstReport(granted)]).toEqual(["accept", undefined]);
    const grantId = inputIdOf("grant_access", granted.index);
    const shared = await h.read<ContentKeyView>("content_key", { attestation_id: attestationId, requester: BOB });
    expect(shared).toEqual({ attestation_id: attestationId, requester: BOB, grant_id: grantId, key_id: keyIdOf(requesterBox.publicKey), sealed_key: sealedKey });
    expect(openOwnerSealed(sealed, requesterBox.secretKey, { sealedKey: shared.sealed_key })).toEqual(PLAINTEXT);

    // A later attestation, shared with share_keys while the grant stands.
    const later = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
    const laterId = inputIdOf("create_attestation", (await attest(later)).index);
    const share = await h.input("share_keys", { grant_id: grantId, keys: [{ attestation_id: laterId, sealed_key: resealContentKey(later, ownerKeyId, ownerBox.secretKey, b64(requesterBox.publicKey)) }] }, { sender: OWNER, timestamp: ++clock });
    expect(share.status).toBe("accept");
    expect((await h.read<ContentKeyView>("content_key", { attestation_id: laterId, requester: BOB })).grant_id).toBe(grantId);

    expect((await h.input("revoke_grant", { grant_id: grantId }, { sender: OWNER, timestamp: ++clock })).status).toBe("accept");
    for (const id of [attestationId, laterId]) {
      const out = await h.query("content_key", { attestation_id: id, requester: BOB });
      expect(hexToUtf8(out.exception ?? "0x")).toBe(`no content key of attestation ${id} is shared with ${BOB} by a standing grant`);
    }
    const newest = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
    const newestId = inputIdOf("create_attestation", (await attest(newest)).index);
    const afterRevoke = await h.input("share_keys", { grant_id: grantId, keys: [{ attestation_id: newestId, sealed_key: resealContentKey(newest, ownerKeyId, ownerBox.secretKey, b64(requesterBox.publicKey)) }] }, { sender: OWNER, timestamp: ++clock });
    expect(firstReport(afterRevoke)).toEqual({ error: { code: "GRANT_NOT_FOUND", message: `grant not found: ${grantId}` } });
  });

  it("refuses keys for a requester without a key, for another owner's attestation, or for an admin-sealed schema", async () => {
    const sealed = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
    const id = inputIdOf("create_attestation", (await attest(sealed)).index);
    const key = { attestation_id: id, sealed_key: resealContentKey(sealed, keyIdOf(ownerBox.publicKey), ownerBox.secretKey, b64(requesterBox.publicKey)) };
    const before = digest();
    const keyless = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Address;
    expect(firstReport(await h.input("grant_access", { requester: keyless, schema_id: sOwner, expires_at: clock + 1000, keys: [key] }, { sender: OWNER, timestamp: ++clock }))).toEqual({
      error: { code: "INVALID_PARAMS", message: `keys: requester ${keyless} has registered no key to seal content keys to (register_owner_key)` },
    });
    // BOB is no owner of that attestation: granting as BOB names it wrongly.
    expect(firstReport(await h.input("grant_access", { requester: OWNER, schema_id: sOwner, expires_at: clock + 1000, keys: [key] }, { sender: BOB, timestamp: ++clock }))).toMatchObject({
      error: { code: "INVALID_PARAMS", message: expect.stringContaining(`keys.0: attestation ${id} is not ${BOB}'s of schema ${sOwner}`) },
    });
    expect(firstReport(await h.input("grant_access", { requester: BOB, schema_id: schemaIdOf(SCHEMA), expires_at: clock + 1000, owner: OWNER, keys: [key] }, { sender: OPERATOR, timestamp: ++clock }))).toEqual({
      error: { code: "INVALID_PARAMS", message: `keys: schema ${schemaIdOf(SCHEMA)} seals to the admin's key: there are no content keys to share` },
    });
    expect(digest()).toBe(before);
  });
});
