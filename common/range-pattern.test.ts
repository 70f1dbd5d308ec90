import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bucketOf, type BucketDefinition } from "./buckets.ts";
import {
  binRange,
  bucketOfSpelling,
  numberRangePattern,
  spellingInRange,
  type DecimalRange,
} from "./range-pattern.ts";

// RE2 exactly as attestor-core builds it (flags "sgiu"; "g" makes test() stateful, hence lastIndex = 0).
interface Re2Regex {
  lastIndex: number;
  test(text: string): boolean;
}
const RE2 = createRequire(import.meta.url)("re2") as new (pattern: string, flags: string) => Re2Regex;

function matchers(pattern: string): (text: string) => { js: boolean; re2: boolean } {
  const js = new RegExp(`^(?:${pattern})$`, "su");
  const re2 = new RE2(`^(?:${pattern})$`, "sgiu");
  return (text) => {
    re2.lastIndex = 0;
    return { js: js.test(text), re2: re2.test(text) };
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Oracle, written independently of the implementation: a spelling is the rational n * 10^e (n signed bigint).

interface Exact {
  n: bigint;
  e: number;
}
const GRAMMAR = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

function exactOf(text: string): Exact | undefined {
  const m = GRAMMAR.exec(text);
  if (m === null) return undefined;
  const frac = m[3] ?? "";
  return { n: BigInt(`${m[1]}${m[2]}${frac}`), e: Number(m[4] ?? "0") - frac.length };
}

function cmp(a: Exact, b: Exact): number {
  const e = Math.min(a.e, b.e);
  const x = a.n * 10n ** BigInt(a.e - e);
  const y = b.n * 10n ** BigInt(b.e - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

interface OracleRange {
  lo: Exact;
  hi: Exact | null;
  hiInclusive: boolean;
}

function inRange(v: Exact, r: OracleRange): boolean {
  if (cmp(v, r.lo) < 0) return false;
  if (r.hi === null) return true;
  const c = cmp(v, r.hi);
  return c < 0 || (c === 0 && r.hiInclusive);
}

const exactOfNumber = (x: number): Exact => exactOf(String(x)) as Exact;

/** The bin of label i, straight from the rules in DECISIONS.md section 4. */
function oracleBin(def: BucketDefinition, i: number): OracleRange {
  const b = def.boundaries;
  const lo = exactOfNumber(b[i] as number);
  if (i === b.length - 1) return { lo, hi: null, hiInclusive: false };
  return { lo, hi: exactOfNumber(b[i + 1] as number), hiInclusive: def.labels.length === b.length - 1 && i === def.labels.length - 1 };
}

const toRange = (r: OracleRange): DecimalRange => ({
  lo: plain(r.lo),
  hi: r.hi === null ? null : plain(r.hi),
  hiInclusive: r.hiInclusive,
});

/** Covered shapes: no exponent, normalized mantissa with exponent, or zero mantissa with exponent. */
const COVERED = /^-?(?:[0-9]+(?:\.[0-9]+)?|[1-9](?:\.[0-9]+)?[eE][+-]?[0-9]+|0+(?:\.0+)?[eE][+-]?[0-9]+)$/;

// ---------------------------------------------------------------------------------------------------------------
// Spelling an exact value in many ways.

function strip(v: Exact): Exact {
  if (v.n === 0n) return { n: 0n, e: 0 };
  let { n, e } = v;
  while (n % 10n === 0n) {
    n /= 10n;
    e++;
  }
  return { n, e };
}

/** Plain spelling with `lz` extra leading zeros and `tz` extra trailing fraction zeros. */
function plain(v: Exact, lz = 0, tz = 0, negZero = false): string {
  const neg = v.n < 0n || (v.n === 0n && negZero);
  const digits = (v.n < 0n ? -v.n : v.n).toString();
  let int: string;
  let frac: string;
  if (v.e >= 0) {
    int = digits + "0".repeat(v.e);
    frac = "";
  } else {
    const padded = digits.padStart(-v.e + 1, "0");
    int = padded.slice(0, padded.length + v.e);
    frac = padded.slice(padded.length + v.e);
  }
  int = int.replace(/^0+(?=.)/, "");
  frac += "0".repeat(tz);
  return `${neg ? "-" : ""}${"0".repeat(lz)}${int}${frac === "" ? "" : `.${frac}`}`;
}

interface ExpStyle {
  upper: boolean;
  plus: boolean;
  zeros: number;
  minusZero: boolean;
}

function exponent(x: number, s: ExpStyle): string {
  const sign = x < 0 ? "-" : x === 0 && s.minusZero ? "-" : s.plus ? "+" : "";
  return `${s.upper ? "E" : "e"}${sign}${"0".repeat(s.zeros)}${Math.abs(x)}`;
}

/** Scientific normal form d.ddd e X (v != 0). */
function scientific(v: Exact, tz: number, s: ExpStyle): string {
  const { n, e } = strip(v);
  const digits = (n < 0n ? -n : n).toString();
  const x = digits.length - 1 + e;
  const rest = digits.slice(1) + "0".repeat(tz);
  return `${n < 0n ? "-" : ""}${digits[0]}${rest === "" ? "" : `.${rest}`}${exponent(x, s)}`;
}

/** A mantissa that is not in normal form: the exponent is shifted and the mantissa rescaled. */
function shifted(v: Exact, shift: number, lz: number, tz: number, s: ExpStyle): string {
  const { n, e } = strip(v);
  const x = (n < 0n ? -n : n).toString().length - 1 + e + shift;
  return plain({ n, e: e - x }, lz, tz) + exponent(x, s);
}

function zeroSpelling(minus: boolean, ints: number, fracZeros: number, exp: number | null, s: ExpStyle): string {
  return `${minus ? "-" : ""}${"0".repeat(ints)}${fracZeros > 0 ? `.${"0".repeat(fracZeros)}` : ""}${exp === null ? "" : exponent(exp, s)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Generators

const boundaryArb = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.tuple(fc.integer({ min: -100_000_000, max: 100_000_000 }), fc.integer({ min: 1, max: 4 })).map(([n, j]) => n / 10 ** j),
  fc.integer({ min: -9, max: 22 }).map((x) => Number(`1e${x}`)),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-7, -1e-7, 0.1, 0.001, 0.01, 100, 1000, 10000, -50.5, 2.5e21, -1e21, 123456789012.5, 2 ** 53),
);

const definitionArb = fc
  .record({ values: fc.array(boundaryArb, { minLength: 1, maxLength: 5 }), open: fc.boolean() })
  .map(({ values, open }): BucketDefinition => {
    const sorted = [...values].sort((a, b) => a - b).filter((x, i, xs) => i === 0 || x > (xs[i - 1] as number));
    const count = open || sorted.length === 1 ? sorted.length : sorted.length - 1;
    return { boundaries: sorted, labels: Array.from({ length: count }, (_, i) => `L${i}`) };
  });

const expStyleArb = fc.record({
  upper: fc.boolean(),
  plus: fc.boolean(),
  zeros: fc.integer({ min: 0, max: 2 }),
  minusZero: fc.boolean(),
});

const spellSpecArb = fc.record({
  base: fc.nat(),
  delta: fc.option(
    fc.record({
      sign: fc.constantFrom(-1n, 1n),
      mult: fc.bigInt({ min: 1n, max: 99n }),
      exp: fc.integer({ min: -25, max: 22 }),
    }),
  ),
  random: fc.record({ n: fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }), e: fc.integer({ min: -30, max: 10 }) }),
  form: fc.constantFrom("plain", "plain", "scientific", "scientific", "shifted", "zero"),
  lz: fc.integer({ min: 0, max: 3 }),
  tz: fc.integer({ min: 0, max: 3 }),
  negZero: fc.boolean(),
  shift: fc.integer({ min: -4, max: 4 }),
  zeroExp: fc.option(fc.integer({ min: -30, max: 30 })),
  style: expStyleArb,
});
type SpellSpec = typeof spellSpecArb extends fc.Arbitrary<infer T> ? T : never;

function valueOf(spec: SpellSpec, bases: Exact[]): Exact {
  const all = [...bases, { n: 0n, e: 0 }, spec.random];
  const base = all[spec.base % all.length] as Exact;
  if (spec.delta === null) return base;
  const d: Exact = { n: spec.delta.sign * spec.delta.mult, e: spec.delta.exp };
  const e = Math.min(base.e, d.e);
  return { n: base.n * 10n ** BigInt(base.e - e) + d.n * 10n ** BigInt(d.e - e), e };
}

function spell(spec: SpellSpec, v: Exact): string {
  switch (spec.form) {
    case "plain":
      return plain(v, spec.lz, spec.tz, spec.negZero);
    case "scientific":
      return v.n === 0n ? plain(v, spec.lz, spec.tz, spec.negZero) : scientific(v, spec.tz, spec.style);
    case "shifted":
      return v.n === 0n ? plain(v, spec.lz, spec.tz, spec.negZero) : shifted(v, spec.shift, spec.lz, spec.tz, spec.style);
    default:
      return zeroSpelling(spec.negZero, spec.lz + 1, spec.tz, spec.zeroExp, spec.style);
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** Like expect(actual).toEqual(expected), without vitest's cost on the (hot) passing path. */
function same<T extends Record<string, unknown>>(actual: T, expected: T): void {
  if (Object.keys(expected).some((k) => actual[k] !== expected[k])) expect(actual).toEqual(expected);
}

function assertPattern(pattern: string): void {
  expect(pattern).not.toContain("{{");
  expect(pattern).not.toContain("(?=");
  expect(pattern).not.toContain("(?!");
  expect(pattern).not.toContain("(?<");
  expect(pattern).not.toContain("\\1");
  expect(pattern).not.toMatch(/\((?!\?:)/); // every group is non-capturing
  expect(pattern).not.toMatch(/\{\d*,\d+\}/); // only {n} and {n,}
}

const closed: BucketDefinition = { boundaries: [0, 100, 1000, 10000], labels: ["small", "medium", "large"] };
const open: BucketDefinition = { boundaries: [0, 100, 1000, 10000], labels: ["s", "m", "l", "xl"] };
const signed: BucketDefinition = { boundaries: [-50.5, 0, 0.001, 0.01], labels: ["neg", "tiny", "small", "rest"] };

const NON_SPELLINGS = [
  "1.", ".5", "+5", "1e", "--1", "0x10", "1_000", "Infinity", "NaN", "1,5", " 5", "5 ", "5\n", "", "-", "e5",
  "1e+", "1.5.5", "-.5", "1e5.5", "１", "١", "0.5e", "5e--1",
];

describe("binRange", () => {
  it.each([
    [closed, "small", { lo: "0", hi: "100", hiInclusive: false }],
    [closed, "large", { lo: "1000", hi: "10000", hiInclusive: true }],
    [open, "l", { lo: "1000", hi: "10000", hiInclusive: false }],
    [open, "xl", { lo: "10000", hi: null, hiInclusive: false }],
    [signed, "neg", { lo: "-50.5", hi: "0", hiInclusive: false }],
    [{ boundaries: [-0, 1e-7], labels: ["a", "b"] }, "b", { lo: "0.0000001", hi: null, hiInclusive: false }],
    [{ boundaries: [5], labels: ["any"] }, "any", { lo: "5", hi: null, hiInclusive: false }],
  ])("%j %s", (def, label, expected) => {
    expect(binRange(def, label)).toEqual(expected);
  });

  it("returns undefined for an unknown label and throws on an invalid definition", () => {
    expect(binRange(closed, "nope")).toBeUndefined();
    expect(() => binRange({ boundaries: [1, 0], labels: ["a"] }, "a")).toThrow();
  });
});

describe("numberRangePattern: table", () => {
  const bins: [string, BucketDefinition, string][] = [
    ["[0, 100)", closed, "small"],
    ["[100, 1000)", closed, "medium"],
    ["[1000, 10000]", closed, "large"],
    ["[10000, +inf)", open, "xl"],
    ["[-50.5, 0)", signed, "neg"],
    ["[0.001, 0.01)", signed, "small"],
  ];
  const cases: Record<string, [string, boolean][]> = {
    "[0, 100)": [
      ["0", true], ["-0", true], ["-0.000", true], ["000", true], ["0e5", true], ["-0.0E-3", true], ["0.0e+0", true],
      ["0099.5", true], ["99.99999999999999999999", true], ["100", false], ["100.000000000000000000001", false],
      ["1e2", false], ["9.99e1", true], ["1.5e+01", true], ["1e-5", true], ["-1e-5", false], ["-0.0001", false],
      ["99", true], ["5", true], ["50.25", true], ["-1", false],
    ],
    "[100, 1000)": [
      ["100", true], ["1000", false], ["99.99999999999999999999", false], ["100.000000000000000000001", true],
      ["999.9999999999999999999", true], ["0099.5", false], ["0100.5", true], ["1e2", true], ["1.0e+02", true],
      ["9.99e2", true], ["9.99E2", true], ["1e3", false], ["1.0e+03", false], ["1.5e003", false], ["43.2e2", false],
      ["-0", false], ["-100", false], ["100.0", true], ["1000.0", false],
    ],
    "[1000, 10000]": [
      ["1000", true], ["10000", true], ["10000.000", true], ["10000.0000001", false], ["00010000", true],
      ["999.999", false], ["1e3", true], ["1.0e+03", true], ["1e4", true], ["1.0000e4", true], ["1.00001e4", false],
      ["9.99e2", false], ["1.5E3", true], ["1.5e003", true], ["9999.9999999999999999", true], ["10001", false],
    ],
    "[10000, +inf)": [
      ["10000", true], ["9999.999", false], ["1e21", true], ["1e400", true], ["1.5E+4", true], ["9.9999e3", false],
      ["123456789012345678901234567890", true], ["-10000", false], ["1e4", true], ["0", false], ["9.99e3", false],
    ],
    "[-50.5, 0)": [
      ["-50.5", true], ["-50.50", true], ["-50.5000001", false], ["-50.4999", true], ["-0.0000000001", true],
      ["-0", false], ["0", false], ["-0e1", false], ["-5.05e1", true], ["-5.0500e+01", true], ["-5.051e1", false],
      ["-1e-300", true], ["-50", true], ["-050.5", true], ["50", false], ["-51", false], ["-1E0", true],
    ],
    "[0.001, 0.01)": [
      ["0.001", true], ["0.0010", true], ["0.00099999", false], ["0.01", false], ["0.00999999999999999999", true],
      ["1e-3", true], ["1E-03", true], ["9.99e-3", true], ["1e-2", false], ["000.005", true], ["0.0009", false],
      ["0", false], ["-0.005", false],
    ],
  };

  it.each(bins)("%s", (name, def, label) => {
    const range = binRange(def, label) as DecimalRange;
    const pattern = numberRangePattern(range);
    assertPattern(pattern);
    const match = matchers(pattern);
    for (const [text, expected] of cases[name] ?? []) {
      expect({ text, ...match(text) }).toEqual({ text, js: expected, re2: expected });
      expect({ text, inRange: spellingInRange(text, range) }).toEqual({ text, inRange: expected });
      expect({ text, bucket: bucketOfSpelling(text, def) === label }).toEqual({ text, bucket: expected });
    }
    for (const text of NON_SPELLINGS) {
      expect({ text, ...match(text) }).toEqual({ text, js: false, re2: false });
      expect(spellingInRange(text, range)).toBe(false);
    }
  });

  it("non-normalized exponent spellings never match, even in range", () => {
    const range = binRange(closed, "medium") as DecimalRange;
    const match = matchers(numberRangePattern(range));
    for (const text of ["43.2e1", "0.5e3", "00.1e3", "10e1", "0.1e3", "4320e-1"]) {
      expect(spellingInRange(text, range)).toBe(true);
      expect({ text, ...match(text) }).toEqual({ text, js: false, re2: false });
    }
  });

  it("an empty range matches nothing", () => {
    const pattern = numberRangePattern({ lo: "5", hi: "5", hiInclusive: false });
    const match = matchers(pattern);
    for (const text of ["5", "", "0", "-0"]) expect(match(text)).toEqual({ js: false, re2: false });
  });

  it("a single point", () => {
    const match = matchers(numberRangePattern({ lo: "-2.5", hi: "-2.5", hiInclusive: true }));
    expect(match("-2.50")).toEqual({ js: true, re2: true });
    expect(match("-2.5e0")).toEqual({ js: true, re2: true });
    expect(match("-2.51")).toEqual({ js: false, re2: false });
  });

  it("is deterministic", () => {
    const range = binRange(signed, "neg") as DecimalRange;
    expect(numberRangePattern({ ...range })).toBe(numberRangePattern(range));
  });
});

/**
 * The properties are CPU-bound (thousands of patterns compiled by RE2 and by JavaScript): one took 46 s
 * alone on a loaded two-core machine and 144 s beside npm test's other suites, past the default 60 s. The
 * time is the work, not a wait, so it gets room rather than fewer runs.
 */
const PROPERTY = { timeout: 300_000 };

describe("numberRangePattern: properties", () => {
  it("matches exactly the covered spellings in range and nothing outside it", PROPERTY, () => {
    fc.assert(
      fc.property(definitionArb, fc.nat(), fc.array(spellSpecArb, { minLength: 24, maxLength: 24 }), (def, pick, specs) => {
        const index = pick % def.labels.length;
        const bin = oracleBin(def, index);
        const range = binRange(def, def.labels[index] as string) as DecimalRange;
        expect(toRange(bin)).toEqual(range);
        const pattern = numberRangePattern(range);
        assertPattern(pattern);
        const match = matchers(pattern);
        const bases = [bin.lo, ...(bin.hi === null ? [] : [bin.hi]), ...def.boundaries.map(exactOfNumber)];
        for (const spec of specs) {
          const text = spell(spec, valueOf(spec, bases));
          const v = exactOf(text);
          if (v === undefined) expect.fail(`generated a non-spelling ${text}`);
          const expected = inRange(v, bin);
          const got = match(text);
          same({ text, re2: got.re2 }, { text, re2: got.js });
          if (COVERED.test(text)) same({ text, pattern, match: got.js }, { text, pattern, match: expected });
          else if (got.js) same({ text, pattern, inRange: expected }, { text, pattern, inRange: true });
          same({ text, inRange: spellingInRange(text, range) }, { text, inRange: expected });
        }
      }),
      { numRuns: 2500 },
    );
  });

  it("never matches text that is not a spelling, nor a spelling out of range", PROPERTY, () => {
    const unit = fc.constantFrom(..."0123456789.-+eE x,_".split(""), "0", "0", "1", "5", "9", ".", "e");
    fc.assert(
      fc.property(definitionArb, fc.nat(), fc.array(fc.string({ unit, maxLength: 14 }), { minLength: 30, maxLength: 30 }), (def, pick, texts) => {
        const index = pick % def.labels.length;
        const bin = oracleBin(def, index);
        const match = matchers(numberRangePattern(toRange(bin)));
        for (const text of texts) {
          const got = match(text);
          same({ text, re2: got.re2 }, { text, re2: got.js });
          if (got.js) {
            const v = exactOf(text);
            same({ text, spelling: v !== undefined }, { text, spelling: true });
            same({ text, inRange: v !== undefined && inRange(v, bin) }, { text, inRange: true });
          }
        }
      }),
      { numRuns: 1500 },
    );
  });
});

describe("bucketOfSpelling", () => {
  it("agrees with bucketOf(Number(text)) for spellings of at most 15 significant digits", PROPERTY, () => {
    const valueArb = fc.record({ n: fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), e: fc.integer({ min: -25, max: 15 }) });
    fc.assert(
      fc.property(definitionArb, fc.array(fc.tuple(spellSpecArb, valueArb), { minLength: 10, maxLength: 10 }), (def, items) => {
        for (const [spec, random] of items) {
          const v = valueOf({ ...spec, random }, def.boundaries.map(exactOfNumber));
          if (strip(v).n.toString().replace("-", "").length > 15) continue;
          const text = spell(spec, v);
          same({ text, bucket: bucketOfSpelling(text, def) }, { text, bucket: bucketOf(Number(text), def) });
        }
      }),
      { numRuns: 1500 },
    );
  });

  it.each([
    ["-0", "small"], ["99.99999999999999999999", "small"], ["100", "medium"], ["1e3", "large"], ["10000", "large"],
    ["10000.0000001", undefined], ["-1", undefined], ["abc", undefined], ["1.0e+04", "large"],
  ])("%s -> %s", (text, label) => {
    expect(bucketOfSpelling(text, closed)).toBe(label);
  });
});
