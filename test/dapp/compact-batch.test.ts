/**
 * The compact batch (issue 37, common/compact-batch.ts) on the real dapp: recognised by its first byte, it
 * makes exactly the writes, verdicts, reports, notices and ids of the JSON `batch` of the same items (two
 * dapps with the same history, one sent each); plain and proven attestations compact, other kinds as JSON
 * items; schemas found by their short index. Bad input: an unknown version, a truncated item, a wrong item
 * count or trailing bytes reject the whole input, naming the byte; a schema index never assigned, an
 * address or bucket index out of range or an unknown item kind reject the item alone, naming it and the
 * byte; nothing of a rejected input is written.
 */
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical.ts";
import { compactBytes, compactSchemaOf, encodeCompactBatch, type CompactSchema, type CompactWrite } from "../../common/compact-batch.ts";
import { bytesToHex, hexToBytes, jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { itemIdOf, schemaIdOf } from "../../common/ids.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type TlsProof } from "../../common/tls-claim.ts";
import type { SchemaDetail } from "../../common/wire.ts";
import { PUBLIC_KEY, SCHEMA, SCHEMA_2 } from "./fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, startHarness, stateDigest, T0, type Harness } from "./harness.ts";

const attestorKey = privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123");
const secondKey = privateKeyToAccount("0x2222222222222222222222222222222222222222222222222222222222222222");
const DEFINITION = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const PROVEN = { provider: "http", flowType: "proven", domain: "bank.example", bucketDefinitions: { "data.balance": DEFINITION }, dataKeys: ["data.currency"], freshnessHalfLife: 3600, proof: "attestor" as const, attestorQuorum: 2 };
const s1 = schemaIdOf(SCHEMA);
const s2 = schemaIdOf(SCHEMA_2);
const sProven = schemaIdOf(PROVEN);
const AT = T0 + 100;

const SETUP: [string, unknown][] = [
  ["register_schema", SCHEMA],
  ["register_schema", SCHEMA_2],
  ["register_schema", PROVEN],
  ["register_encryption_key", { publicKey: PUBLIC_KEY, algorithm: "nacl-box" }],
  ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
  ["set_tls_attestor", { address: attestorKey.address, enabled: true, name: "one" }],
  ["set_tls_attestor", { address: secondKey.address, enabled: true, name: "two" }],
];

let twins: Harness[] = [];
afterEach(async () => {
  for (const h of twins) await h.close();
  twins = [];
});

/** A dapp with the setup applied (indexes and times as in every other: the harness's clock is per input). */
async function ready(): Promise<Harness> {
  const h = await startHarness();
  for (const [type, params] of SETUP) {
    const out = await h.input(type, params);
    if (out.status !== "accept") throw new Error(`setup ${type} rejected`);
  }
  twins.push(h);
  return h;
}

async function schemaOf(h: Harness, schemaId: Hex): Promise<CompactSchema> {
  const s = await h.read<SchemaDetail>("provider_schema", { schema_id: schemaId, include_index: true });
  return compactSchemaOf(s.schema_index as number, s.schema_id, s.provider_type, s.domain, s.bucket_definitions);
}

const attestation = (owner: Address, schemaId: Hex, bucketValues: Record<string, string>, data = "0xc0ffee") => ({
  type: "create_attestation" as const,
  params: { schema_id: schemaId, owner, provider: "http", encrypted_data: data as Hex, bucket_values: bucketValues },
});

async function signedClaim(signer: typeof attestorKey, nonce: Hex): Promise<TlsProof> {
  const range = binRange(DEFINITION, "mid");
  if (range === undefined) throw new Error("no bin");
  const parameters = canonicalJson(claimParameters({ url: "https://bank.example/api/balance?account=1", method: "GET", field: "data.balance", range }));
  const context = canonicalJson({ ...claimContext(ALICE, sProven, nonce), providerHash: `0x${"5a".repeat(32)}` });
  const base = { provider: "http", parameters, owner: "0x2e53b0b53d54995108412e305a38080fa2bfd468" as Address, timestampS: AT - 50, context };
  const identifier = claimIdentifier(base);
  const claim = { ...base, identifier, epoch: 1 };
  return { claim, signature: await signer.signMessage({ message: claimSignText(claim, identifier) }) };
}

interface Sent {
  status: string;
  notices: unknown[];
  reports: unknown[];
  digest: string;
}

async function sendTo(h: Harness, payload: Hex, sender: Address): Promise<Sent> {
  const out = await h.raw(payload, { sender, timestamp: AT });
  return { status: out.status, notices: out.notices.map(decode), reports: out.reports.map(decode), digest: stateDigest(h) };
}

/** The same items to two dapps with the same history: as a JSON batch to one, compact to the other. */
async function both(writes: (h: Harness) => Promise<CompactWrite[]>, sender: Address = ATTESTOR) {
  const [json, compact] = [await ready(), await ready()];
  const items = await writes(compact);
  const encoded = encodeCompactBatch(items);
  return {
    encoded,
    json: await sendTo(json, jsonToHex({ type: "batch", params: { items: items.map((w) => w.item) } }), sender),
    compact: await sendTo(compact, encoded.payload, sender),
    compactDapp: compact,
  };
}

describe("a compact batch against the JSON batch of the same items", () => {
  it("makes the same writes, verdicts, reports, notices and ids; attestations compact, other kinds as JSON items", async () => {
    const { encoded, json, compact, compactDapp } = await both(async (h) => {
      const [one, two] = [await schemaOf(h, s1), await schemaOf(h, s2)];
      return [
        { item: attestation(ALICE, s1, { balance: "low" }), schema: one },
        { item: attestation(BOB, s2, { age: "adult", score: "good" }), schema: two },
        // A label of no bucket: the dapp's own rejection, carried as a JSON item (compact cannot say it).
        { item: attestation(ALICE, s1, { balance: "high" }), schema: one },
        { item: { type: "grant_access", params: { requester: BOB, schema_id: s1, expires_at: 2e9, owner: ALICE } } },
        { item: attestation(ALICE, s2, { score: "poor" }, "0x"), schema: two },
        { item: attestation(BOB, s1, {}), schema: one },
      ];
    });
    expect(encoded.compactItems).toBe(4);
    expect(compact).toEqual(json);
    expect(compact.status).toBe("accept");
    // The operator role is needed for a relayed grant; an empty sealed text is refused as in JSON.
    expect((compact.reports as { item: number }[]).map((r) => r.item)).toEqual([2, 3, 4]);
    const ids = (compact.notices as { data: { claimId: Hex } }[]).map((n) => n.data.claimId);
    const index = (await compactDapp.read<{ processed_inputs: number }>("health")).processed_inputs - 1;
    expect(ids).toEqual([0, 1, 5].map((i) => itemIdOf("create_attestation", index, i)));
    expect(await compactDapp.read("attestation", { attestation_id: ids[1] })).toMatchObject({ item_index: 1, bucket_values: { age: "adult", score: "good" }, encrypted_data: "0xc0ffee" });
  });

  it("proven attestations: two attestors' claims, the rollup rebuilding their parameters, context, identifier and v", async () => {
    let proven: CompactSchema | undefined;
    const { encoded, json, compact } = await both(async (h) => {
      const schema = await schemaOf(h, sProven);
      proven = schema;
      const proofs = [await signedClaim(attestorKey, "0x01"), await signedClaim(secondKey, "0x02")];
      return [
        { item: { ...attestation(ALICE, sProven, { "data.balance": "mid" }), params: { ...attestation(ALICE, sProven, { "data.balance": "mid" }).params, proofs } }, schema },
        // The same claims again: refused as a replay, the same way.
        { item: { ...attestation(ALICE, sProven, { "data.balance": "mid" }), params: { ...attestation(ALICE, sProven, { "data.balance": "mid" }).params, proofs } }, schema },
      ];
    });
    expect(encoded.compactItems).toBe(2);
    expect(compact).toEqual(json);
    expect(json.status).toBe("accept");
    expect((json.notices[0] as { data: { attestors: Address[] } }).data.attestors).toEqual([attestorKey.address.toLowerCase(), secondKey.address.toLowerCase()]);
    expect(json.reports).toEqual([{ item: 1, error: { code: "DUPLICATE", message: expect.stringMatching(/^proof: this claim was already used by attestation 0x/) } }]);
    // Per item: the count, then per claim flags, URL path (22 bytes and its length), signer, time, epoch,
    // nonce, provider hash (not attestor-core's here: sent), signature; the second claim reuses the
    // first's URL and provider hash, and its time is a difference (0: one byte).
    expect(compactBytes(encoded.payload, () => proven).claims).toBe(2 * (1 + (1 + 23 + 1 + 4 + 1 + 2 + 33 + 64) + (1 + 1 + 1 + 1 + 2 + 64)));
  });

  it("reads the same from another sender's point of view: a stranger's compact batch is judged item by item", async () => {
    const { json, compact } = await both(async (h) => [{ item: attestation(ALICE, s1, { balance: "low" }), schema: await schemaOf(h, s1) }], BOB);
    expect(compact).toEqual(json);
    expect(compact.status).toBe("reject");
  });
});

describe("the short index", () => {
  it("is provider_schema's schema_index on request, and finds the schema", async () => {
    const h = await ready();
    const byId = await h.read<SchemaDetail>("provider_schema", { schema_id: s2, include_index: true });
    expect(byId.schema_index).toBe(2);
    expect(await h.read("provider_schema", { schema_index: 2 })).toEqual(await h.read("provider_schema", { schema_id: s2 }));
    expect(await h.read("all_provider_schemas", { include_index: true })).toMatchObject([{ schema_id: s1, schema_index: 1 }, { schema_id: s2, schema_index: 2 }, { schema_id: sProven, schema_index: 3 }]);
    expect((await h.query("provider_schema", { schema_index: 9 })).exception).toBe(utf8ToHex("schema not found: index 9"));
  });
});

/** A payload with byte `at` replaced, removed, or bytes appended. */
const patched = (payload: Hex, edit: (bytes: number[]) => void): Hex => {
  const bytes = [...hexToBytes(payload)];
  edit(bytes);
  return bytesToHex(Uint8Array.from(bytes));
};

describe("bad input", () => {
  async function twoItems(h: Harness): Promise<Hex> {
    const one = await schemaOf(h, s1);
    return encodeCompactBatch([
      { item: attestation(ALICE, s1, { balance: "low" }), schema: one },
      { item: attestation(BOB, s1, { balance: "mid" }), schema: one },
    ]).payload;
  }
  // c1 01 | 02, two addresses at 3..42 | 02 items (byte 43) | item 0 at 44: kind 00, length 06, body 46..51
  // (schema index, owner, bucket, c0 ff ee) | item 1 at 52: kind, length, body 54..59. 60 bytes.
  const ITEM_1 = 52;

  it.each([
    ["an unknown version", (p: Hex) => patched(p, (b) => (b[1] = 2)), "compact batch, byte 1: unknown version 2 (this dapp reads version 1)"],
    ["a truncated item", (p: Hex) => patched(p, (b) => b.splice(-3)), `compact batch, byte 54: item 1 (at byte ${ITEM_1}) is truncated: the item's body needs 6 bytes, 3 remain`],
    ["trailing bytes", (p: Hex) => patched(p, (b) => b.push(0, 0)), "compact batch, byte 60: 2 trailing bytes after the last item"],
    ["no items", (p: Hex) => patched(p, (b) => b.splice(43, b.length, 0)), "compact batch, byte 43: a batch holds 1 to 256 items, not 0"],
    ["an address table that ends early", (p: Hex) => patched(p, (b) => (b[2] = 9)), "compact batch, byte 43: address 2 needs 20 bytes, 17 remain"],
    ["a marker alone", () => "0xc1" as Hex, "compact batch, byte 1: the input ends before the version"],
  ])("%s rejects the whole input, naming the byte, and writes nothing", async (_name, edit, message) => {
    const h = await ready();
    const before = stateDigest(h);
    const out = await sendTo(h, edit(await twoItems(h)), ATTESTOR);
    expect(out).toEqual({ status: "reject", notices: [], reports: [{ error: { code: "INVALID_PAYLOAD", message } }], digest: before });
  });

  it.each([
    ["a schema index never assigned", (b: number[]) => (b[ITEM_1 + 2] = 9), "SCHEMA_NOT_FOUND", `compact batch item 1, byte ${ITEM_1 + 2}: schema index 9 was never assigned`],
    ["an owner index out of range", (b: number[]) => (b[ITEM_1 + 3] = 5), "INVALID_PARAMS", `compact batch item 1, byte ${ITEM_1 + 3}: address index 5 of the owner is out of range (2 addresses)`],
    ["a bucket index out of range", (b: number[]) => (b[ITEM_1 + 4] = 3), "INVALID_PARAMS", `compact batch item 1, byte ${ITEM_1 + 4}: bucket index 3 of field balance is out of range (2 labels)`],
    ["an unknown item kind", (b: number[]) => (b[ITEM_1] = 7), "UNKNOWN_KIND", `compact batch item 1, byte ${ITEM_1}: unknown item kind 7`],
    ["a plain item read as proven", (b: number[]) => (b[ITEM_1] = 1), "INVALID_PARAMS", `compact batch item 1, byte ${ITEM_1 + 5}: 192 claims (1 to 16)`],
  ])("%s rejects that item alone, naming it and the byte", async (_name, edit, code, message) => {
    const h = await ready();
    const out = await sendTo(h, patched(await twoItems(h), edit), ATTESTOR);
    expect([out.status, out.reports]).toEqual(["accept", [{ item: 1, error: { code, message } }]]);
    expect(out.notices).toHaveLength(1);
  });

  it("a batch whose every item fails is rejected with each item's report, and writes nothing", async () => {
    const h = await ready();
    const before = stateDigest(h);
    const out = await sendTo(h, patched(await twoItems(h), (b) => {
      b[46] = 9;
      b[ITEM_1 + 2] = 9;
    }), ATTESTOR);
    expect(out).toEqual({
      status: "reject",
      notices: [],
      reports: [0, 1].map((item) => ({ item, error: { code: "SCHEMA_NOT_FOUND", message: `compact batch item ${item}, byte ${item === 0 ? 46 : ITEM_1 + 2}: schema index 9 was never assigned` } })),
      digest: before,
    });
  });

  it("a payload that only starts like one is still judged as JSON when its first byte is not 0xc1", async () => {
    const h = await ready();
    const out = await sendTo(h, "0xc2", ADMIN);
    expect(out.reports).toEqual([{ error: { code: "INVALID_PAYLOAD", message: "payload is not valid UTF-8" } }]);
  });
});
