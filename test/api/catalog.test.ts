import nacl from "tweetnacl";
import { describe, expect, it } from "vitest";
import { RegistryCatalog } from "../../api/rollup/catalog.ts";
import { jsonToHex } from "../../common/hex.ts";
import { keyIdOf, schemaIdOf, type SchemaContent } from "../../common/ids.ts";

const content: SchemaContent = {
  provider: "http",
  flowType: "balance",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": { boundaries: [0, 10], labels: ["low"] } },
  dataKeys: [],
  freshnessHalfLife: 60,
};
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

describe("RegistryCatalog", () => {
  it("learns a schema from the input behind its notice, and finds it by provider and host", () => {
    const catalog = new RegistryCatalog();
    const schemaId = schemaIdOf(content);
    catalog.learnFromNotice({ event: "schema:registered", data: { schema_id: schemaId } }, 3, jsonToHex({ type: "register_schema", params: { ...content, name: "Bank" } }));
    expect(catalog.schemaContent(schemaId)).toEqual(content);
    expect(catalog.schemasFor("http", "BANK.example")).toEqual([{ schemaId, content }]);
    expect(catalog.schemasFor("http", "other.example")).toEqual([]);
  });

  it("ignores an input payload that does not hash to the id the dapp announced", () => {
    const catalog = new RegistryCatalog();
    const forged = { ...content, domain: "evil.example" };
    catalog.learnFromNotice({ event: "schema:registered", data: { schema_id: schemaIdOf(content) } }, 1, jsonToHex({ type: "register_schema", params: forged }));
    expect(catalog.schemasFor("http", "evil.example")).toEqual([]);
    const key = nacl.box.keyPair().publicKey;
    const other = nacl.box.keyPair().publicKey;
    catalog.learnFromNotice({ event: "key:registered", data: { keyId: keyIdOf(key) } }, 2, jsonToHex({ type: "register_encryption_key", params: { publicKey: base64(other), algorithm: "nacl-box" } }));
    expect(catalog.latestKey).toBeUndefined();
    catalog.learnFromNotice({ event: "key:registered", data: { keyId: keyIdOf(key) } }, 2, "0xzz");
    expect(catalog.latestKey).toBeUndefined();
  });

  it("keeps the key of the latest input, whatever order it learns them in", () => {
    const catalog = new RegistryCatalog();
    const older = nacl.box.keyPair().publicKey;
    const newer = nacl.box.keyPair().publicKey;
    const notice = (key: Uint8Array, index: number) =>
      catalog.learnFromNotice({ event: "key:registered", data: { keyId: keyIdOf(key) } }, index, jsonToHex({ type: "register_encryption_key", params: { publicKey: base64(key), algorithm: "nacl-box" } }));
    notice(newer, 9);
    notice(older, 4);
    expect(catalog.latestKey).toEqual({ keyId: keyIdOf(newer), publicKey: base64(newer), inputIndex: 9 });
  });

  it("finds the registrations inside a batch input by the ids its notices announce", () => {
    const catalog = new RegistryCatalog();
    const other = { ...content, domain: "other.example" };
    const first = nacl.box.keyPair().publicKey;
    const second = nacl.box.keyPair().publicKey;
    const keyItem = (key: Uint8Array) => ({ type: "register_encryption_key", params: { publicKey: base64(key), algorithm: "nacl-box" } });
    const payload = jsonToHex({
      type: "batch",
      params: { items: [{ type: "register_schema", params: content }, keyItem(first), { type: "register_schema", params: other }, keyItem(second)] },
    });
    catalog.learnFromNotice({ event: "schema:registered", data: { schema_id: schemaIdOf(other) } }, 5, payload);
    catalog.learnFromNotice({ event: "key:registered", data: { keyId: keyIdOf(first) } }, 5, payload);
    catalog.learnFromNotice({ event: "key:registered", data: { keyId: keyIdOf(second) } }, 5, payload);
    // Only the schema a notice announced is learned; of two keys in one input the later item's wins.
    expect(catalog.schemasFor("http", "other.example")).toEqual([{ schemaId: schemaIdOf(other), content: other }]);
    expect(catalog.schemasFor("http", "bank.example")).toEqual([]);
    expect(catalog.latestKey).toEqual({ keyId: keyIdOf(second), publicKey: base64(second), inputIndex: 5 });
  });

  it("counts attestations per schema, field and label from their notices", () => {
    const catalog = new RegistryCatalog();
    const schemaId = schemaIdOf(content);
    const created = (label: string) =>
      catalog.learnFromNotice(
        { event: "attestation:created", data: { claimId: `0x${"1".repeat(64)}`, owner: `0x${"2".repeat(40)}`, provider: "http", schema_id: schemaId, bucket_values: { "data.balance": label }, attester: `0x${"3".repeat(40)}`, timestamp: 1, expires_at: null, freshness_half_life: 60 } },
        4,
        "0x",
      );
    created("low");
    created("low");
    created("high");
    expect(catalog.bucketCounts(schemaId.toUpperCase().replace("0X", "0x"))).toEqual({ "data.balance": { low: 2, high: 1 } });
    expect(catalog.bucketCounts(`0x${"9".repeat(64)}`)).toEqual({});
  });
});
