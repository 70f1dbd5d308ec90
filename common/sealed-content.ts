/**
 * What `encrypted_data` holds (DECISIONS.md section 5): the schema's data keys as found in the provider's
 * JSON body, whatever their type, and the bucketed field's value. Made the same way by the api and by a
 * user who seals on its own machine.
 */

/** Any JSON value at a dot path, or null when absent. */
export function valueAtPath(body: unknown, path: string): unknown {
  let current: unknown = body;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? null : current;
}

/** The plaintext to seal: `{<data key>: value, ..., <field>: value}` as UTF-8 JSON. */
export function sealedContent(body: unknown, dataKeys: readonly string[], field: string, value: number): Uint8Array {
  const content: Record<string, unknown> = {};
  for (const dataKey of dataKeys) content[dataKey] = valueAtPath(body, dataKey);
  content[field] = value;
  return new TextEncoder().encode(JSON.stringify(content));
}
