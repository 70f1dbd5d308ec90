/**
 * zod building blocks for configuration read from the environment. Every process validates its
 * configuration once at start with these, so a port, a flag or an address means the same everywhere.
 */
import type { Address } from "viem";
import { z } from "zod";

/** A TCP port; 0 lets a listener pick a free one. */
export const portSchema = z.coerce.number().int().min(0).max(65535);

export const httpUrlSchema = z.url({ protocol: /^https?$/ });

/** `on`/`off` and the usual spellings; an empty value is off. */
export const flagSchema = z
  .enum(["on", "off", "true", "false", "1", "0", "yes", "no", ""])
  .transform((v) => v === "on" || v === "true" || v === "1" || v === "yes");

/** An address as configured, casing kept (checksummed addresses print as the operator wrote them). */
export const configAddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte hex address")
  .transform((value) => value as Address);
