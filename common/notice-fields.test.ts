/**
 * The contracts' fields parsed from the dapp's notices (common/notice-fields.ts), what the publisher and
 * the tests pass to `record`/`recordMany`: plain and quorum attestations and revocations, and every
 * notice the contracts could not rebuild byte for byte, refused with its reason.
 */
import { describe, expect, it } from "vitest";
import { attestationFields, NoticeFieldsError, noticeEvent, revocationFields } from "./notice-fields.ts";

const A = `0x${"a1".repeat(20)}`;
const B = `0x${"b2".repeat(20)}`;
const ID = `0x${"c3".repeat(32)}`;
const SCHEMA = `0x${"d4".repeat(32)}`;
const created = (data: Record<string, unknown>): string =>
  JSON.stringify({
    event: "attestation:created",
    data: { claimId: ID, owner: A, provider: "http", schema_id: SCHEMA, bucket_values: { "data.balance": "mid" }, attester: B, timestamp: 1_800_000_000, expires_at: null, freshness_half_life: 86400, ...data },
  });

describe("attestation notices", () => {
  it("an unproven one: no attestors, expiry 0 for null", () => {
    expect(attestationFields(created({}))).toEqual({
      claimId: ID,
      owner: A,
      provider: "http",
      schemaId: SCHEMA,
      field: "data.balance",
      bucket: "mid",
      attestors: [],
      attester: B,
      timestamp: 1_800_000_000n,
      expiresAt: 0n,
      halfLife: 86400n,
    });
  });

  it("one attestor: the list of one; a quorum: the notice's list, its attestor first", () => {
    expect(attestationFields(created({ attestor: B, expires_at: 1_800_003_600 }))).toMatchObject({ attestors: [B], expiresAt: 1_800_003_600n });
    expect(attestationFields(created({ attestor: B, attestors: [B, A] })).attestors).toEqual([B, A]);
  });

  it.each([
    ["not JSON", "{", "the notice is not JSON"],
    ["a key the contracts do not rebuild", created({ extra: 1 }), "the notice cannot be rebuilt on chain"],
    ["text JSON escapes", created({ provider: 'ht"tp' }), "text JSON escapes cannot be rebuilt on chain"],
    ["two bucketed fields", created({ bucket_values: { a: "x", b: "y" } }), "one bucketed field"],
    ["a fractional half-life", created({ freshness_half_life: 1.5 }), "a whole number of seconds"],
    ["an upper-case address", created({ owner: A.toUpperCase().replace("0X", "0x") }), "data.owner"],
    ["a quorum whose attestor is not its first", created({ attestor: A, attestors: [B, A] }), "its attestor is not the first of its attestors"],
    ["a list of one (the dapp writes none for one attestor)", created({ attestor: B, attestors: [B] }), "data.attestors"],
  ])("refuses %s", (_, text, reason) => {
    expect(() => attestationFields(text)).toThrow(NoticeFieldsError);
    expect(() => attestationFields(text)).toThrow(reason);
  });
});

describe("revocation notices", () => {
  const revoked = (data: Record<string, unknown>): string =>
    JSON.stringify({ event: "attestation:revoked", data: { claimId: ID, owner: A, schema_id: SCHEMA, revoker: B, revoked_at: 1_800_000_100, reason: "duplicate", superseded_by: null, ...data } });

  it("superseded_by null is the zero id, and a successor is kept", () => {
    expect(revocationFields(revoked({}))).toEqual({ claimId: ID, owner: A, schemaId: SCHEMA, revoker: B, revokedAt: 1_800_000_100n, reason: "duplicate", supersededBy: `0x${"00".repeat(32)}` });
    expect(revocationFields(revoked({ superseded_by: SCHEMA })).supersededBy).toBe(SCHEMA);
  });

  it("refuses a reason JSON escapes, and an attestation notice", () => {
    expect(() => revocationFields(revoked({ reason: "line\nbreak" }))).toThrow("text JSON escapes cannot be rebuilt on chain");
    expect(() => revocationFields(created({}))).toThrow(NoticeFieldsError);
  });
});

describe("which event a notice is", () => {
  it.each([
    [created({}), "attestation:created"],
    [JSON.stringify({ event: "attestation:revoked", data: {} }), "attestation:revoked"],
    [JSON.stringify({ event: "grant:created", data: {} }), undefined],
    ["not json", undefined],
    ["null", undefined],
  ])("%s", (text, event) => {
    expect(noticeEvent(text)).toBe(event);
  });
});
