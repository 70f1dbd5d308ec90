/**
 * The attestor's claim format (common/tls-claim.ts): identifiers and signatures checked against a claim
 * the real attestor-core server signed (captured from a run of attestor/server.ts against a local provider
 * on 24 November 2026); the range pattern table-driven under RE2 as attestor-core runs it and under
 * JavaScript; what our attestor agrees to sign; which schemas can be proven.
 */
import { createRequire } from "node:module";
import { hashMessage, recoverAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { SeenRecord } from "./revealed-response.ts";
import { checkSeenStatement, claimContext, claimIdentifier, claimParameters, claimSignText, fieldPattern, jsonPathOf, proofFieldProblem, proofSchemaIssues } from "./tls-claim.ts";

const REAL_CLAIM = {
  provider: "http",
  parameters:
    '{"method":"GET","responseMatches":[{"type":"regex","value":"\\"data\\"\\\\s*:\\\\s*\\\\{[^{}]*?\\"balance\\"\\\\s*:\\\\s*\\"?(?<value>-?[0-9]+(?:\\\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\\"?"}],"url":"https://localhost:18443/balance.json"}',
  owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as const,
  timestampS: 1795529282,
  context:
    '{"contextAddress":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","contextMessage":"0xabc","extractedParameters":{"value":"512.5"},"providerHash":"0x37b390b5ea3d4b9e597eed8ba579c31ffb3c02545311ad33ffedf723589bd67b"}',
  identifier: "0x19532b8e32a1ff26ce03d9555fd64e09e2c7f9c07b77a259a386278cc493b42f" as const,
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

  it("the identifier does not depend on how the context's keys were ordered", () => {
    const reordered = { ...REAL_CLAIM, context: JSON.stringify({ providerHash: "0x37b390b5ea3d4b9e597eed8ba579c31ffb3c02545311ad33ffedf723589bd67b", extractedParameters: { value: "512.5" }, contextMessage: "0xabc", contextAddress: REAL_CLAIM.owner }) };
    expect(claimIdentifier(reordered)).toBe(REAL_CLAIM.identifier);
  });
});

const RE2 = createRequire(import.meta.url)("re2") as new (pattern: string, flags: string) => { test(text: string): boolean };
const mid = { lo: "100", hi: "1000", hiInclusive: false };
const PARAMS = claimParameters({ url: "https://bank.example/b", method: "GET", field: "data.balance", range: mid });
const view = (body: string): SeenRecord[] => [{ text: `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`, whole: false }];

describe("the range pattern of a field, as attestor-core runs it (RE2, flags sgiu)", () => {
  const cases: [string, string, boolean][] = [
    ["a number in the bin", '{"data":{"balance":512.5,"currency":"EUR"}}', true],
    ["a numeric string in the bin", '{"data":{"currency":"EUR","balance":"512.5"}}', true],
    ["spaces and newlines", '{ "data" : {\n  "balance" :  100 } }', true],
    ["the bin's upper edge", '{"data":{"balance":1000}}', false],
    ["an exponent in the bin", '{"data":{"balance":5.125e2}}', true],
    ["below the bin", '{"data":{"balance":99.999}}', false],
    ["a negative", '{"data":{"balance":-512.5}}', false],
    ["not a number", '{"data":{"balance":"lots"}}', false],
    ["missing", '{"data":{}}', false],
  ];
  it.each(cases)("%s", (_, body, matches) => {
    const pattern = PARAMS.responseMatches[0]?.value ?? "";
    expect(new RE2(pattern, "sgiu").test(body)).toBe(matches);
    expect(new RegExp(pattern, "su").test(body)).toBe(matches);
  });

  it("names no group (nothing is extracted into the claim) and no template", () => {
    const pattern = PARAMS.responseMatches[0]?.value ?? "";
    expect(pattern).not.toMatch(/\(\?<|\{\{/);
    expect(PARAMS.responseRedactions).toEqual([{ jsonPath: jsonPathOf("data.balance") }]);
    expect(jsonPathOf("data.balance")).toBe("$.data.balance");
  });
});

describe("what our attestor agrees to sign (checkSeenStatement)", () => {
  const body = '{"data":{"balance":512.5}}';
  const CONTEXT = claimContext("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", `0x${"ab".repeat(32)}`, "0x01", { field: "data.balance", range: mid });
  const withMatch = (value: string) => ({ ...PARAMS, responseMatches: [{ type: "regex", value }] });
  const cut = fieldPattern("data.balance", mid).slice(0, -"[,}\\]\\s]".length);

  it("the canonical statement over a field whose value is in the bin", () => {
    expect(checkSeenStatement({ ...PARAMS }, view(body), CONTEXT)).toEqual({ ok: true, value: { raw: "512.5", spelling: "512.5" } });
  });
  it("the cut pattern is what it claims to be: a prefix of a value outside the bin satisfies it", () => {
    expect(new RegExp(cut, "su").test('{"data":{"balance":5125}}')).toBe(true);
    expect(new RegExp(PARAMS.responseMatches[0]?.value ?? "", "su").test('{"data":{"balance":5125}}')).toBe(false);
  });
  it.each([
    ["a value outside the bin", { ...PARAMS }, '{"data":{"balance":5000}}', CONTEXT, "the value at data.balance is not in [100, 1000)"],
    ["no jsonPath redaction", { ...PARAMS, responseRedactions: [] }, body, CONTEXT, "name the field with exactly one jsonPath redaction"],
    ["two redactions", { ...PARAMS, responseRedactions: [{ jsonPath: "$.data.balance" }, { jsonPath: "$.x" }] }, body, CONTEXT, "exactly one jsonPath"],
    ["a regex redaction", { ...PARAMS, responseRedactions: [{ jsonPath: "$.data.balance", regex: "." }] }, body, CONTEXT, "exactly one jsonPath"],
    ["an inverted match", { ...PARAMS, responseMatches: [{ ...PARAMS.responseMatches[0], invert: true }] }, body, CONTEXT, "exactly one regex response match"],
    ["a contains match", { ...PARAMS, responseMatches: [{ type: "contains", value: "512" }] }, body, CONTEXT, "exactly one regex response match"],
    ["a regex that does not compile", withMatch("("), body, CONTEXT, "not the canonical range statement for data.balance in [100, 1000)"],
    ["the pattern cut before its delimiter", withMatch(cut), '{"data":{"balance":5125}}', CONTEXT, "not the canonical range statement for data.balance in [100, 1000)"],
    ["a widened pattern", withMatch(fieldPattern("data.balance", { ...mid, hi: "10000" })), body, CONTEXT, "not the canonical range statement"],
    ["another bin's pattern", withMatch(fieldPattern("data.balance", { lo: "0", hi: "100", hiInclusive: false })), body, CONTEXT, "not the canonical range statement"],
    ["an arbitrary pattern", withMatch('"balance"'), body, CONTEXT, "not the canonical range statement"],
    ["no statement in the context", { ...PARAMS }, body, { contextAddress: "0x01" }, 'name the statement to sign in the context: "statement"'],
    ["no context at all", { ...PARAMS }, body, undefined, "name the statement to sign in the context"],
    ["a statement about another field", { ...PARAMS }, body, { ...CONTEXT, statement: { field: "data.limit", range: mid } }, "the jsonPath redaction names data.balance, the statement names data.limit"],
    ["a statement that is not an object", { ...PARAMS }, body, { ...CONTEXT, statement: "balance in mid" }, "the context's statement is not an object"],
    ["a statement with more to say", { ...PARAMS }, body, { ...CONTEXT, statement: { field: "data.balance", range: mid, label: "mid" } }, 'holds "label"'],
    ["a field with an index", { ...PARAMS }, body, { ...CONTEXT, statement: { field: "data.0", range: mid } }, 'the statement\'s field "data.0" is not a chain of object keys'],
    ["a range without bounds", { ...PARAMS }, body, { ...CONTEXT, statement: { field: "data.balance", range: { lo: 100 } } }, "the statement's range must be"],
    ["a bound that is not a decimal", { ...PARAMS }, body, { ...CONTEXT, statement: { field: "data.balance", range: { ...mid, lo: "1e" } } }, "the statement's range is not a range: range.lo is not a decimal spelling"],
    ["a parameter beyond the statement's", { ...PARAMS, paramValues: { a: "b" } }, body, CONTEXT, 'the parameters may hold method, responseMatches, responseRedactions, url (got "paramValues")'],
  ])("refuses %s", (_, params, text, context, reason) => {
    const checked = checkSeenStatement(params as Record<string, unknown>, view(text), context as Record<string, unknown> | undefined);
    expect(checked.ok ? "signed" : checked.reason).toContain(reason);
  });
});

describe("schemas a proof can serve", () => {
  const definitions = { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } };
  it.each([
    ["a proven schema", { proof: "attestor" as const, bucketDefinitions: definitions }, []],
    ["a quorum of 3", { proof: "attestor" as const, attestorQuorum: 3, bucketDefinitions: definitions }, []],
    ["a quorum without proof", { attestorQuorum: 2, bucketDefinitions: definitions }, ['a quorum of attestors needs proof "attestor"']],
    ["no definition", { proof: "attestor" as const, bucketDefinitions: {} }, ['a schema with proof "attestor" needs a bucket definition']],
    ["an array index", { proof: "attestor" as const, bucketDefinitions: { "items.0": definitions["data.balance"] } }, ['"items.0" cannot be proven']],
    [
      "boundaries that need a pattern too long for calldata",
      { proof: "attestor" as const, bucketDefinitions: { x: { boundaries: [1.234567891234567e-300, 9.87654321987654e300], labels: ["a"] } } },
      [`needs a range pattern of`],
    ],
  ])("%s", (_, schema, messages) => {
    const issues = proofSchemaIssues(schema).map((i) => i.message);
    expect(issues.length).toBe(messages.length);
    messages.forEach((m, i) => expect(issues[i]).toContain(m));
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
