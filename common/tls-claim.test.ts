/**
 * The attestor's claim format (common/tls-claim.ts): checked against a claim the real attestor-core server
 * signed (captured from a run of attestor/server.ts against a local provider on 24 November 2026), and the
 * extraction patterns table-driven over bodies that try to mislead them. The attestor runs them with RE2;
 * these patterns use nothing RE2 and JavaScript read differently.
 */
import { hashMessage, recoverAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.ts";
import { claimIdentifier, claimParameters, claimSignText, jsonPathOf, proofFieldProblem, valuePattern, VALUE_GROUP } from "./tls-claim.ts";

const REAL_CLAIM = {
  provider: "http",
  parameters:
    '{"method":"GET","responseMatches":[{"type":"regex","value":"\\"data\\"\\\\s*:\\\\s*\\\\{[^{}]*?\\"balance\\"\\\\s*:\\\\s*\\"?(?<value>-?[0-9]+(?:\\\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\\"?"}],"url":"https://localhost:18443/balance.json"}',
  owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  timestampS: 1795529282,
  context:
    '{"contextAddress":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","contextMessage":"0xabc","extractedParameters":{"value":"512.5"},"providerHash":"0x37b390b5ea3d4b9e597eed8ba579c31ffb3c02545311ad33ffedf723589bd67b"}',
  identifier: "0x19532b8e32a1ff26ce03d9555fd64e09e2c7f9c07b77a259a386278cc493b42f",
  epoch: 1,
};
const REAL_SIGNATURE: Hex =
  "0x1cb9c1d4134658533f22d8246a6db38d5814ab4df14ef39bce0b5962413a85cd75bb1e3238b8577530b030a9227f10d66d6c872a149317cece9bdb45c71f13301c";
const REAL_ATTESTOR = "0x14791697260e4c9a71f18484c9f997b308e59325";

describe("a claim signed by the real attestor", () => {
  it("has the identifier we compute and a signature that recovers to the attestor", async () => {
    const identifier = claimIdentifier(REAL_CLAIM);
    expect(identifier).toBe(REAL_CLAIM.identifier);
    const signer = await recoverAddress({ hash: hashMessage(claimSignText(REAL_CLAIM, identifier)), signature: REAL_SIGNATURE });
    expect(signer.toLowerCase()).toBe(REAL_ATTESTOR);
  });

  it("names exactly the parameters we build for the field (the dapp compares them)", () => {
    const expected = claimParameters({ url: "https://localhost:18443/balance.json", method: "GET", field: "data.balance", mode: "reveal" });
    expect(canonicalJson(expected)).toBe(REAL_CLAIM.parameters);
  });

  it("the identifier does not depend on how the context's keys were ordered", () => {
    const reordered = { ...REAL_CLAIM, context: JSON.stringify({ providerHash: "0x37b390b5ea3d4b9e597eed8ba579c31ffb3c02545311ad33ffedf723589bd67b", extractedParameters: { value: "512.5" }, contextMessage: "0xabc", contextAddress: REAL_CLAIM.owner }) };
    expect(claimIdentifier(reordered)).toBe(REAL_CLAIM.identifier);
  });
});

function extract(pattern: string, text: string): string | undefined {
  return new RegExp(pattern).exec(text)?.groups?.[VALUE_GROUP];
}

describe("the reveal mode's pattern, over the whole body", () => {
  const cases: [string, string, string, string | undefined][] = [
    ["a number", "data.balance", '{"data":{"balance":512.5,"currency":"EUR"}}', "512.5"],
    ["a numeric string", "data.balance", '{"data":{"currency":"EUR","balance":"1e3"}}', "1e3"],
    ["spaces and newlines", "data.balance", '{ "data" : {\n  "balance" :  -7 } }', "-7"],
    ["the same key elsewhere first", "data.balance", '{"other":{"balance":9},"data":{"balance":512.5}}', "512.5"],
    ["a nested object before the key is not crossed", "data.balance", '{"data":{"inner":{"balance":1}},"x":2}', undefined],
    ["the key one level too deep is not taken", "data.balance", '{"data":{"deeper":{"balance":3}}}', undefined],
    ["a single key", "balance", '{"balance":42}', "42"],
    ["a key with a dash", "my-data.value", '{"my-data":{"value":5}}', "5"],
    ["not a number", "data.balance", '{"data":{"balance":"lots"}}', undefined],
    ["missing", "data.balance", '{"data":{}}', undefined],
  ];
  it.each(cases)("%s", (_, field, body, value) => {
    expect(extract(valuePattern(field, "reveal"), body)).toBe(value);
  });
});

describe("the zk mode, over the value the redaction leaves", () => {
  it.each([
    ["512.5", "512.5"],
    ['"512.5"', "512.5"],
    ["-3e2", "-3e2"],
  ])("%s", (revealed, value) => {
    expect(extract(valuePattern("data.balance", "zk"), revealed)).toBe(value);
  });
  it("redacts down to the field's JSON path", () => {
    expect(jsonPathOf("data.balance")).toBe("$.data.balance");
    expect(claimParameters({ url: "https://a.example/x", method: "GET", field: "data.balance", mode: "zk" }).responseRedactions).toEqual([{ jsonPath: "$.data.balance" }]);
  });
});

describe("fields a proof can name", () => {
  it.each([
    ["data.balance", undefined],
    ["balance", undefined],
    ["a_b.c-d", undefined],
    ["items.0.value", 'cannot be proven: each segment must be an object key of letters, digits, "_" or "-" (got "0")'],
    ["data..balance", '(got "")'],
    ['data."x"', "got"],
  ])("%s", (field, problem) => {
    const found = proofFieldProblem(field);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});
