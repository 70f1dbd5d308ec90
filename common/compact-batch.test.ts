/**
 * The compact batch's codec (common/compact-batch.ts, common/compact-item.ts, common/compact-bytes.ts):
 * the layout pinned byte by byte as docs/dapp.md gives it, round trips, what the encoder leaves to JSON
 * items (anything its layout cannot say exactly), and varints.
 */
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.ts";
import { ByteProblem, ByteReader, ByteWriter } from "./compact-bytes.ts";
import { compactBytes, compactItemToJson, compactSchemaOf, encodeCompactBatch, parseCompactBatch, type CompactWrite } from "./compact-batch.ts";
import { hexToBytes } from "./hex.ts";
import { binRange } from "./range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type TlsProof } from "./tls-claim.ts";

const SCHEMA_ID = `0x${"5e".repeat(32)}` as Hex;
const DEFINITION = { boundaries: [0, 100, 1000], labels: ["low", "mid"] };
const schema = compactSchemaOf(7, SCHEMA_ID, "http", "bank.example", { score: { boundaries: [0, 1], labels: ["x"] }, balance: DEFINITION });
const OWNER = "0x90f79bf6eb2c4f970365e785982e1f101e93b906" as Address;
const OTHER = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65" as Address;
const attestation = (owner: Address, bucket: Record<string, string>, data: Hex = "0xaabb", extra: Record<string, unknown> = {}) => ({
  type: "create_attestation",
  params: { schema_id: SCHEMA_ID, owner, provider: "http", encrypted_data: data, bucket_values: bucket, ...extra },
});

describe("the layout, byte by byte", () => {
  it("header, address table, items: an attestation, and a grant as a JSON item", () => {
    const grant = { type: "revoke_grant", params: { grant_id: SCHEMA_ID } };
    const { payload, compactItems } = encodeCompactBatch([{ item: attestation(OWNER, { balance: "mid" }), schema }, { item: grant }, { item: attestation(OWNER, { balance: "low", score: "x" }), schema }]);
    const json = Buffer.from(JSON.stringify(grant)).toString("hex");
    expect(payload).toBe(
      `0x${[
        "c1", // marker: no UTF-8 text starts with 0xc1
        "01", // version
        "01", // one address
        OWNER.slice(2),
        "03", // three items
        "00", "06", "07", "00", "02", "00", "aabb", // attestation: schema index 7, owner 0, balance "mid" (2), score unset (0), sealed data
        "02", (json.length / 2).toString(16), json, // a JSON item: its text
        "00", "06", "07", "00", "01", "01", "aabb", // fields in code-unit order: balance "low" (1), score "x" (1)
      ].join("")}`,
    );
    expect(compactItems).toBe(2);
    expect(compactBytes(payload, () => schema)).toEqual({ header: 4, addresses: 20, itemHeads: 6, json: json.length / 2, schemaIndex: 2, owner: 2, bucket: 4, claims: 0, sealedData: 4 });
  });

  it("reads back to the very items, in order", () => {
    const writes: CompactWrite[] = [
      { item: attestation(OWNER, { balance: "mid" }), schema },
      { item: { type: "set_role", params: { address: OTHER, role: "attestor", enabled: true } } },
      { item: attestation(OTHER, {}, "0x"), schema },
      { item: attestation(OWNER, { balance: "low", score: "x" }, `0x${"ff".repeat(300)}`), schema },
    ];
    const container = parseCompactBatch(hexToBytes(encodeCompactBatch(writes).payload));
    expect(container.addresses).toEqual([OWNER, OTHER]);
    // Bucket fields come back in the schema's order (as the notice will carry them).
    const expected = writes.map((w, i) => (i === 3 ? attestation(OWNER, { balance: "low", score: "x" }, `0x${"ff".repeat(300)}`) : w.item));
    expect(writes.map((_, i) => compactItemToJson(container, i, (index) => (index === 7 ? schema : undefined)))).toEqual(expected);
  });
});

const signer = privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123");

async function proof(o: { url?: string; nonce?: string; context?: (c: Record<string, unknown>) => Record<string, unknown>; v?: number; at?: number; hashOfParameters?: true } = {}): Promise<TlsProof> {
  const range = binRange(DEFINITION, "mid");
  if (range === undefined) throw new Error("no bin");
  const parameters = canonicalJson(claimParameters({ url: o.url ?? "https://bank.example/b", method: "POST", field: "balance", range }));
  // attestor-core's provider hash is keccak256 of the parameters; the fixtures' is another, which must travel.
  const providerHash = o.hashOfParameters === true ? keccak256(stringToBytes(parameters)) : `0x${"12".repeat(32)}`;
  const built = { ...claimContext(OWNER, SCHEMA_ID, (o.nonce ?? "0x0a0b") as Hex), providerHash };
  const context = canonicalJson(o.context === undefined ? built : o.context(built));
  const base = { provider: "http", parameters, owner: OTHER, timestampS: o.at ?? 1_700_000_000, context };
  const identifier = claimIdentifier(base);
  const claim = { ...base, identifier, epoch: 2 };
  let signature = await signer.signMessage({ message: claimSignText(claim, identifier) });
  if (o.v !== undefined) signature = `${signature.slice(0, -2)}${o.v.toString(16).padStart(2, "0")}` as Hex;
  return { claim, signature };
}

describe("proven items", () => {
  it("carry what the rollup cannot rebuild, and read back to the same claims", async () => {
    const proofs = [await proof(), await proof({ nonce: "0x0c" })];
    const item = attestation(OWNER, { balance: "mid" }, "0xaabb", { proofs });
    const { payload, compactItems } = encodeCompactBatch([{ item, schema }]);
    expect(compactItems).toBe(1);
    const container = parseCompactBatch(hexToBytes(payload));
    expect(container.items[0]?.kind).toBe(1);
    expect(compactItemToJson(container, 0, () => schema)).toEqual(item);
  });

  it("rebuild attestor-core's provider hash and a range statement in the context; a later claim's time is a difference", async () => {
    const range = binRange(DEFINITION, "mid");
    const withStatement = (c: Record<string, unknown>) => ({ ...c, statement: { field: "balance", range } });
    const rebuilt = [await proof({ hashOfParameters: true, context: withStatement }), await proof({ hashOfParameters: true, context: withStatement, nonce: "0x0c", at: 1_699_999_990 })];
    const item = attestation(OWNER, { balance: "mid" }, "0xaabb", { proofs: rebuilt });
    const encoded = encodeCompactBatch([{ item, schema }]);
    expect(compactItemToJson(parseCompactBatch(hexToBytes(encoded.payload)), 0, () => schema)).toEqual(item);
    // count | flags, URL "/b", signer, time u32, epoch, nonce, signature | flags, signer, time -10 (zigzag 19), epoch, nonce, signature
    expect(compactBytes(encoded.payload, () => schema).claims).toBe(1 + (1 + 3 + 1 + 4 + 1 + 3 + 64) + (1 + 1 + 1 + 1 + 2 + 64));
    // A statement about another range is not the rollup's to rebuild: the item goes as JSON.
    const other = await proof({ context: (c) => ({ ...c, statement: { field: "balance", range: binRange(DEFINITION, "low") } }) });
    expect(encodeCompactBatch([{ item: attestation(OWNER, { balance: "mid" }, "0xaabb", { proofs: [other] }), schema }]).compactItems).toBe(0);
  });

  it.each([
    ["a URL on another host", { url: "https://other.example/b" }],
    ["a nonce in upper case (the identifier would change)", { nonce: "0x0A0B" }],
    ["a context with more than the rollup rebuilds", { context: (c: Record<string, unknown>) => ({ ...c, extractedParameters: { value: "5" } }) }],
    ["a signature whose v is 0 (not 27 or 28)", { v: 0 }],
  ])("travel as JSON items where the layout cannot say them: %s", async (_name, o) => {
    const item = attestation(OWNER, { balance: "mid" }, "0xaabb", { proofs: [await proof(o)] });
    const { payload, compactItems } = encodeCompactBatch([{ item, schema }]);
    expect(compactItems).toBe(0);
    expect(compactItemToJson(parseCompactBatch(hexToBytes(payload)), 0, () => schema)).toEqual(item);
  });
});

describe("what the encoder leaves to JSON items", () => {
  it.each([
    ["another provider", attestation(OWNER, { balance: "mid" }, "0xaabb", { provider: "ftp" })],
    ["a label the field does not have", attestation(OWNER, { balance: "high" })],
    ["a field the schema does not have", attestation(OWNER, { age: "x" })],
    ["bucket fields in another order than the schema's (the notice keeps the order)", attestation(OWNER, { score: "x", balance: "low" })],
    ["sealed data that is not hex", attestation(OWNER, { balance: "mid" }, "0xabc" as Hex)],
    ["an owner that is no address", attestation("0x12" as Address, { balance: "mid" })],
    ["another schema", { ...attestation(OWNER, { balance: "mid" }), params: { ...attestation(OWNER, { balance: "mid" }).params, schema_id: `0x${"00".repeat(32)}` } }],
    ["no params at all", { type: "create_attestation" }],
  ])("%s", (_name, item) => {
    const { payload, compactItems } = encodeCompactBatch([{ item: item as CompactWrite["item"], schema }]);
    expect(compactItems).toBe(0);
    const container = parseCompactBatch(hexToBytes(payload));
    // No address is left in the table by an item that did not travel compact.
    expect(container.addresses).toEqual([]);
    expect(compactItemToJson(container, 0, () => schema)).toEqual(item);
  });
});

describe("varints", () => {
  it.each([
    [0, "00"],
    [127, "7f"],
    [128, "8001"],
    [300, "ac02"],
    [0xffffffff, "ffffffff0f"],
  ])("%i is %s and reads back", (value, hex) => {
    const bytes = new ByteWriter().varint(value).toBytes();
    expect(Buffer.from(bytes).toString("hex")).toBe(hex);
    expect(new ByteReader(bytes).varint("v")).toBe(value);
  });

  it.each([
    ["8000", "byte 0: v is not a minimal varint"],
    ["ffffffff1f", "byte 0: v is above 4294967295"],
    ["ffffffffff01", "byte 0: v is a varint longer than 5 bytes"],
    ["80", "byte 1: the input ends before v"],
  ])("%s is refused: %s", (hex, message) => {
    const read = () => new ByteReader(Uint8Array.from(Buffer.from(hex, "hex"))).varint("v");
    expect(read).toThrow(ByteProblem);
    expect(read).toThrow(message);
  });
});
