/**
 * Exact decimals and ranges for common/range-pattern.ts: a spelling's exact value (no binary rounding),
 * comparisons, a bucket's bin as a range, and which bin holds a spelled value.
 */
import { bucketDefinitionProblem, type BucketDefinition } from "../buckets.ts";

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
export interface Dec {
  neg: boolean;
  digits: string;
  exp: bigint;
}

export const ZERO: Dec = { neg: false, digits: "", exp: 0n };
export const SPELLING = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

export function parseSpelling(text: string): Dec | undefined {
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

export function isZero(d: Dec): boolean {
  return d.digits === "";
}

/** floor(log10 |d|) for d != 0: the X of the decade [10^X, 10^(X+1)) holding |d|. */
export function decade(d: Dec): bigint {
  return BigInt(d.digits.length) - 1n + d.exp;
}

/** Compares |a| and |b|. */
export function compareMagnitude(a: Dec, b: Dec): number {
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

export function compare(a: Dec, b: Dec): number {
  const sa = isZero(a) ? 0 : a.neg ? -1 : 1;
  const sb = isZero(b) ? 0 : b.neg ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return sa * compareMagnitude(a, b);
}

export function abs(d: Dec): Dec {
  return { ...d, neg: false };
}

export function pow10(x: bigint): Dec {
  return { neg: false, digits: "1", exp: x };
}

/** d * 10^-x */
export function shiftDown(d: Dec, x: bigint): Dec {
  return isZero(d) ? d : { ...d, exp: d.exp - x };
}

/** Digits after the decimal point in the shortest plain spelling of d. */
export function fractionDigits(d: Dec): number {
  return d.exp < 0n ? Number(-d.exp) : 0;
}

/** |d| * 10^k as an integer; k must be at least fractionDigits(d). */
export function scaled(d: Dec, k: number): bigint {
  return isZero(d) ? 0n : BigInt(d.digits) * 10n ** (d.exp + BigInt(k));
}

export function plainText(d: Dec): string {
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

export interface Range {
  lo: Dec;
  hi: Dec | null;
  hiInclusive: boolean;
}

/**
 * Pattern sizes grow with the digits of the bounds; every finite JS number spells in at most ~330 plain digits,
 * so a bound beyond this is a mistake (and `1e999999999` must not allocate a billion digits).
 */
export const MAX_BOUND_DECADE = 1100n;

export function parseBound(text: string, what: string): Dec {
  const d = parseSpelling(text);
  if (d === undefined) throw new RangeError(`${what} is not a decimal spelling: ${JSON.stringify(text)}`);
  if (!isZero(d) && (decade(d) > MAX_BOUND_DECADE || decade(d) < -MAX_BOUND_DECADE || d.digits.length > 1100)) {
    throw new RangeError(`${what} is too large or too small: ${JSON.stringify(text)}`);
  }
  return d;
}

export function parseRange(range: DecimalRange): Range {
  return {
    lo: parseBound(range.lo, "range.lo"),
    hi: range.hi === null ? null : parseBound(range.hi, "range.hi"),
    hiInclusive: range.hiInclusive,
  };
}

export function contains(r: Range, v: Dec): boolean {
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

export function checkDefinition(definition: BucketDefinition): void {
  const problem = bucketDefinitionProblem(definition);
  if (problem !== undefined) throw new RangeError(`invalid bucket definition: ${problem}`);
}

/** The bin of labels[i] in a valid definition. */
export function binAt(definition: BucketDefinition, i: number): DecimalRange {
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
