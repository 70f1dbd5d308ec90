/**
 * One field of a provider's HTTPS answer, read the same way by the two ends of a proven claim
 * (docs/provider.md#what-the-attestor-sees):
 *
 * - the prover, which holds the whole answer, decides what the attestor may see (`revealPlan`): the
 *   status line, header names and the headers that frame the body, and the body's skeleton (its
 *   brackets, commas, colons, whitespace and keys) with every value hidden except the proven one;
 * - the attestor, which sees that answer with every hidden byte replaced by `*`, reads the field from it
 *   (`readRevealedField`) and signs nothing it cannot read unambiguously.
 *
 * Why the attestor needs more than attestor-core's own regex check: attestor-core deletes every run of
 * three or more hidden bytes before matching, so a prover that hid the tail of a number (`4321.987` shown
 * as `432`), a digit in the middle, or the bytes between a key and another key's value got a signature
 * for a number the server never sent. Here a hidden run stands for one whole JSON value or nothing: a
 * partly hidden number, key or string is refused, as is any shape that does not parse as JSON with whole
 * values hidden, a path that is missing or named twice, and a body whose length cannot be counted. What
 * is left is sound for a server that sends valid JSON: a revealed `"key":` in key position is a real key
 * (inside a JSON string every `"` is escaped), and the skeleton fixes its depth.
 *
 * Pure functions over latin1 strings (one char per byte), so offsets are byte offsets. No attestor-core
 * code is used here (it is AGPL-3.0; this file is the project's).
 */

/** The byte attestor-core puts in place of every hidden byte. */
export const HIDDEN_CHAR = "*";

export type Reading<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A server record as the attestor has it: its bytes with hidden ones as `*`; `whole` when none was revealed. */
export interface SeenRecord {
  text: string;
  whole: boolean;
}

/** A span of the answer, `[from, to)`, in byte offsets. */
export interface Span {
  from: number;
  to: number;
}

/** The proven field's token as the body spells it: `4321.987`, or `"4321.987"` for a numeric string. */
export interface FieldToken {
  /** The token as it stands in the body, quotes included. */
  raw: string;
  /** The number's spelling, without quotes. */
  spelling: string;
}

const SPELLING_RE = /^-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const JSON_NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEADER_RE = /^([!#$%&'+.^_`|~0-9A-Za-z-]+):(.*)$/s;
const MAX_DEPTH = 64;

/** Headers whose values the attestor sees: the body's framing, its type, and the date attestor-core checks. */
const SHOWN_HEADERS = new Set(["content-length", "transfer-encoding", "content-type", "date"]);

class Refusal extends Error {}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

function attempt<T>(read: () => T): Reading<T> {
  try {
    return { ok: true, value: read() };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message };
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------
// HTTP framing

interface Framed {
  /** Spans of header values that are not shown (prover side). */
  headerValues: Span[];
  /** Where the body's content lies in the answer, in order (one span, or one per chunk). */
  content: Span[];
  /** Where the body, framing included, starts and ends. */
  body: Span;
}

/**
 * Splits an answer into head and body content. `hidden` says whether `*` means a hidden byte (the
 * attestor's view) or is a byte like any other (the prover's plaintext).
 */
function frame(text: string, hidden: boolean): Framed {
  const status = /^HTTP\/1\.[01] ([0-9]{3})/.exec(text);
  if (status === null) refuse("the answer does not start with a revealed HTTP/1.x status line");
  if (!(status[1] as string).startsWith("2")) refuse(`the provider answered HTTP ${status[1]}`);
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0) refuse("the end of the answer's headers is not revealed");
  const lines = text.slice(0, headEnd).split("\r\n");
  const headerValues: Span[] = [];
  let offset = (lines[0] as string).length + 2;
  let contentLength: number | undefined;
  let chunked = false;
  for (const line of lines.slice(1)) {
    const header = HEADER_RE.exec(line);
    if (header === null) refuse("a header line is hidden or malformed (its name must be revealed)");
    const name = (header[1] as string).toLowerCase();
    const value = (header[2] as string).trim();
    const valueFrom = offset + (header[1] as string).length + 1;
    if (!SHOWN_HEADERS.has(name) && header[2] !== "") headerValues.push({ from: valueFrom, to: offset + line.length });
    if (name === "content-length" || name === "transfer-encoding") {
      if (hidden && value.includes(HIDDEN_CHAR)) refuse(`the ${name} header's value is hidden`);
      if (contentLength !== undefined || chunked) refuse("the answer's length is given twice");
      if (name === "content-length") {
        if (!/^[0-9]{1,9}$/.test(value)) refuse("the content-length header is not a length");
        contentLength = Number(value);
      } else if (value.toLowerCase() === "chunked") {
        chunked = true;
      } else {
        refuse(`transfer-encoding ${value} is not supported`);
      }
    }
    offset += line.length + 2;
  }
  const bodyStart = headEnd + 4;
  if (contentLength !== undefined) {
    if (text.length < bodyStart + contentLength) refuse("the body is shorter than its content-length");
    return { headerValues, content: [{ from: bodyStart, to: bodyStart + contentLength }], body: { from: bodyStart, to: bodyStart + contentLength } };
  }
  if (!chunked) refuse("the answer's length is not revealed (no content-length or chunked transfer-encoding)");
  const content: Span[] = [];
  let at = bodyStart;
  for (;;) {
    const lineEnd = text.indexOf("\r\n", at);
    if (lineEnd < 0) refuse("a chunk's size line is not revealed");
    const size = /^([0-9A-Fa-f]{1,8})(?:;[^*\r\n]*)?$/.exec(text.slice(at, lineEnd));
    if (size === null) refuse("a chunk's size line is hidden or malformed");
    const length = Number.parseInt(size[1] as string, 16);
    const dataStart = lineEnd + 2;
    if (length === 0) return { headerValues, content, body: { from: bodyStart, to: dataStart } };
    if (text.slice(dataStart + length, dataStart + length + 2) !== "\r\n") refuse("a chunk does not end where its size says");
    content.push({ from: dataStart, to: dataStart + length });
    at = dataStart + length + 2;
  }
}

// ---------------------------------------------------------------------------------------------------
// JSON with hidden values

type JsonNode =
  | { kind: "object"; span: Span; entries: { key: string; value: JsonNode }[] }
  | { kind: "array"; span: Span; items: JsonNode[] }
  | { kind: "string" | "number" | "literal" | "hidden"; span: Span };

/**
 * A recursive-descent JSON parser over `text` (the body's content) that also takes, where `hidden` is
 * set, a run of `*` as one whole hidden value. A `*` anywhere else (in a key, in a string, in a number,
 * between tokens) is refused: it could hide structure.
 */
class Parser {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly hidden: boolean,
  ) {}

  parseDocument(): JsonNode {
    const node = this.value(0);
    this.whitespace();
    if (this.at !== this.text.length) this.fail("after the top-level value");
    return node;
  }

  private fail(where: string): never {
    const char = this.text[this.at];
    if (this.hidden && char === HIDDEN_CHAR) refuse(`the body hides something other than a whole value (at byte ${this.at}, ${where})`);
    refuse(`the body is not JSON (byte ${this.at}, ${where})`);
  }

  private whitespace(): void {
    while (this.at < this.text.length && " \t\r\n".includes(this.text[this.at] as string)) this.at++;
  }

  private value(depth: number): JsonNode {
    if (depth > MAX_DEPTH) refuse(`the body nests deeper than ${MAX_DEPTH} levels`);
    this.whitespace();
    const from = this.at;
    const char = this.text[this.at];
    if (char === "{") return this.object(depth);
    if (char === "[") return this.array(depth);
    if (char === '"') {
      this.string();
      return { kind: "string", span: { from, to: this.at } };
    }
    if (this.hidden && char === HIDDEN_CHAR) {
      while (this.text[this.at] === HIDDEN_CHAR) this.at++;
      // A hidden value ends where a revealed delimiter (or the end) says it does.
      const after = this.at;
      this.whitespace();
      const next = this.text[this.at];
      if (next !== undefined && next !== "," && next !== "}" && next !== "]") {
        refuse(`the body hides something other than a whole value (at byte ${from}, a hidden run that a delimiter does not end)`);
      }
      this.at = after;
      return { kind: "hidden", span: { from, to: after } };
    }
    for (const literal of ["true", "false", "null"]) {
      if (this.text.startsWith(literal, this.at)) {
        this.at += literal.length;
        return { kind: "literal", span: { from, to: this.at } };
      }
    }
    JSON_NUMBER_RE.lastIndex = this.at;
    const number = JSON_NUMBER_RE.exec(this.text);
    if (number === null) this.fail("where a value should start");
    this.at += number[0].length;
    const next = this.text[this.at];
    // `432` followed by hidden digits is a number cut short, not a number.
    if (next !== undefined && !" \t\r\n,}]".includes(next)) this.fail("after a number");
    return { kind: "number", span: { from, to: this.at } };
  }

  /** Reads a string token and returns its decoded content. */
  private string(): string {
    const from = this.at;
    this.at++;
    for (;;) {
      const char = this.text[this.at];
      if (char === undefined) refuse("the body is not JSON (a string does not end)");
      if (char === '"') break;
      if (this.hidden && char === HIDDEN_CHAR) this.fail("inside a string");
      if (char === "\\") this.at++;
      else if (char < " ") this.fail("inside a string");
      this.at++;
    }
    this.at++;
    try {
      return JSON.parse(Buffer.from(this.text.slice(from, this.at), "latin1").toString("utf8")) as string;
    } catch {
      return refuse(`the body is not JSON (a string at byte ${from})`);
    }
  }

  private object(depth: number): JsonNode {
    const from = this.at;
    this.at++;
    const entries: { key: string; value: JsonNode }[] = [];
    this.whitespace();
    if (this.text[this.at] === "}") {
      this.at++;
      return { kind: "object", span: { from, to: this.at }, entries };
    }
    for (;;) {
      this.whitespace();
      if (this.text[this.at] !== '"') this.fail("where a key should start");
      const key = this.string();
      this.whitespace();
      if (this.text[this.at] !== ":") this.fail("after a key");
      this.at++;
      entries.push({ key, value: this.value(depth + 1) });
      this.whitespace();
      const next = this.text[this.at];
      this.at++;
      if (next === "}") return { kind: "object", span: { from, to: this.at }, entries };
      if (next !== ",") {
        this.at--;
        this.fail("between an object's members");
      }
    }
  }

  private array(depth: number): JsonNode {
    const from = this.at;
    this.at++;
    const items: JsonNode[] = [];
    this.whitespace();
    if (this.text[this.at] === "]") {
      this.at++;
      return { kind: "array", span: { from, to: this.at }, items };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.whitespace();
      const next = this.text[this.at];
      this.at++;
      if (next === "]") return { kind: "array", span: { from, to: this.at }, items };
      if (next !== ",") {
        this.at--;
        this.fail("between an array's items");
      }
    }
  }
}

/** The node at `path` (dot-separated object keys), refusing a key an object on the way names twice. */
function nodeAt(root: JsonNode, path: string): JsonNode {
  let node = root;
  for (const key of path.split(".")) {
    if (node.kind !== "object") refuse(`no object holds ${key} on the way to ${path}`);
    const matches = node.entries.filter((entry) => entry.key === key);
    if (matches.length === 0) refuse(`no value at ${path}`);
    if (matches.length > 1) refuse(`the body names ${key} twice in one object on the way to ${path}`);
    node = (matches[0] as { value: JsonNode }).value;
  }
  return node;
}

function tokenOf(node: JsonNode, content: string, path: string): FieldToken {
  const raw = content.slice(node.span.from, node.span.to);
  if (node.kind === "number") return { raw, spelling: raw };
  if (node.kind === "string" && SPELLING_RE.test(raw.slice(1, -1))) return { raw, spelling: raw.slice(1, -1) };
  if (node.kind === "hidden") refuse(`the value at ${path} is hidden`);
  return refuse(`the value at ${path} is not a number`);
}

/** Most UTF-8 bytes of an account id: an identifier, not a document. */
export const MAX_ACCOUNT_ID_BYTES = 256;

/** An account id (docs/nullifiers.md): a string's text or a number's spelling, whole, revealed, not empty. */
function accountOf(node: JsonNode, content: string, path: string): string {
  if (node.kind === "hidden") refuse(`the account at ${path} is hidden`);
  const raw = content.slice(node.span.from, node.span.to);
  if (node.kind === "number") return raw;
  if (node.kind !== "string") refuse(`the value at ${path} is not a string or a number, so it names no account`);
  const text = JSON.parse(Buffer.from(raw, "latin1").toString("utf8")) as string;
  if (text.length === 0) refuse(`the account at ${path} is an empty string`);
  if (Buffer.byteLength(text, "utf8") > MAX_ACCOUNT_ID_BYTES) refuse(`the account at ${path} is longer than ${MAX_ACCOUNT_ID_BYTES} bytes`);
  return text;
}

/** The body's content (chunks joined) and, for each of its bytes, where it lies in the answer. */
function contentOf(text: string, framed: Framed): { content: string; offsets: (i: number) => number } {
  const content = framed.content.map((s) => text.slice(s.from, s.to)).join("");
  const starts: number[] = [];
  let total = 0;
  for (const span of framed.content) {
    starts.push(total);
    total += span.to - span.from;
  }
  const offsets = (i: number): number => {
    let k = framed.content.length - 1;
    while (k > 0 && (starts[k] as number) > i) k--;
    return (framed.content[k] as Span).from + (i - (starts[k] as number));
  };
  return { content, offsets };
}

// ---------------------------------------------------------------------------------------------------
// The two ends

/** The field's token in a JSON body (a JavaScript string, as decoded from UTF-8). */
export function readBodyField(body: string, path: string): Reading<FieldToken> {
  return attempt(() => {
    const content = Buffer.from(body, "utf8").toString("latin1");
    return tokenOf(nodeAt(new Parser(content, false).parseDocument(), path), content, path);
  });
}

/** The field's token in an answer the prover holds in full (it chooses the bucket from it). */
export function readField(answer: string, path: string): Reading<FieldToken> {
  return readWhole(answer, path, tokenOf);
}

/** The account id an answer the prover holds in full names at `path` (accountOf says what counts). */
export function readAccountId(answer: string, path: string): Reading<string> {
  return readWhole(answer, path, accountOf);
}

function readWhole<T>(answer: string, path: string, read: (node: JsonNode, content: string, path: string) => T): Reading<T> {
  return attempt(() => {
    const { content } = contentOf(answer, frame(answer, false));
    return read(nodeAt(new Parser(content, false).parseDocument(), path), content, path);
  });
}

/**
 * What the prover hides of its answer for `path` in the `zk` mode: every header value but the shown
 * ones, and every value of the body but the proven one (and the account at `accountPath`, which the
 * attestor reads for a nullifier). Keys, brackets and framing stay visible: the attestor checks where.
 */
export function revealPlan(answer: string, path: string, accountPath?: string): Reading<Span[]> {
  return attempt(() => {
    const framed = frame(answer, false);
    const { content, offsets } = contentOf(answer, framed);
    const root = new Parser(content, false).parseDocument();
    const target = nodeAt(root, path);
    tokenOf(target, content, path);
    const account = accountPath === undefined ? undefined : nodeAt(root, accountPath);
    if (account !== undefined) accountOf(account, content, accountPath as string);
    const hidden: Span[] = [...framed.headerValues];
    const visit = (node: JsonNode): void => {
      if (node === target || node === account) return;
      if (node.kind === "object") for (const entry of node.entries) visit(entry.value);
      else if (node.kind === "array") for (const item of node.items) visit(item);
      else {
        // A value split across chunks is hidden piece by piece: the chunk's size line stays revealed.
        let from = node.span.from;
        for (let i = node.span.from + 1; i <= node.span.to; i++) {
          if (i === node.span.to || offsets(i) !== offsets(i - 1) + 1) {
            hidden.push({ from: offsets(from), to: offsets(i - 1) + 1 });
            from = i;
          }
        }
      }
    };
    visit(root);
    return hidden.sort((a, b) => a.from - b.from);
  });
}

/**
 * The field's token as the attestor can read it from what it saw: the server's application data records
 * in order, hidden bytes as `*`. Records before the status line that are wholly hidden (TLS 1.3 session
 * tickets look like that) are skipped; a wholly hidden record inside the body is refused, because its
 * stand-in's length is not the record's, so nothing after it could be counted.
 */
export function readRevealedField(records: readonly SeenRecord[], path: string): Reading<FieldToken> {
  return readRevealed(records, path, tokenOf);
}

/** The account id at `path` as the attestor reads it from what it saw, under readRevealedField's rules. */
export function readRevealedAccountId(records: readonly SeenRecord[], path: string): Reading<string> {
  return readRevealed(records, path, accountOf);
}

function readRevealed<T>(records: readonly SeenRecord[], path: string, read: (node: JsonNode, content: string, path: string) => T): Reading<T> {
  return attempt(() => {
    let text = "";
    const wholes: Span[] = [];
    for (const record of records) {
      if (record.whole) wholes.push({ from: text.length, to: text.length + record.text.length });
      text += record.text;
    }
    const start = text.search(/[^*]/);
    if (start < 0) refuse("nothing of the answer is revealed");
    const answer = text.slice(start);
    const framed = frame(answer, true);
    const body = { from: framed.body.from + start, to: framed.body.to + start };
    if (wholes.some((w) => w.from < body.to && w.to > body.from)) refuse("a whole TLS record inside the body is hidden, so the body's length cannot be counted");
    const { content } = contentOf(answer, framed);
    return read(nodeAt(new Parser(content, true).parseDocument(), path), content, path);
  });
}

/** The smallest JSON document that holds `token` at `path`: what the signed pattern is checked against. */
export function documentOf(path: string, token: string): string {
  const keys = path.split(".");
  return keys.map((k) => `{${JSON.stringify(k)}:`).join("") + token + "}".repeat(keys.length);
}

/** Whether `text` spells a number (the grammar proven fields may use). */
export function isSpelling(text: string): boolean {
  return SPELLING_RE.test(text);
}
