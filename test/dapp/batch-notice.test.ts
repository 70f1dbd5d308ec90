/**
 * The dapp's batch notices (common/attestation-batch.ts; issue 44), from the real dapp: one after the JSON
 * notices of every input that made or revoked attestations a contract can hold, none otherwise; each
 * attestation's place, owner and kind, the kinds shared; revocations with their attestation's owner and
 * schema; an attestation no contract can hold (two bucketed fields) left to its JSON notice; the notice read
 * back as the contracts read it, and refused where it is not one: the format before issue 52's flags
 * ("AttestationBatch/1") and unknown flags included; each kind flagged by whether its schema is unique per account.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keccak256, stringToHex, type Hex } from "viem";
import {
  BATCH_NOTICE_TAG,
  batchItemId,
  batchNoticeOf,
  BatchNoticeError,
  decodeBatchNotice,
  encodeBatchNotice,
  isBatchNotice,
  LONE_ITEM,
  placeInBatch,
  unbatchable,
} from "../../common/attestation-batch.ts";
import { inputIdOf, itemIdOf, schemaIdOf } from "../../common/ids.ts";
import { SCHEMA, SCHEMA_2 } from "./fixtures.ts";
import { ALICE, ATTESTOR, BOB, type Harness, startReadyHarness, T0 } from "./harness.ts";

const s1 = schemaIdOf(SCHEMA);
const s2 = schemaIdOf(SCHEMA_2);
const EXPIRING = { ...SCHEMA, flowType: "expiring", validityPeriod: 1000 };
const sExpiring = schemaIdOf(EXPIRING);

let h: Harness;
let clock = T0 + 50_000;

beforeAll(async () => {
  h = await startReadyHarness(SCHEMA);
  for (const schema of [SCHEMA_2, EXPIRING]) expect((await h.input("register_schema", schema, { timestamp: ++clock })).status).toBe("accept");
});

afterAll(async () => {
  await h.close();
});

const attestation = (owner: Hex, bucket: string, schemaId: Hex = s1) => ({
  type: "create_attestation",
  params: { schema_id: schemaId, owner, provider: "http", encrypted_data: "0x01", bucket_values: schemaId === s2 ? { score: bucket } : { balance: bucket } },
});

describe("the batch notice of an input", () => {
  it("a lone attestation: one notice after its JSON one, its item LONE, its kind the schema's, its time the input's", async () => {
    const out = await h.input("create_attestation", attestation(ALICE, "low").params, { sender: ATTESTOR, timestamp: ++clock });
    expect(out.status).toBe("accept");
    expect(out.notices).toHaveLength(1);
    const batch = decodeBatchNotice(out.batch as Hex);
    expect(batch).toEqual({
      inputIndex: BigInt(out.index),
      time: BigInt(clock),
      sender: ATTESTOR,
      kinds: [{ schemaId: s1, halfLife: 3600n, validity: 0n, uniquePerAccount: false, provider: "http", field: "balance", bucket: "low", attestors: [] }],
      created: [{ item: LONE_ITEM, owner: ALICE, kind: 0 }],
      revoked: [],
    });
    expect(batchItemId(batch.inputIndex, LONE_ITEM)).toBe(inputIdOf("create_attestation", out.index));
    expect(placeInBatch(batch, inputIdOf("create_attestation", out.index), "created")).toBe(0);
  });

  it("a batch input: one notice for all its items, kinds shared, places by item; a refused item and a two-field attestation left out", async () => {
    const items = [
      attestation(ALICE, "low"),
      attestation(BOB, "low"),
      // Refused: not a label of the field.
      attestation(BOB, "nonsense"),
      attestation(BOB, "mid"),
      attestation(ALICE, "good", s2),
      // Two bucketed fields: no contract holds it as DATA_SCHEMA says.
      { type: "create_attestation", params: { schema_id: s2, owner: BOB, provider: "http", encrypted_data: "0x01", bucket_values: { score: "good", age: "adult" } } },
      attestation(BOB, "low", sExpiring),
    ];
    const out = await h.input("batch", { items }, { sender: ATTESTOR, timestamp: ++clock });
    expect(out.status).toBe("accept");
    expect(out.notices).toHaveLength(6);
    const batch = decodeBatchNotice(out.batch as Hex);
    expect(batch.kinds.map((k) => [k.schemaId, k.bucket, k.validity, k.uniquePerAccount])).toEqual([
      [s1, "low", 0n, false],
      [s1, "mid", 0n, false],
      [s2, "good", 0n, false],
      [sExpiring, "low", 1000n, false],
    ]);
    expect(batch.created).toEqual([
      { item: 0, owner: ALICE, kind: 0 },
      { item: 1, owner: BOB, kind: 0 },
      { item: 3, owner: BOB, kind: 1 },
      { item: 4, owner: ALICE, kind: 2 },
      { item: 6, owner: BOB, kind: 3 },
    ]);
    expect(batch.created.map((c) => batchItemId(batch.inputIndex, c.item))).toEqual([0, 1, 3, 4, 6].map((k) => itemIdOf("create_attestation", out.index, k)));
    expect(placeInBatch(batch, itemIdOf("create_attestation", out.index, 5), "created")).toBeUndefined();
  });

  it("revocations: their attestations' ids, owners and schemas, the revoker the input's sender", async () => {
    const made = await h.input("batch", { items: [attestation(ALICE, "mid"), attestation(BOB, "mid")] }, { sender: ATTESTOR, timestamp: ++clock });
    const ids = [0, 1].map((k) => itemIdOf("create_attestation", made.index, k));
    const out = await h.input("batch", { items: ids.map((id) => ({ type: "revoke_attestation", params: { attestation_id: id } })) }, { sender: ATTESTOR, timestamp: ++clock });
    expect(out.status).toBe("accept");
    expect(decodeBatchNotice(out.batch as Hex)).toEqual({
      inputIndex: BigInt(out.index),
      time: BigInt(clock),
      sender: ATTESTOR,
      kinds: [],
      created: [],
      revoked: [
        { uid: ids[0], owner: ALICE, schemaId: s1 },
        { uid: ids[1], owner: BOB, schemaId: s1 },
      ],
    });
  });

  it("no notice for an input that made nothing a contract holds, nor for a rejected one", async () => {
    const keyOnly = await h.input("register_schema", { ...SCHEMA, flowType: "another" }, { timestamp: ++clock });
    expect(keyOnly.status).toBe("accept");
    expect(keyOnly.batch).toBeNull();
    const twoFields = await h.input("create_attestation", { schema_id: s2, owner: BOB, provider: "http", encrypted_data: "0x01", bucket_values: { score: "good", age: "adult" } }, { sender: ATTESTOR, timestamp: ++clock });
    expect(twoFields.status).toBe("accept");
    expect(twoFields.batch).toBeNull();
    const refused = await h.input("create_attestation", attestation(ALICE, "nonsense").params, { sender: ATTESTOR, timestamp: ++clock });
    expect(refused.status).toBe("reject");
    expect(refused.batch).toBeNull();
  });
});

describe("the layout", () => {
  const sample = {
    inputIndex: 7n,
    time: 1_800_000_000n,
    sender: ATTESTOR,
    kinds: [{ schemaId: s1, halfLife: 3600n, validity: 60n, uniquePerAccount: true, provider: "http", field: "balance", bucket: "élevé", attestors: [ALICE, BOB] }],
    created: [{ item: 2, owner: BOB, kind: 0 }],
    revoked: [{ uid: s2, owner: ALICE, schemaId: s1 }],
  } as const;

  it("reads back what it writes, UTF-8 labels and attestor lists included, starting with the tag", () => {
    const encoded = encodeBatchNotice({ ...sample, kinds: [...sample.kinds.map((k) => ({ ...k, attestors: [...k.attestors] }))], created: [...sample.created], revoked: [...sample.revoked] });
    expect(encoded.slice(0, 10)).toBe(BATCH_NOTICE_TAG);
    expect(decodeBatchNotice(encoded)).toEqual(sample);
  });

  it("refuses what is not one: another tag, a cut notice, bytes past its items", () => {
    const encoded = encodeBatchNotice({ ...sample, kinds: [{ ...sample.kinds[0], attestors: [ALICE, BOB] }], created: [...sample.created], revoked: [...sample.revoked] });
    expect(() => decodeBatchNotice(`0x00${encoded.slice(4)}`)).toThrow(BatchNoticeError);
    expect(() => decodeBatchNotice(encoded.slice(0, -2) as Hex)).toThrow(/ends at byte/);
    expect(() => decodeBatchNotice(`${encoded}00`)).toThrow(/past its items/);
  });

  it("carries the flag in the kind's byte after its validity, under the tag of AttestationBatch/2; refuses /1 and unknown flags", () => {
    const encoded = encodeBatchNotice({ ...sample, kinds: [{ ...sample.kinds[0], attestors: [ALICE, BOB] }], created: [...sample.created], revoked: [...sample.revoked] });
    expect(BATCH_NOTICE_TAG).toBe(keccak256(stringToHex("AttestationBatch/2")).slice(0, 10));
    // tag 4, input 8, time 8, sender 20, kindCount 1, schemaId 32, halfLife 8, validity 8: the flags byte.
    const flagsAt = 2 + 2 * (41 + 48);
    expect(encoded.slice(flagsAt, flagsAt + 2)).toBe("01");
    const plain = encodeBatchNotice({ ...sample, kinds: [{ ...sample.kinds[0], uniquePerAccount: false, attestors: [] }], created: [...sample.created], revoked: [...sample.revoked] });
    expect(plain.slice(flagsAt, flagsAt + 2)).toBe("00");
    expect(decodeBatchNotice(plain).kinds[0]?.uniquePerAccount).toBe(false);
    const withFlags = (flags: string): Hex => `${encoded.slice(0, flagsAt)}${flags}${encoded.slice(flagsAt + 2)}` as Hex;
    expect(() => decodeBatchNotice(withFlags("02"))).toThrow(/unknown flags 0x2/);
    expect(() => decodeBatchNotice(withFlags("81"))).toThrow(/unknown flags 0x81/);
    // The same items in the format before: the old tag and no flags byte. Neither reader takes the other's.
    const formatOne = `${keccak256(stringToHex("AttestationBatch/1")).slice(0, 10)}${encoded.slice(10, flagsAt)}${encoded.slice(flagsAt + 2)}` as Hex;
    expect(isBatchNotice(formatOne)).toBe(false);
    expect(() => decodeBatchNotice(formatOne)).toThrow(/not a batch notice/);
  });

  it("flags each kind by its schema: a schema unique per account's kinds, not the others', and never one kind for both", () => {
    const data = { owner: ALICE, provider: "http", attester: ATTESTOR, timestamp: 1, expires_at: null, freshness_half_life: 3600, bucket_values: { balance: "low" } };
    const made = [s1, s2, s1].map((schemaId, item) => ({ item, data: { ...data, claimId: itemIdOf("create_attestation", 9, item), schema_id: schemaId } }));
    const batch = batchNoticeOf({ index: 9, timestamp: 1, sender: ATTESTOR }, made, [], (schemaId) => schemaId === s2);
    expect(batch?.kinds.map((k) => [k.schemaId, k.uniquePerAccount])).toEqual([
      [s1, false],
      [s2, true],
    ]);
    expect(batch?.created.map((c) => c.kind)).toEqual([0, 1, 0]);
    expect(decodeBatchNotice(encodeBatchNotice(batch as NonNullable<typeof batch>))).toEqual(batch);
  });

  it("says why an attestation stays out", () => {
    const data = { claimId: s1, owner: ALICE, provider: "http", schema_id: s1, attester: ATTESTOR, timestamp: 1, expires_at: null, freshness_half_life: 3600 };
    expect(unbatchable({ ...data, bucket_values: { balance: "low" } })).toBeUndefined();
    expect(unbatchable({ ...data, bucket_values: {} })).toMatch(/0 bucketed fields/);
    expect(unbatchable({ ...data, bucket_values: { balance: "low" }, freshness_half_life: 0.5 })).toBe("a fractional half-life");
  });
});
