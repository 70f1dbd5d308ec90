/** zod pieces shared by the input kinds, with the size limits that keep one input bounded. */
import type { Hex } from "viem";
import { z } from "zod";
import { bucketDefinitionProblem } from "../../common/buckets.ts";

export const LIMITS = {
  shortText: 256,
  description: 4096,
  bucketFields: 32,
  boundaries: 64,
  label: 64,
  dataKeys: 64,
  /** Bytes of encrypted_data: the sealed values of a schema's data keys. */
  encryptedData: 16 * 1024,
} as const;

export const shortText = z.string().min(1).max(LIMITS.shortText);

/** A 32-byte id (schema_id, grant_id), lower-cased. */
export const bytes32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex id")
  .transform((v) => v.toLowerCase() as Hex);

export const fieldName = z.string().min(1).max(LIMITS.shortText);

const NACL_BOX_PUBLIC_KEY_BYTES = 32;

/** A NaCl public key in canonical base64 only, so one key has one textual form and one id. */
export const naclPublicKey = z
  .string()
  .max(64)
  .transform((text, ctx) => {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length !== NACL_BOX_PUBLIC_KEY_BYTES || bytes.toString("base64") !== text) {
      ctx.addIssue({ code: "custom", message: `expected the base64 of a ${NACL_BOX_PUBLIC_KEY_BYTES}-byte NaCl public key` });
      return z.NEVER;
    }
    return new Uint8Array(bytes);
  });

/**
 * A map keyed by bucket field names. zod drops a `__proto__` key without a word; the sender would
 * think it set a field, so it is refused instead.
 */
export function fieldRecord<V extends z.ZodType>(value: V) {
  return z
    .unknown()
    .refine((input) => typeof input !== "object" || input === null || !Object.hasOwn(input, "__proto__"), {
      message: "__proto__ is not a field name",
      path: ["__proto__"],
    })
    .pipe(z.record(fieldName, value));
}

export const bucketDefinition = z
  .strictObject({
    boundaries: z.array(z.number()).max(LIMITS.boundaries),
    labels: z.array(z.string().max(LIMITS.label)).max(LIMITS.boundaries),
  })
  .superRefine((def, ctx) => {
    const problem = bucketDefinitionProblem(def);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const bucketDefinitions = fieldRecord(bucketDefinition)
  .refine((defs) => Object.keys(defs).length <= LIMITS.bucketFields, `at most ${LIMITS.bucketFields} fields`);
