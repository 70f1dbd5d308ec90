/** The exact decimal text of a JS number, which the rollup and the attestor both bucket by. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decimalOfNumber } from "./decimal.ts";

describe("decimalOfNumber", () => {
  it.each([
    [1e21, "1000000000000000000000"],
    [1e-7, "0.0000001"],
    [-0, "0"],
    [-2.5, "-2.5"],
    [0.1, "0.1"],
    [123.456, "123.456"],
    [2.5e-8, "0.000000025"],
    [-1.5e22, "-15000000000000000000000"],
  ])("%s -> %s", (n, text) => {
    expect(decimalOfNumber(n)).toBe(text);
  });

  it("rejects non-finite numbers", () => {
    expect(() => decimalOfNumber(Number.NaN)).toThrow();
    expect(() => decimalOfNumber(Number.POSITIVE_INFINITY)).toThrow();
  });

  it("round-trips every finite double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = decimalOfNumber(x);
        expect(text).toMatch(/^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/);
        expect(Number(text)).toBe(x === 0 ? 0 : x);
      }),
      { numRuns: 2000 },
    );
  });
});
