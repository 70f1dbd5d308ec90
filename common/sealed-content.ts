/**
 * What `encrypted_data` holds (DECISIONS.md section 5): the schema's data keys as found in the provider's
 * JSON body, whatever their type, and the bucketed field's value. Made the same way by the api and by a
 * user who seals on its own machine.
 *
 * Two forms, both UTF-8 JSON. Since issue 37, for a schema with one bucket field, the **values** alone,
 * `[<data key 1>, ..., <data key n>, <field>]`: the schema names them (its `dataKeys`, then its one field),
 * so the names need not be sealed nor sent on chain. A schema with several bucket fields keeps the
 * **named** object `{<data key>: value, ..., <field>: value}` (an array would not say which field), and so
 * does every seal made before. Openers name the values with the schema (`namedContent`).
 */
import { bytesToUtf8 } from "./hex.ts";
import type { SchemaContent } from "./ids.ts";
import type { SchemaDetail } from "./wire.ts";

/** Any JSON value at a dot path, or null when absent. */
export function valueAtPath(body: unknown, path: string): unknown {
  let current: unknown = body;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? null : current;
}

/** What names a claim's sealed values: the schema's data keys and its bucket fields. */
export interface ContentSchema {
  dataKeys: readonly string[];
  bucketFields: readonly string[];
}

/** What names a schema's sealed values, from its rollup view (`provider_schema`) or from its registered content. */
export function contentSchemaOf(schema: Pick<SchemaDetail, "data_keys" | "bucket_definitions"> | Pick<SchemaContent, "dataKeys" | "bucketDefinitions">): ContentSchema {
  return "data_keys" in schema
    ? { dataKeys: schema.data_keys, bucketFields: Object.keys(schema.bucket_definitions) }
    : { dataKeys: schema.dataKeys, bucketFields: Object.keys(schema.bucketDefinitions) };
}

/** The names of the values form, in order, or undefined when the schema seals the named object. */
export function contentNames(schema: ContentSchema): string[] | undefined {
  const [field, ...others] = schema.bucketFields;
  return field === undefined || others.length > 0 ? undefined : [...schema.dataKeys, field];
}

/** The plaintext to seal for `field` = `value` (see the top of this file for its two forms). */
export function sealedContent(body: unknown, schema: ContentSchema, field: string, value: number): Uint8Array {
  if (contentNames(schema) !== undefined) {
    return new TextEncoder().encode(JSON.stringify([...schema.dataKeys.map((key) => valueAtPath(body, key)), value]));
  }
  const content: Record<string, unknown> = {};
  for (const dataKey of schema.dataKeys) content[dataKey] = valueAtPath(body, dataKey);
  content[field] = value;
  return new TextEncoder().encode(JSON.stringify(content));
}

/** Why an opened plaintext is not a claim's content: fixed text, never a part of the plaintext. */
export type ContentProblem = "plaintext is not UTF-8" | "plaintext is not JSON" | "plaintext is not a JSON object" | "the values do not match the schema's names";

/**
 * An opened plaintext as the named object: the named form as it is; the values form named by the schema
 * (`{dataKey: value, ..., field: value}`, as the named form would have held them). Without a schema (or
 * with one that seals the named object) only the named form is accepted.
 */
export function namedContent(plaintext: Uint8Array, schema?: ContentSchema): { ok: true; value: Record<string, unknown> } | { ok: false; problem: ContentProblem } {
  let text: string;
  try {
    text = bytesToUtf8(plaintext);
  } catch {
    return { ok: false, problem: "plaintext is not UTF-8" };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "plaintext is not JSON" };
  }
  if (Array.isArray(value)) {
    const names = schema === undefined ? undefined : contentNames(schema);
    if (names === undefined) return { ok: false, problem: "plaintext is not a JSON object" };
    if (names.length !== value.length) return { ok: false, problem: "the values do not match the schema's names" };
    const named: Record<string, unknown> = {};
    names.forEach((name, i) => {
      named[name] = value[i];
    });
    return { ok: true, value: named };
  }
  if (value === null || typeof value !== "object") return { ok: false, problem: "plaintext is not a JSON object" };
  return { ok: true, value: value as Record<string, unknown> };
}
