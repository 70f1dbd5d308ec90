/** A claim's sealed content in its two forms (common/sealed-content.ts), and naming it back, table-driven. */
import { describe, expect, it } from "vitest";
import { contentNames, namedContent, sealedContent } from "./sealed-content.ts";

const body = { data: { balance: 512.5, currency: "EUR", owner: { name: "A" } } };
const ONE = { dataKeys: ["data.currency", "data.owner"], bucketFields: ["data.balance"] };
const TWO = { dataKeys: ["data.currency"], bucketFields: ["data.balance", "data.score"] };
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("sealedContent", () => {
  it("seals the values alone, in the schema's order, for a schema with one bucket field", () => {
    expect(text(sealedContent(body, ONE, "data.balance", 512.5))).toBe('["EUR",{"name":"A"},512.5]');
    expect(contentNames(ONE)).toEqual(["data.currency", "data.owner", "data.balance"]);
  });

  it("seals the named object where one field alone could not be named", () => {
    expect(text(sealedContent(body, TWO, "data.balance", 512.5))).toBe('{"data.currency":"EUR","data.balance":512.5}');
    expect(contentNames(TWO)).toBeUndefined();
  });

  it("names the values back as the named form holds them, a missing key as null", () => {
    const sealed = sealedContent({ data: { balance: 7 } }, ONE, "data.balance", 7);
    expect(namedContent(sealed, ONE)).toEqual({ ok: true, value: { "data.currency": null, "data.owner": null, "data.balance": 7 } });
    // A bucketed field that is a data key too: once, with the field's value, as the named form had it.
    const overlap = { dataKeys: ["data.balance"], bucketFields: ["data.balance"] };
    expect(namedContent(sealedContent(body, overlap, "data.balance", 512.5), overlap)).toEqual({ ok: true, value: { "data.balance": 512.5 } });
  });

  it.each([
    ["the named form, with or without a schema", '{"a":1}', ONE, { ok: true, value: { a: 1 } }],
    ["values without a schema", '["EUR",1]', undefined, { ok: false, problem: "plaintext is not a JSON object" }],
    ["values where the schema seals names", '["EUR",1]', TWO, { ok: false, problem: "plaintext is not a JSON object" }],
    ["too few values", '["EUR",1]', ONE, { ok: false, problem: "the values do not match the schema's names" }],
    ["a number", "5", ONE, { ok: false, problem: "plaintext is not a JSON object" }],
    ["not JSON", "SECRET 98765", ONE, { ok: false, problem: "plaintext is not JSON" }],
  ])("namedContent of %s", (_name, plaintext, schema, expected) => {
    expect(namedContent(new TextEncoder().encode(plaintext), schema)).toEqual(expected);
  });

  it("says a plaintext that is not UTF-8 is not, without quoting it", () => {
    expect(namedContent(Uint8Array.from([0xc0, 0xaf]), ONE)).toEqual({ ok: false, problem: "plaintext is not UTF-8" });
  });
});
