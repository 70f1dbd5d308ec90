/** readNumericField: dot paths, numeric strings, and errors that never carry the private value. */
import { describe, expect, it } from "vitest";
import { readNumericField } from "../../api/provider/index.ts";
import { thrownApiError } from "../support/thrown.ts";

const BODY = {
  data: { balance: 1234.5, text: " 98765.4321 ", nested: { deep: [{ v: "7" }] } },
  items: [{ value: 3 }, { value: "-0.25" }],
  top: 0,
  strings: {
    hex: "0x1F",
    empty: "",
    blank: "   ",
    inf: "Infinity",
    nan: "NaN",
    huge: "1e999",
    sep: "1,000",
    under: "1_000",
    word: "SECRET-98765",
    exp: "1.5e3",
    signed: "+12",
    dot: ".5",
    trailingDot: "5.",
  },
  kinds: { t: true, n: null, arr: [1], obj: { a: 1 } },
  "dotted.key": 5,
};

describe("readNumericField", () => {
  it.each([
    ["data.balance", 1234.5],
    ["data.text", 98765.4321],
    ["data.nested.deep.0.v", 7],
    ["items.0.value", 3],
    ["items.1.value", -0.25],
    ["top", 0],
    ["strings.exp", 1500],
    ["strings.signed", 12],
    ["strings.dot", 0.5],
    ["strings.trailingDot", 5],
  ] as const)("reads %s as %d", (path, expected) => {
    expect(readNumericField(BODY, path)).toBe(expected);
  });

  it("reads a top-level array by index", () => {
    expect(readNumericField([10, "20"], "1")).toBe(20);
  });

  it.each([
    ["missing member", "data.nope", "missing"],
    ["index out of range", "items.5.value", "missing"],
    ["non-index on an array", "items.first.value", "missing"],
    ["leading-zero index", "items.01.value", "missing"],
    ["negative index", "items.-1.value", "missing"],
    ["step into a number", "data.balance.x", "missing"],
    ["empty path", "", "missing"],
    ["empty segment", "data..balance", "missing"],
    ["inherited member", "data.constructor", "missing"],
    ["prototype", "__proto__", "missing"],
    ["a dotted member name is not a path", "dotted.key", "missing"],
    ["hex string", "strings.hex", "string"],
    ["empty string", "strings.empty", "string"],
    ["blank string", "strings.blank", "string"],
    ["Infinity", "strings.inf", "string"],
    ["NaN", "strings.nan", "string"],
    ["overflowing string", "strings.huge", "string"],
    ["thousands separator", "strings.sep", "string"],
    ["underscore separator", "strings.under", "string"],
    ["word", "strings.word", "string"],
    ["boolean", "kinds.t", "boolean"],
    ["null", "kinds.n", "null"],
    ["array", "kinds.arr", "array"],
    ["object", "kinds.obj", "object"],
  ])("refuses %s", (_name, path, received) => {
    const error = thrownApiError(() => readNumericField(BODY, path));
    expect(error.code).toBe("PROVIDER_INVALID_RESPONSE");
    expect(error.details).toEqual({ expected: `a number at ${path}`, received });
    expect(JSON.stringify([error.message, error.details])).not.toMatch(/SECRET|98765/);
  });

  it("refuses a body that is not an object", () => {
    expect(thrownApiError(() => readNumericField("SECRET-98765", "a")).details).toEqual({ expected: "a number at a", received: "missing" });
    expect(thrownApiError(() => readNumericField(null, "a")).details).toEqual({ expected: "a number at a", received: "missing" });
  });
});
