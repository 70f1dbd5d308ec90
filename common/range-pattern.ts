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
 */
import { bucketDefinitionProblem, type BucketDefinition } from "./buckets.ts";

/** An interval of exact decimals: lo inclusive; hi null = +infinity. */
export interface DecimalRange {
  lo: string;
  hi: string | null;
  hiInclusive: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Exact decimals

/**
 * value = (neg ? -1 : 1) * digits * 10^exp, with `digits` free of leading and trailing zeros. Zero is
 * `{ neg: false, digits: "", exp: 0n }`, so -0 and 0 are the same value. The exponent is a bigint because a
 * spelling such as `1e99999999999999999999` is legal input to `spellingInRange`.
 */
interface Dec {
  neg: boolean;
  digits: string;
  exp: bigint;
}

const ZERO: Dec = { neg: false, digits: "", exp: 0n };
const SPELLING = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

function parseSpelling(text: string): Dec | undefined {
  const m = SPELLING.exec(text);
  if (m === null) return undefined;
  const intPart = m[2] ?? "";
  const frac = m[3] ?? "";
  const all = intPart + frac;
  let start = 0;
  while (start < all.length && all[start] === "0") start++;
  let end = all.length;
  while (end > start && all[end - 1] === "0") end--;
  if (start === end) return ZERO;
  const exp = BigInt(m[4] ?? "0") - BigInt(frac.length) + BigInt(all.length - end);
  return { neg: m[1] === "-", digits: all.slice(start, end), exp };
}

function isZero(d: Dec): boolean {
  return d.digits === "";
}

/** floor(log10 |d|) for d != 0: the X of the decade [10^X, 10^(X+1)) holding |d|. */
function decade(d: Dec): bigint {
  return BigInt(d.digits.length) - 1n + d.exp;
}

/** Compares |a| and |b|. */
function compareMagnitude(a: Dec, b: Dec): number {
  if (isZero(a) || isZero(b)) return (isZero(a) ? 0 : 1) - (isZero(b) ? 0 : 1);
  const da = decade(a);
  const db = decade(b);
  if (da !== db) return da < db ? -1 : 1;
  // Same decade: the digit strings are aligned at their first digit, so padding the shorter one with zeros on
  // the right makes a plain string comparison exact.
  const n = Math.max(a.digits.length, b.digits.length);
  const sa = a.digits.padEnd(n, "0");
  const sb = b.digits.padEnd(n, "0");
  return sa === sb ? 0 : sa < sb ? -1 : 1;
}

function compare(a: Dec, b: Dec): number {
  const sa = isZero(a) ? 0 : a.neg ? -1 : 1;
  const sb = isZero(b) ? 0 : b.neg ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return sa * compareMagnitude(a, b);
}

function abs(d: Dec): Dec {
  return { ...d, neg: false };
}

function pow10(x: bigint): Dec {
  return { neg: false, digits: "1", exp: x };
}

/** d * 10^-x */
function shiftDown(d: Dec, x: bigint): Dec {
  return isZero(d) ? d : { ...d, exp: d.exp - x };
}

/** Digits after the decimal point in the shortest plain spelling of d. */
function fractionDigits(d: Dec): number {
  return d.exp < 0n ? Number(-d.exp) : 0;
}

/** |d| * 10^k as an integer; k must be at least fractionDigits(d). */
function scaled(d: Dec, k: number): bigint {
  return isZero(d) ? 0n : BigInt(d.digits) * 10n ** (d.exp + BigInt(k));
}

function plainText(d: Dec): string {
  if (isZero(d)) return "0";
  const sign = d.neg ? "-" : "";
  if (d.exp >= 0n) return sign + d.digits + "0".repeat(Number(d.exp));
  const point = d.digits.length + Number(d.exp);
  if (point > 0) return `${sign}${d.digits.slice(0, point)}.${d.digits.slice(point)}`;
  return `${sign}0.${"0".repeat(-point)}${d.digits}`;
}

/** The exact decimal text of a finite JS number's shortest spelling, without exponent: 1e21 -> "1000000000000000000000", 1e-7 -> "0.0000001", -0 -> "0", -2.50 -> "-2.5". */
export function decimalOfNumber(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // String(n) is the shortest round-trip spelling, possibly with an exponent ("1e+21", "1.5e-7").
  const d = parseSpelling(String(n));
  if (d === undefined) throw new Error(`unexpected number spelling ${String(n)}`);
  return plainText(d);
}

// ---------------------------------------------------------------------------------------------------------------
// Ranges

interface Range {
  lo: Dec;
  hi: Dec | null;
  hiInclusive: boolean;
}

/**
 * Pattern sizes grow with the digits of the bounds; every finite JS number spells in at most ~330 plain digits,
 * so a bound beyond this is a mistake (and `1e999999999` must not allocate a billion digits).
 */
const MAX_BOUND_DECADE = 1100n;

function parseBound(text: string, what: string): Dec {
  const d = parseSpelling(text);
  if (d === undefined) throw new RangeError(`${what} is not a decimal spelling: ${JSON.stringify(text)}`);
  if (!isZero(d) && (decade(d) > MAX_BOUND_DECADE || decade(d) < -MAX_BOUND_DECADE || d.digits.length > 1100)) {
    throw new RangeError(`${what} is too large or too small: ${JSON.stringify(text)}`);
  }
  return d;
}

function parseRange(range: DecimalRange): Range {
  return {
    lo: parseBound(range.lo, "range.lo"),
    hi: range.hi === null ? null : parseBound(range.hi, "range.hi"),
    hiInclusive: range.hiInclusive,
  };
}

function contains(r: Range, v: Dec): boolean {
  if (compare(v, r.lo) < 0) return false;
  if (r.hi === null) return true;
  const c = compare(v, r.hi);
  return c < 0 || (c === 0 && r.hiInclusive);
}

/** The bin of `label` in `definition`, or undefined when there is no such label. Throws on an invalid definition. */
export function binRange(definition: BucketDefinition, label: string): DecimalRange | undefined {
  checkDefinition(definition);
  const i = definition.labels.indexOf(label);
  return i < 0 ? undefined : binAt(definition, i);
}

function checkDefinition(definition: BucketDefinition): void {
  const problem = bucketDefinitionProblem(definition);
  if (problem !== undefined) throw new RangeError(`invalid bucket definition: ${problem}`);
}

/** The bin of labels[i] in a valid definition. */
function binAt(definition: BucketDefinition, i: number): DecimalRange {
  const { boundaries, labels } = definition;
  const lo = decimalOfNumber(boundaries[i] as number);
  // labels.length === boundaries.length: the last label is open upwards.
  if (i + 1 >= boundaries.length) return { lo, hi: null, hiInclusive: false };
  // labels.length === boundaries.length - 1: the last bin also holds its top boundary.
  const closedLast = labels.length === boundaries.length - 1 && i === labels.length - 1;
  return { lo, hi: decimalOfNumber(boundaries[i + 1] as number), hiInclusive: closedLast };
}

/** Whether `text` is a spelling (grammar above) whose exact value lies in `range`. */
export function spellingInRange(text: string, range: DecimalRange): boolean {
  const v = parseSpelling(text);
  return v !== undefined && contains(parseRange(range), v);
}

/** The label whose bin holds the spelled value exactly, or undefined. Throws on an invalid definition. */
export function bucketOfSpelling(text: string, definition: BucketDefinition): string | undefined {
  checkDefinition(definition);
  const v = parseSpelling(text);
  if (v === undefined) return undefined;
  // Bins are disjoint, so the first one holding v is the only one.
  const i = definition.labels.findIndex((_, j) => contains(parseRange(binAt(definition, j)), v));
  return i < 0 ? undefined : definition.labels[i];
}

// ---------------------------------------------------------------------------------------------------------------
// Regex building blocks. A pattern is built as a list of alternatives ("chains"), each a sequence of quantified
// atoms; the chains are merged into a trie and printed with prefix and suffix sharing (see `Printer`).

/**
 * `atom` repeated between min and max times (max may be Infinity). Atoms are single regex units, except `raw`
 * tokens: an already printed sub-pattern (a sequence, never a bare alternation) used once, never quantified.
 */
interface Token {
  atom: string;
  min: number;
  max: number;
  raw?: true;
}
type Chain = Token[];

const tok = (atom: string, min = 1, max = 1): Token => ({ atom, min, max });
const ANY_DIGIT = "\\d"; // ASCII [0-9] in both RE2 and JS regexes (also with the `u` flag)
const DOT = tok("\\.");
const MINUS = tok("-");
const EXP_MARK = tok("[eE]");

/** A digit class [lo-hi]. */
interface DigitClass {
  lo: number;
  hi: number;
}
const ALL_DIGITS: DigitClass = { lo: 0, hi: 9 };

function classAtom(c: DigitClass): string {
  if (c.lo === c.hi) return String(c.lo);
  if (c.lo === 0 && c.hi === 9) return ANY_DIGIT;
  if (c.hi === c.lo + 1) return `[${c.lo}${c.hi}]`;
  return `[${c.lo}-${c.hi}]`;
}

const classToken = (c: DigitClass): Token => tok(classAtom(c));

/**
 * Classic numeric-range-to-regex split of [x, y] (same length digit strings) into sequences of digit classes,
 * each sequence matching exactly the numbers it stands for.
 */
function sameLengthPieces(x: string, y: string): DigitClass[][] {
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
function integerPieces(
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
type Rest = "any" | "zero" | "nonzero";

function restTokens(rest: Rest, nonEmpty: boolean): Token[] {
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
function fractionChains(fracIn: DigitClass[], rest: Rest): Chain[] {
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

function product(a: Chain[], b: Chain[]): Chain[] {
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

/** An interval of magnitudes (lo >= 0). */
interface MagnitudeInterval {
  lo: Dec;
  loInclusive: boolean;
  hi: Dec | null;
  hiInclusive: boolean;
}

function isEmpty(m: MagnitudeInterval): boolean {
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
function plainChains(m: MagnitudeInterval, leadingZeros: boolean, groupFractions: boolean): Chain[] {
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
function integerChains(a: bigint, b: bigint | null): Chain[] {
  if (a === 0n && b === null) return [[tok(ANY_DIGIT, 1, Infinity)]];
  const zeros = tok("0", 0, Infinity);
  const { pieces, unboundedFrom } = integerPieces(a, b);
  const chains = pieces.map((p) => [zeros, ...p.map(classToken)]);
  if (unboundedFrom !== null) chains.push([zeros, tok("[1-9]"), tok(ANY_DIGIT, unboundedFrom - 1, Infinity)]);
  return chains;
}

/** Spelled exponents (`+`, `-` or no sign, leading zeros, -0 == 0) in [xa, xb]; null = unbounded that way. */
function exponentChains(xa: bigint | null, xb: bigint | null): Chain[] {
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
function exponentFormChains(m: MagnitudeInterval, groupFractions: boolean): Chain[] {
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

// ---------------------------------------------------------------------------------------------------------------
// Printing chains as one regex.

interface TrieNode {
  terminal: boolean;
  edges: Map<string, { token: Token; node: TrieNode }>;
}

const newNode = (): TrieNode => ({ terminal: false, edges: new Map() });
const tokenKey = (t: Token): string => `${t.atom}\u0000${t.min}\u0000${t.max}`;

function insert(root: TrieNode, chain: Chain): void {
  let node = root;
  for (const t of chain) {
    const key = tokenKey(t);
    let edge = node.edges.get(key);
    if (edge === undefined) {
      edge = { token: t, node: newNode() };
      node.edges.set(key, edge);
    }
    node = edge.node;
  }
  node.terminal = true;
}

function quantified(atom: string, min: number, max: number): string {
  if (max === Infinity) {
    if (min === 0) return `${atom}*`;
    if (min === 1) return `${atom}+`;
    return `${atom}{${min},}`;
  }
  if (min === 0 && max === 1) return `${atom}?`;
  if (min !== max) throw new Error(`unsupported repetition {${min},${max}}`);
  const repeated = atom.repeat(min);
  const counted = `${atom}{${min}}`;
  return repeated.length <= counted.length ? repeated : counted;
}

/** Merges runs of one atom (`0*0` -> `0+`, `\d\d\d\d` -> `\d{4}`). */
function mergeRuns(tokens: Token[]): Token[] {
  const merged: Token[] = [];
  for (const t of tokens) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.atom === t.atom && last.raw === undefined && t.raw === undefined) {
      const min = last.min + t.min;
      const max = last.max + t.max;
      // Only merge into repetitions the output syntax has (`{n}`, `{n,}`).
      if (max === Infinity || min === max) {
        merged[merged.length - 1] = { atom: t.atom, min, max };
        continue;
      }
    }
    merged.push(t);
  }
  return merged;
}

function sequence(tokens: Token[]): string {
  return mergeRuns(tokens)
    .map((t) => (t.raw === undefined ? quantified(t.atom, t.min, t.max) : t.atom))
    .join("");
}

/** The tokens made optional, as one token: `x` -> `x?`, `x+` -> `x*`, anything longer -> `(?:...)?`. */
function optionalToken(tokens: Token[]): Token {
  const merged = mergeRuns(tokens);
  if (merged.length === 1) {
    const t = merged[0] as Token;
    if (t.raw === undefined && t.min === 1 && t.max === 1) return { atom: t.atom, min: 0, max: 1 };
    if (t.raw === undefined && t.min <= 1 && t.max === Infinity) return { atom: t.atom, min: 0, max: Infinity };
  }
  return rawText(`(?:${sequence(tokens)})?`);
}

const rawText = (text: string): Token => ({ atom: text, min: 1, max: 1, raw: true });

/**
 * A printed sub-pattern: a sequence of tokens (kept as tokens so that callers can still share its tail), or an
 * alternation, which needs a group before anything is concatenated to it.
 */
type Printed = { items: Token[]; alternatives?: undefined } | { alternatives: string[] };

const printedText = (p: Printed): string =>
  p.alternatives === undefined ? sequence(p.items) : p.alternatives.join("|");
const itemsOf = (p: Printed): Token[] =>
  p.alternatives === undefined ? p.items : [rawText(`(?:${p.alternatives.join("|")})`)];
const rawToken = (p: Printed): Token => rawText(sequence(itemsOf(p)));

function printChains(chains: Chain[]): Printed {
  const root = newNode();
  for (const c of chains) insert(root, c);
  return new Printer().node(root);
}

/** A path out of a node down to the next node that branches or ends. */
interface Alt {
  tokens: Token[];
  rest: TrieNode;
}

/**
 * Prints a trie. Prefixes are shared by construction; in addition, branches that end alike have their common
 * tail pulled out (`\d|[1-9]\d` -> `[1-9]?\d`, `0[1-9]\d*|[1-9]\d*` -> `0?[1-9]\d*`), and a branch that is
 * optional in front of what its siblings already match becomes `(?:x)?rest`. Both rewrites are language
 * identities (the second is applied only when the printed texts are equal), so the matched set stays exact.
 */
class Printer {
  private readonly memo = new Map<TrieNode, Printed>();

  node(n: TrieNode): Printed {
    let p = this.memo.get(n);
    if (p === undefined) {
      p = this.branch(n.terminal, this.alts(n));
      this.memo.set(n, p);
    }
    return p;
  }

  private alts(n: TrieNode): Alt[] {
    return [...n.edges.values()].map(({ token, node }) => {
      const tokens = [token];
      let rest = node;
      while (!rest.terminal && rest.edges.size === 1) {
        const only = rest.edges.values().next().value as { token: Token; node: TrieNode };
        tokens.push(only.token);
        rest = only.node;
      }
      return { tokens, rest };
    });
  }

  private branch(terminal: boolean, alts: Alt[]): Printed {
    if (alts.length === 0) return { items: [] };
    // x? in front: the node matches rest(x) | x rest(x). Bounded search keeps this polynomial.
    if (terminal && alts.length <= 4) {
      for (let i = 0; i < alts.length; i++) {
        const alt = alts[i] as Alt;
        const rest = this.node(alt.rest);
        const others = this.branch(
          true,
          alts.filter((_, j) => j !== i),
        );
        if (printedText(rest) === printedText(others)) return { items: [optionalToken(alt.tokens), ...itemsOf(rest)] };
      }
    }
    // Group the alternatives by their last token and pull the common tail of each group out.
    const groups = new Map<string, Token[][]>();
    for (const alt of alts) {
      const items = [...alt.tokens, ...itemsOf(this.node(alt.rest))];
      const key = tokenKey(items[items.length - 1] as Token);
      const g = groups.get(key);
      if (g === undefined) groups.set(key, [items]);
      else g.push(items);
    }
    const parts = [...groups.values()].map((members): Token[] => {
      if (members.length === 1) return members[0] as Token[];
      const first = members[0] as Token[];
      const shortest = Math.min(...members.map((m) => m.length));
      let shared = 0;
      while (
        shared < shortest &&
        members.every((m) => tokenKey(m[m.length - 1 - shared] as Token) === tokenKey(first[first.length - 1 - shared] as Token))
      ) {
        shared++;
      }
      // The heads are shorter than the members, so printing them recursively terminates.
      const heads = printChains(members.map((m) => m.slice(0, m.length - shared)));
      return [...itemsOf(heads), ...first.slice(first.length - shared)];
    });
    if (terminal) {
      if (parts.length === 1) return { items: [optionalToken(parts[0] as Token[])] };
      return { items: [rawText(`(?:${parts.map(sequence).join("|")})?`)] };
    }
    if (parts.length === 1) return { items: parts[0] as Token[] };
    return { alternatives: parts.map(sequence) };
  }
}

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
