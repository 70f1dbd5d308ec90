/**
 * Regex building blocks for common/range-pattern.ts. A pattern is built as a list of alternatives
 * ("chains"), each a sequence of quantified atoms, for the spellings of the numbers in a magnitude
 * interval (plain and exponent forms); printer.ts merges them into one regex.
 */
import { printChains, rawToken, tok, tokenKey, type Chain, type Token } from "./printer.ts";
import { compareMagnitude, decade, fractionDigits, isZero, pow10, scaled, shiftDown, type Dec } from "./decimal.ts";

export const ANY_DIGIT = "\\d"; // ASCII [0-9] in both RE2 and JS regexes (also with the `u` flag)
export const DOT = tok("\\.");
export const MINUS = tok("-");
export const EXP_MARK = tok("[eE]");

/** A digit class [lo-hi]. */
export interface DigitClass {
  lo: number;
  hi: number;
}
export const ALL_DIGITS: DigitClass = { lo: 0, hi: 9 };

export function classAtom(c: DigitClass): string {
  if (c.lo === c.hi) return String(c.lo);
  if (c.lo === 0 && c.hi === 9) return ANY_DIGIT;
  if (c.hi === c.lo + 1) return `[${c.lo}${c.hi}]`;
  return `[${c.lo}-${c.hi}]`;
}

export const classToken = (c: DigitClass): Token => tok(classAtom(c));

/**
 * Classic numeric-range-to-regex split of [x, y] (same length digit strings) into sequences of digit classes,
 * each sequence matching exactly the numbers it stands for.
 */
export function sameLengthPieces(x: string, y: string): DigitClass[][] {
  if (x.length === 0) return [[]];
  const x0 = Number(x[0]);
  const y0 = Number(y[0]);
  const xRest = x.slice(1);
  const yRest = y.slice(1);
  if (x0 === y0) return sameLengthPieces(xRest, yRest).map((p) => [{ lo: x0, hi: x0 }, ...p]);
  const t = xRest.length;
  const out: DigitClass[][] = [];
  let midLo = x0;
  let midHi = y0;
  if (!/^0*$/.test(xRest)) {
    out.push(...sameLengthPieces(xRest, "9".repeat(t)).map((p) => [{ lo: x0, hi: x0 }, ...p]));
    midLo = x0 + 1;
  }
  let tail: DigitClass[][] = [];
  if (!/^9*$/.test(yRest)) {
    tail = sameLengthPieces("0".repeat(t), yRest).map((p) => [{ lo: y0, hi: y0 }, ...p]);
    midHi = y0 - 1;
  }
  if (midLo <= midHi) out.push([{ lo: midLo, hi: midHi }, ...Array.from({ length: t }, () => ALL_DIGITS)]);
  out.push(...tail);
  return out;
}

/**
 * Splits the integers [a, b] (b null = unbounded) into digit-class sequences without leading zeros (0 itself is
 * the one-digit "0"). When unbounded, every integer with at least `unboundedFrom` digits is included too, and the
 * explicit sequences stop below 10^(unboundedFrom - 1); `minUnboundedFrom` lets the caller push that cut up.
 * Integers below 10^padTo are split as `padTo`-digit strings with leading zeros instead (they are fraction
 * digits, where [0, 9999] is one piece `\d\d\d\d`, not four pieces by length).
 */
export function integerPieces(
  aIn: bigint,
  b: bigint | null,
  minUnboundedFrom = 1,
  padTo = 0,
): { pieces: DigitClass[][]; unboundedFrom: number | null } {
  const pieces: DigitClass[][] = [];
  let a = aIn;
  const padded = 10n ** BigInt(padTo);
  if (padTo > 0 && a < padded) {
    const hi = b !== null && b < padded ? b : padded - 1n;
    if (a <= hi) pieces.push(...sameLengthPieces(a.toString().padStart(padTo, "0"), hi.toString().padStart(padTo, "0")));
    a = padded;
  }
  const aLen = a.toString().length;
  let top = b;
  let unboundedFrom: number | null = null;
  if (b === null) {
    // The shortest tail "all integers with at least u digits" that stays >= a.
    let u = Math.max(minUnboundedFrom, 1);
    while (10n ** BigInt(u - 1) < a) u++;
    top = 10n ** BigInt(u - 1) - 1n;
    unboundedFrom = u;
  }
  if (top !== null && a <= top) {
    const topLen = top.toString().length;
    for (let len = aLen; len <= topLen; len++) {
      const lo = len === aLen ? a : 10n ** BigInt(len - 1);
      const hi = len === topLen ? top : 10n ** BigInt(len) - 1n;
      pieces.push(...sameLengthPieces(lo.toString(), hi.toString()));
    }
  }
  return { pieces, unboundedFrom };
}

/** What the digits after the first k fraction digits may be. */
export type Rest = "any" | "zero" | "nonzero";

export function restTokens(rest: Rest, nonEmpty: boolean): Token[] {
  switch (rest) {
    case "any":
      return [tok(ANY_DIGIT, nonEmpty ? 1 : 0, Infinity)];
    case "zero":
      return [tok("0", nonEmpty ? 1 : 0, Infinity)];
    case "nonzero":
      return [tok("0", 0, Infinity), tok("[1-9]"), tok(ANY_DIGIT, 0, Infinity)];
  }
}

/**
 * The spelled continuations after the integer part for fraction digit classes `frac` (the first k fraction
 * digits) followed by `rest`. A spelled fraction may be shorter than k digits when the missing digits may be
 * zero, and `4.` (a point without digits) is not a spelling.
 */
export function fractionChains(fracIn: DigitClass[], rest: Rest): Chain[] {
  const frac = [...fracIn];
  // Trailing classes the rest already allows (any digit before "any", zero before "zero") add nothing.
  const absorbed = rest === "any" ? ALL_DIGITS : rest === "zero" ? { lo: 0, hi: 0 } : undefined;
  while (absorbed !== undefined && frac.length > 0) {
    const last = frac[frac.length - 1] as DigitClass;
    if (last.lo !== absorbed.lo || last.hi !== absorbed.hi) break;
    frac.pop();
  }
  const k = frac.length;
  const chains: Chain[] = [];
  const restMayBeEmpty = rest !== "nonzero";
  // The spelling may stop after j fraction digits when all later classes hold 0 and the rest may be empty.
  let firstStop = k;
  while (firstStop > 0 && (frac[firstStop - 1] as DigitClass).lo === 0) firstStop--;
  if (restMayBeEmpty) {
    if (firstStop === 0) chains.push([]);
    for (let j = Math.max(firstStop, 1); j < k; j++) chains.push([DOT, ...frac.slice(0, j).map(classToken)]);
  }
  if (k === 0) chains.push([DOT, ...restTokens(rest, true)]);
  else chains.push([DOT, ...frac.map(classToken), ...restTokens(rest, false)]);
  return chains;
}

export function product(a: Chain[], b: Chain[]): Chain[] {
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

/** An interval of magnitudes (lo >= 0). */
export interface MagnitudeInterval {
  lo: Dec;
  loInclusive: boolean;
  hi: Dec | null;
  hiInclusive: boolean;
}

export function isEmpty(m: MagnitudeInterval): boolean {
  if (m.hi === null) return false;
  const c = compareMagnitude(m.lo, m.hi);
  return c > 0 || (c === 0 && !(m.loInclusive && m.hiInclusive));
}

/**
 * Spellings without exponent of the magnitudes in `m` (no sign). With k fraction digits enough to write both
 * bounds, Y = floor(x * 10^k) decides membership except on the edges: an exclusive lower edge A also admits
 * Y == A followed by a nonzero digit, an inclusive upper edge B admits Y == B followed by zeros only.
 * `leadingZeros` allows `0*` before the integer part (plain numbers); mantissas of exponent forms have none.
 * `groupFractions` prints the integer parts of pieces that share their fraction continuations as one
 * alternation (`(?:[1-9]|[1-4]\d)(?:\.\d+)?` instead of repeating the fraction); callers try both ways.
 */
export function plainChains(m: MagnitudeInterval, leadingZeros: boolean, groupFractions: boolean): Chain[] {
  const k = Math.max(fractionDigits(m.lo), m.hi === null ? 0 : fractionDigits(m.hi));
  const a = scaled(m.lo, k);
  const b = m.hi === null ? null : scaled(m.hi, k);
  const pieces: { head: Chain; fractions: Chain[] }[] = [];

  const piece = (classes: DigitClass[], rest: Rest): void => {
    const d = classes.length;
    // Y's last k digits are the first k fraction digits; a Y shorter than k+1 digits has integer part 0.
    const intPart = d > k ? classes.slice(0, d - k) : [{ lo: 0, hi: 0 }];
    const frac = d > k ? classes.slice(d - k) : [...Array.from({ length: k - d }, () => ({ lo: 0, hi: 0 })), ...classes];
    pieces.push({ head: intPart.map(classToken), fractions: fractionChains(frac, rest) });
  };
  const digitsOf = (n: bigint): DigitClass[] => [...n.toString()].map((c) => ({ lo: Number(c), hi: Number(c) }));

  if (!m.loInclusive) piece(digitsOf(a), "nonzero");
  const fullLo = m.loInclusive ? a : a + 1n;
  const fullHi = b === null ? null : b - 1n;
  if (fullHi === null || fullLo <= fullHi) {
    // Unbounded: the explicit pieces run at least up to integer part 0 (Y < 10^k) so the tail starts at 1.
    const { pieces: classes, unboundedFrom } = integerPieces(fullLo, fullHi, k + 1, k);
    for (const p of classes) piece(p, "any");
    if (unboundedFrom !== null) {
      pieces.push({
        head: [tok("[1-9]"), tok(ANY_DIGIT, unboundedFrom - 1 - k, Infinity)],
        fractions: fractionChains([], "any"),
      });
    }
  }
  if (m.hiInclusive && b !== null) piece(digitsOf(b), "zero");

  let merged = pieces;
  if (groupFractions) {
    const groups = new Map<string, { heads: Chain[]; fractions: Chain[] }>();
    for (const p of pieces) {
      const key = p.fractions.map((f) => f.map(tokenKey).join("\u0001")).join("\u0002");
      const g = groups.get(key);
      if (g === undefined) groups.set(key, { heads: [p.head], fractions: p.fractions });
      else g.heads.push(p.head);
    }
    merged = [...groups.values()].map((g) => ({
      head: g.heads.length === 1 ? (g.heads[0] as Chain) : [rawToken(printChains(g.heads))],
      fractions: g.fractions,
    }));
  }
  const prefix: Chain = leadingZeros ? [tok("0", 0, Infinity)] : [];
  return merged.flatMap((p) => p.fractions.map((f) => [...prefix, ...p.head, ...f]));
}

/** Spelled integers (leading zeros allowed, no sign) in [a, b], b null = unbounded. */
export function integerChains(a: bigint, b: bigint | null): Chain[] {
  if (a === 0n && b === null) return [[tok(ANY_DIGIT, 1, Infinity)]];
  const zeros = tok("0", 0, Infinity);
  const { pieces, unboundedFrom } = integerPieces(a, b);
  const chains = pieces.map((p) => [zeros, ...p.map(classToken)]);
  if (unboundedFrom !== null) chains.push([zeros, tok("[1-9]"), tok(ANY_DIGIT, unboundedFrom - 1, Infinity)]);
  return chains;
}

/** Spelled exponents (`+`, `-` or no sign, leading zeros, -0 == 0) in [xa, xb]; null = unbounded that way. */
export function exponentChains(xa: bigint | null, xb: bigint | null): Chain[] {
  const chains: Chain[] = [];
  const nonNegative = xb === null || xb >= 0n ? { a: xa === null || xa < 0n ? 0n : xa, b: xb } : null;
  // Magnitudes spelled after "-": -0 counts as 0, so it belongs when 0 is in range.
  const negative = xa === null || xa <= 0n ? { a: xb === null || xb >= 0n ? 0n : -xb, b: xa === null ? null : -xa } : null;
  if (nonNegative !== null && negative !== null && nonNegative.a === negative.a && nonNegative.b === negative.b) {
    return integerChains(nonNegative.a, nonNegative.b).map((c) => [tok("[+-]", 0, 1), ...c]);
  }
  if (nonNegative !== null) {
    chains.push(...integerChains(nonNegative.a, nonNegative.b).map((c) => [tok("\\+", 0, 1), ...c]));
  }
  if (negative !== null) chains.push(...integerChains(negative.a, negative.b).map((c) => [MINUS, ...c]));
  return chains;
}

/**
 * Exponent spellings `d.ddd e X` (mantissa in scientific normal form) of the positive magnitudes in `m`. Decades
 * [10^X, 10^(X+1)) inside `m` take any mantissa and form one integer interval of exponents; the (at most two)
 * decades `m` cuts partially take the mantissa interval of the cut.
 */
export function exponentFormChains(m: MagnitudeInterval, groupFractions: boolean): Chain[] {
  if (m.hi !== null && isZero(m.hi)) return [];
  const lo = m.lo;
  const loDecade = isZero(lo) ? null : decade(lo);
  // Whole decades: 10^X must be in m and 10^(X+1) <= hi.
  let fullFrom: bigint | null = null;
  if (loDecade !== null) fullFrom = lo.digits === "1" && m.loInclusive ? loDecade : loDecade + 1n;
  const hiDecade = m.hi === null ? null : decade(m.hi);
  const fullTo = hiDecade === null ? null : hiDecade - 1n;
  const chains: Chain[] = [];
  const isFull = (x: bigint): boolean => (fullFrom === null || x >= fullFrom) && (fullTo === null || x <= fullTo);

  const partial = [...new Set([loDecade, hiDecade].filter((x): x is bigint => x !== null))].sort((x, y) =>
    x < y ? -1 : x > y ? 1 : 0,
  );
  for (const x of partial) {
    if (isFull(x)) continue;
    const decadeLo = pow10(x);
    const decadeHi = pow10(x + 1n);
    const cutLo = compareMagnitude(lo, decadeLo) >= 0;
    const cutHi = m.hi !== null && compareMagnitude(m.hi, decadeHi) < 0;
    const mantissa: MagnitudeInterval = {
      lo: shiftDown(cutLo ? lo : decadeLo, x),
      loInclusive: cutLo ? m.loInclusive : true,
      hi: shiftDown(cutHi && m.hi !== null ? m.hi : decadeHi, x),
      hiInclusive: cutHi ? m.hiInclusive : false,
    };
    if (isEmpty(mantissa)) continue;
    // The mantissa is printed on its own so its fraction variants share the exponent after them.
    const printed = rawToken(printChains(plainChains(mantissa, false, groupFractions)));
    chains.push(...exponentChains(x, x).map((e) => [printed, EXP_MARK, ...e]));
  }
  if (fullFrom === null || fullTo === null || fullFrom <= fullTo) {
    const mantissa = rawToken(printChains(fractionChains([], "any").map((f) => [tok("[1-9]"), ...f])));
    chains.push(...exponentChains(fullFrom, fullTo).map((e) => [mantissa, EXP_MARK, ...e]));
  }
  return chains;
}
