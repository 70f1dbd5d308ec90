import type { Address } from "viem";
import { z } from "zod";

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

export function isAddress(value: unknown): value is Address {
  return typeof value === "string" && ADDRESS_RE.test(value);
}

/**
 * Addresses are compared case-insensitively and always stored and returned lower-cased: one form
 * that indexes, compares and hashes the same whatever checksum casing a client used.
 */
export function normalizeAddress(value: string): Address {
  return value.toLowerCase() as Address;
}

export const addressSchema = z
  .string()
  .regex(ADDRESS_RE, "expected a 0x-prefixed 20-byte hex address")
  .transform((value) => normalizeAddress(value));
