/**
 * Regexes that state "this JSON number lies in a bucket's range" without revealing the number.
 *
 * The attestor signs that a provider's response matched a regex; the rollup rebuilds the canonical regex for a
 * bucket with `numberRangePattern` and compares the strings exactly, so everything here is pure and deterministic
 * (same input, same string, on every platform). The attestor runs the pattern with RE2, so the output uses only
 * non-capturing groups, character classes, `* + ?`, `{n}` / `{n,}` and alternation, and never contains `{{`
 * (attestor-core reads `{{name}}` as a template).
 *
 * A "spelling" is text matching `-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`; its value is the exact decimal it
 * denotes (no binary rounding: `99.99999999999999999999` is below 100).
 *
 * Coverage of the pattern (see `numberRangePattern`): every spelling without exponent, every exponent spelling
 * whose mantissa is in scientific normal form `[1-9](?:\.[0-9]+)?` (what JS, Python, Go, Java and Rust emit) and
 * zero mantissas `0+(?:\.0+)?` with any exponent. Other exponent spellings (`43.2e2`, `0.5e1`, `00.1e1`) never
 * match: the set of all exponent spellings of a range is not a regular language (the mantissa's leading-zero count
 * and the exponent would have to cancel), so completeness is given up there, never soundness.
 *
 * The parts: range-pattern/decimal.ts (exact decimals, bins), range-pattern/chains.ts (the alternatives for a
 * magnitude interval), range-pattern/printer.ts (one regex from them).
 */
import { ANY_DIGIT, EXP_MARK, exponentFormChains, fractionChains, isEmpty, MINUS, plainChains, product, type MagnitudeInterval } from "./range-pattern/chains.ts";
import { abs, compare, contains, isZero, parseRange, ZERO, type DecimalRange, type Range } from "./range-pattern/decimal.ts";
import { printChains, printedText, tok, type Chain } from "./range-pattern/printer.ts";

export { binRange, bucketOfSpelling, decimalOfNumber, spellingInRange, type DecimalRange } from "./range-pattern/decimal.ts";

/** Matches nothing in both RE2 and JS (an empty range). */
const NOTHING = "[^\\s\\S]";

/** The regex (RE2 syntax, unanchored, no groups that capture) matching exactly the spelled numbers in `range` (see coverage above). */
export function numberRangePattern(range: DecimalRange): string {
  const r = parseRange(range);
  // Both layouts are exact; the shorter one is canonical (ties go to the ungrouped one).
  const plain = rangePattern(r, false);
  const grouped = rangePattern(r, true);
  return grouped.length < plain.length ? grouped : plain;
}

function rangePattern(r: Range, groupFractions: boolean): string {
  const chains: Chain[] = [];
  const pushSide = (m: MagnitudeInterval, sign: Chain): void => {
    if (isEmpty(m)) return;
    // A side holding only zero adds nothing to the shared zero alternative below.
    if (isZero(m.lo) && m.hi !== null && isZero(m.hi)) return;
    for (const c of [...plainChains(m, true, groupFractions), ...exponentFormChains(m, groupFractions)]) {
      chains.push([...sign, ...c]);
    }
  };
  // Negative values are spelled "-" + magnitude, so the range splits into two magnitude intervals.
  if (r.hi === null || compare(r.hi, ZERO) >= 0) {
    pushSide({ lo: compare(r.lo, ZERO) > 0 ? r.lo : ZERO, loInclusive: true, hi: r.hi, hiInclusive: r.hiInclusive }, []);
  }
  if (compare(r.lo, ZERO) <= 0) {
    const negative: MagnitudeInterval =
      r.hi === null || compare(r.hi, ZERO) > 0
        ? { lo: ZERO, loInclusive: true, hi: abs(r.lo), hiInclusive: true }
        : { lo: abs(r.hi), loInclusive: r.hiInclusive, hi: abs(r.lo), hiInclusive: true };
    pushSide(negative, [MINUS]);
  }
  if (contains(r, ZERO)) {
    // Zero is spelled with or without "-", and zero mantissas take any exponent: -0, 000.00, 0e5, -0.0E-3.
    const mantissas = product([[tok("-", 0, 1), tok("0", 1, Infinity)]], fractionChains([], "zero"));
    const exponent: Chain[] = [[], [EXP_MARK, tok("[+-]", 0, 1), tok(ANY_DIGIT, 1, Infinity)]];
    chains.push(...product(mantissas, exponent));
  }
  if (chains.length === 0) return NOTHING;
  return printedText(printChains(chains));
}
