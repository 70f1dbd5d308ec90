import { encodeAbiParameters, keccak256, stringToBytes } from "viem";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.ts";
import { inputIdOf, itemIdOf, keyIdOf, schemaIdOf, writeIdOf, type SchemaContent } from "./ids.ts";

const content: SchemaContent = {
  provider: "http",
  flowType: "web",
  domain: "example.com",
  bucketDefinitions: {
    balance: { boundaries: [0, 100], labels: ["low"] },
    age: { boundaries: [0, 18, 65], labels: ["minor", "adult", "senior"] },
  },
  dataKeys: ["balance", "age"],
  freshnessHalfLife: 3600,
};

describe("schemaIdOf", () => {
  it("hashes the canonical JSON of the registration content", () => {
    const text =
      '{"bucketDefinitions":{"age":{"boundaries":[0,18,65],"labels":["minor","adult","senior"]},"balance":{"boundaries":[0,100],"labels":["low"]}},' +
      '"dataKeys":["balance","age"],"domain":"example.com","flowType":"web","freshnessHalfLife":3600,"provider":"http"}';
    expect(canonicalJson(content)).toBe(text);
    expect(schemaIdOf(content)).toBe(keccak256(stringToBytes(text)));
  });

  it("does not depend on key order, at any depth", () => {
    const reordered: SchemaContent = {
      freshnessHalfLife: 3600,
      dataKeys: ["balance", "age"],
      bucketDefinitions: {
        age: { labels: ["minor", "adult", "senior"], boundaries: [0, 18, 65] },
        balance: { labels: ["low"], boundaries: [0, 100] },
      },
      domain: "example.com",
      flowType: "web",
      provider: "http",
    };
    expect(schemaIdOf(reordered)).toBe(schemaIdOf(content));
  });

  it("ignores fields outside the content (name, description)", () => {
    const withExtras = { ...content, name: "x", description: "y" };
    expect(schemaIdOf(withExtras)).toBe(schemaIdOf(content));
  });

  it.each<[string, Partial<SchemaContent>]>([
    ["provider", { provider: "https" }],
    ["flowType", { flowType: "api" }],
    ["domain", { domain: "example.org" }],
    ["dataKeys order", { dataKeys: ["age", "balance"] }],
    ["freshnessHalfLife", { freshnessHalfLife: 3601 }],
    ["a boundary", { bucketDefinitions: { balance: { boundaries: [0, 101], labels: ["low"] } } }],
  ])("changes when %s changes", (_name, change) => {
    expect(schemaIdOf({ ...content, ...change })).not.toBe(schemaIdOf(content));
  });
});

describe("keyIdOf", () => {
  it("is keccak256 of the key bytes", () => {
    const key = new Uint8Array(32).fill(7);
    expect(keyIdOf(key)).toBe(keccak256(key));
  });
});

describe("inputIdOf", () => {
  it.each([
    ["create_attestation", 0],
    ["create_attestation", 41],
    ["grant_access", 41],
  ] as const)("%s at %i is keccak256(abi.encode(kind, index))", (kind, index) => {
    const expected = keccak256(encodeAbiParameters([{ type: "string" }, { type: "uint256" }], [kind, BigInt(index)]));
    expect(inputIdOf(kind, index)).toBe(expected);
    expect(inputIdOf(kind, BigInt(index))).toBe(expected);
  });

  it("differs between kinds and between positions", () => {
    expect(inputIdOf("create_attestation", 1)).not.toBe(inputIdOf("grant_access", 1));
    expect(inputIdOf("create_attestation", 1)).not.toBe(inputIdOf("create_attestation", 2));
  });
});

describe("itemIdOf", () => {
  it("is keccak256(abi.encode(kind, input_index, item)) and never a lone input's id", () => {
    const expected = keccak256(
      encodeAbiParameters([{ type: "string" }, { type: "uint256" }, { type: "uint256" }], ["grant_access", 7n, 3n]),
    );
    expect(itemIdOf("grant_access", 7, 3)).toBe(expected);
    expect(itemIdOf("create_attestation", 7, 0)).not.toBe(inputIdOf("create_attestation", 7));
    expect(itemIdOf("create_attestation", 7, 0)).not.toBe(itemIdOf("create_attestation", 7, 1));
  });

  it("writeIdOf picks the formula by whether the write was a batch item", () => {
    expect(writeIdOf("create_attestation", 9, null)).toBe(inputIdOf("create_attestation", 9));
    expect(writeIdOf("create_attestation", 9, 2)).toBe(itemIdOf("create_attestation", 9, 2));
  });
});
