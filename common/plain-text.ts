/**
 * Text a contract can rebuild byte for byte inside a JSON string (a revocation's reason): JSON.stringify
 * writes it as it is, with no escape. Quotes, backslashes and control characters are escaped by JSON, and
 * half of a UTF-16 surrogate pair becomes a \u escape, so none of them may appear.
 */
const ESCAPED = /["\\\u0000-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const PLAIN_TEXT_RULE = "plain text only: no quotes, backslashes or control characters";

export function isPlainText(text: string): boolean {
  return !ESCAPED.test(text) && !LONE_SURROGATE.test(text);
}
