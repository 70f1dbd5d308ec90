/**
 * Picks the claimed value out of a provider's JSON body (DECISIONS.md section 5). The value is private
 * (it is sealed, and only its bucket is public), so no error ever carries it: only what kind it was.
 */
import { ApiError } from "../errors.ts";

// Plain decimal: optional sign, digits with an optional fraction, optional exponent. No hex, no
// Infinity/NaN, no separators, nothing empty.
const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INDEX_RE = /^(?:0|[1-9]\d*)$/;

/** The kind of a JSON value as errors may name it (`typeof` would call arrays and null "object"). */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function invalid(path: string, received: string): ApiError {
  return new ApiError("PROVIDER_INVALID_RESPONSE", `provider response has no number at ${path}`, {
    expected: `a number at ${path}`,
    received,
  });
}

/** Follows `a.b.0.c`: object members by name (own members only), array elements by decimal index. */
function lookupPath(body: unknown, path: string): { found: true; value: unknown } | { found: false } {
  let current: unknown = body;
  for (const segment of path.split(".")) {
    if (Array.isArray(current)) {
      if (!INDEX_RE.test(segment)) return { found: false };
      const index = Number(segment);
      if (index >= current.length) return { found: false };
      current = current[index];
    } else if (current !== null && typeof current === "object") {
      // Own members only, so `constructor` or `__proto__` never reach Object.prototype.
      if (!Object.hasOwn(current, segment)) return { found: false };
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

export function readNumericField(body: unknown, path: string): number {
  const hit = lookupPath(body, path);
  if (!hit.found) throw invalid(path, "missing");
  const { value } = hit;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (DECIMAL_RE.test(trimmed)) {
      const n = Number(trimmed);
      if (Number.isFinite(n)) return n;
    }
  }
  throw invalid(path, kindOf(value));
}
