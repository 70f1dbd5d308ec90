/**
 * Every decode rejection of a compact batch (common/compact-batch.ts, common/compact-item.ts; docs/dapp.md
 * "compact batch") that test/dapp/compact-batch.test.ts does not pin, one row each, sent as raw bytes to
 * the real dapp (real migrations, real SQLite, real @deroll/app loop). A payload that cannot be split is
 * rejected whole with INVALID_PAYLOAD naming the byte; an item that cannot be read is rejected alone,
 * naming itself and the byte: alone in its batch, the input is rejected; before a good item, the input
 * is accepted with that one report and the good item's notice. No rejected input changes the database
 * digest, and the dapp answers the next input as before.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ByteWriter } from "../../common/compact-bytes.ts";
import { bytesToHex, hexToBytes } from "../../common/hex.ts";
import { itemIdOf } from "../../common/ids.ts";
import { ALICE, ATTESTOR, decode, startReadyHarness, stateDigest, type Harness } from "./harness.ts";
import { SCHEMA } from "./fixtures.ts";

/** A second schema (short index 2) whose attestations carry attestors' claims: kind 0x01 items read against it. */
const PROVEN = {
  provider: "http",
  flowType: "proven",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor",
  attestorQuorum: 2,
};

/**
 * `c1 01 | 01 ALICE | N | items`: marker at byte 0, version at 1, the address count at 2, ALICE at 3..22, N at 23, the
 * first item's kind at 24, its length at 25, its body from 26.
 */
const batchOf = (...items: string[]): Hex => `0x${["c1", "01", "01", ALICE.slice(2), items.length.toString(16).padStart(2, "0"), ...items].join("").replace(/ /g, "")}` as Hex;

/** Kind, varint length, body: one item's bytes, as hex. */
const item = (kind: number, body: string): string => bytesToHex(new ByteWriter().u8(kind).sized(hexToBytes(`0x${body.replace(/ /g, "")}`)).toBytes()).slice(2);

/** An attestation under SCHEMA (short index 1, field balance: low, mid) for ALICE, "mid", sealed c0ffee: applied. */
const GOOD = item(0, "01 00 02 c0ffee");
const SIGNATURE = "00".repeat(64);
/** A proven item's start: schema 2, owner 0 (ALICE), data.balance "mid"; its claims' count is at byte 29. */
const provenHead = "02 00 02";
/** Claim 0 from byte 30: flags 00 (GET), URL "/b" (length at 31), signer 0 at 34, time at 35..38, epoch 1 at 39. */
const claimZero = "00 02 2f62 00 00000000 01";

let h: Harness;
beforeAll(async () => {
  h = await startReadyHarness(SCHEMA);
  const proven = await h.input("register_schema", PROVEN);
  if (proven.status !== "accept") throw new Error("setup: the proven schema was rejected");
});
afterAll(async () => {
  await h?.close();
});

async function send(payload: Hex): Promise<{ status: string; reports: unknown[]; notices: unknown[]; digest: string }> {
  const out = await h.raw(payload, { sender: ATTESTOR });
  return { status: out.status, reports: out.reports.map(decode), notices: out.notices.map(decode), digest: stateDigest(h) };
}

describe("a compact payload that cannot be split: rejected whole, INVALID_PAYLOAD naming the byte, nothing written", () => {
  it.each([
    ["the header ends after the version", "0xc101", "compact batch, byte 2: the input ends before the number of addresses"],
    ["a non-minimal varint for the number of addresses", "0xc1018000", "compact batch, byte 2: the number of addresses is not a minimal varint"],
    ["a number of addresses above 2^32 - 1", "0xc101ffffffff1f", "compact batch, byte 2: the number of addresses is above 4294967295"],
    ["a number of items longer than 5 bytes", "0xc10100ffffffffff01", "compact batch, byte 3: the number of items is a varint longer than 5 bytes"],
    ["no number of items", `${batchOf().slice(0, -2)}`, "compact batch, byte 23: the input ends before the number of items"],
    ["257 items", "0xc101008102", "compact batch, byte 3: a batch holds 1 to 256 items, not 257"],
    ["fewer items than announced", "0xc10100020202" + "7b7d", "compact batch, byte 8: item 1 (at byte 8) is truncated: the input ends before the item's kind"],
    ["an item's length cut inside its varint", "0xc10100010280", "compact batch, byte 6: item 0 (at byte 4) is truncated: the input ends before the length of the item's body"],
  ])("%s", async (_name, payload, message) => {
    const before = stateDigest(h);
    expect(await send(payload as Hex)).toEqual({ status: "reject", reports: [{ error: { code: "INVALID_PAYLOAD", message } }], notices: [], digest: before });
  });
});

describe("a compact item that cannot be read: rejected alone, INVALID_PARAMS naming the item and the byte", () => {
  it.each([
    ["a JSON item that is not UTF-8", item(2, "fffe"), "compact batch item 0, byte 26: the item is not UTF-8 JSON"],
    ["a JSON item that is UTF-8 but not JSON", item(2, "7b2274797065"), "compact batch item 0, byte 26: the item is not UTF-8 JSON"],
    ["an attestation with an empty body", item(0, ""), "compact batch item 0, byte 26: the input ends before the schema index"],
    ["an attestation whose schema index is no minimal varint", item(0, "8100 00 02 c0ffee"), "compact batch item 0, byte 26: the schema index is not a minimal varint"],
    ["an attestation that ends before its bucket byte", item(0, "01 00"), "compact batch item 0, byte 28: the input ends before the bucket of balance"],
    ["a proven item with no bucket set", item(1, `02 00 00 01 ${claimZero} ${SIGNATURE}`), "compact batch item 0, byte 29: a proven item sets exactly one bucket field, not 0"],
    ["a claim flag outside the layout (bit 7)", item(1, `${provenHead} 01 80`), "compact batch item 0, byte 30: claim 0: flags 128 are not a known combination"],
    ["a provider hash both sent and rebuilt (bits 3 and 5)", item(1, `${provenHead} 01 28`), "compact batch item 0, byte 30: claim 0: flags 40 are not a known combination"],
    ["the first claim naming the previous claim's URL", item(1, `${provenHead} 01 02 00 00000000 01 ${SIGNATURE}`), "compact batch item 0, byte 30: claim 0: the first claim has no previous URL"],
    ["a URL path that is not UTF-8", item(1, `${provenHead} 01 00 02 ffff 00 00000000 01 ${SIGNATURE}`), "compact batch item 0, byte 31: claim 0: the URL path is not UTF-8"],
    ["a claim's signer outside the address table", item(1, `${provenHead} 01 00 02 2f62 05 00000000 01 ${SIGNATURE}`), "compact batch item 0, byte 34: address index 5 of claim 0 is out of range (1 addresses)"],
    ["the first claim reusing a provider hash it has no predecessor for (bits 3 and 4)", item(1, `${provenHead} 01 18 02 2f62 00 00000000 01 ${SIGNATURE}`), "compact batch item 0, byte 30: claim 0: the previous claim has no provider hash"],
    // A body of 146 bytes: its length takes two bytes, so this one's body starts at 27; claim 1 at 105, its time at 107.
    ["a later claim's time before 0 (zigzag -1 from 0)", item(1, `${provenHead} 02 ${claimZero} ${SIGNATURE} 02 00 01 01 ${SIGNATURE}`), "compact batch item 0, byte 107: claim 1: a time outside 0 to 2^32 - 1"],
    ["a signature cut short", item(1, `${provenHead} 01 ${claimZero} ${"ab".repeat(10)}`), "compact batch item 0, byte 40: the signature of claim 0 needs 64 bytes, 10 remain"],
  ])("%s", async (_name, bad, message) => {
    const error = { code: "INVALID_PARAMS", message };
    // Alone in its batch: no item applied, so the input is rejected with the item's report and writes nothing.
    const before = stateDigest(h);
    expect(await send(batchOf(bad))).toEqual({ status: "reject", reports: [{ item: 0, error }], notices: [], digest: before });
    // Before a good item (same offsets: it is item 0 either way): only it fails, the good one applies.
    const mixed = await send(batchOf(bad, GOOD));
    const index = (await h.read<{ processed_inputs: number }>("health")).processed_inputs - 1;
    expect([mixed.status, mixed.reports]).toEqual(["accept", [{ item: 0, error }]]);
    expect(mixed.notices).toEqual([{ event: "attestation:created", data: expect.objectContaining({ claimId: itemIdOf("create_attestation", index, 1) }) }]);
    expect(mixed.digest).not.toBe(before);
  });
});

describe("after every rejection", () => {
  it("the dapp applies the next input as before", async () => {
    const before = stateDigest(h);
    const out = await send(batchOf(GOOD));
    expect([out.status, out.reports, out.notices.length]).toEqual(["accept", [], 1]);
    expect(out.digest).not.toBe(before);
    expect(await h.read<{ processed_inputs: number }>("health")).toMatchObject({ processed_inputs: expect.any(Number) });
  });
});
