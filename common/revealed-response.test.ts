/**
 * The attestor's reading of a field from an answer with hidden bytes (common/revealed-response.ts),
 * property-based: random JSON answers (nested objects, repeated and look-alike keys, strings holding
 * quotes and braces, every spelling of a number, Content-Length or chunked framing, split into records at
 * random) seen through random hidden masks, as a lying prover would choose them. Whatever is hidden, the
 * reader either refuses or returns exactly the token the server sent at the path (soundness); the honest
 * plan (`revealPlan`) always lets it read that token (liveness). Table-driven cases pin the messages.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { documentOf, MAX_ACCOUNT_ID_BYTES, readAccountId, readField, readRevealedAccountId, readRevealedField, revealPlan, type SeenRecord, type Span } from "./revealed-response.ts";

const PATH = "data.balance";
const KEYS = ["data", "balance", "other", "x", 'a"b', "data "] as const;

type Node = { object: [string, Node][] } | { array: Node[] } | { token: string };

const numberToken = fc.oneof(
  fc.integer({ min: -99999, max: 99999 }).map(String),
  fc.tuple(fc.integer({ min: -9999, max: 9999 }), fc.integer({ min: 0, max: 9999 })).map(([i, f]) => `${i}.${f}`),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: -30, max: 30 })).map(([d, f, e]) => `${d}.${f}e${e}`),
  fc.constantFrom("0", "-0", "0.5", "1E+3", "4321.987"),
);
const stringToken = fc.oneof(
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"},\\"balance\\":1,"', '"{\\"data\\":{"', '"4321.987"', '"*"', '"a*b"'),
);
const leaf = fc.oneof(numberToken, stringToken, fc.constantFrom("true", "false", "null")).map((token): Node => ({ token }));

const tree = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie("node")), { maxLength: 4 }).map((entries): Node => ({ object: entries })),
    fc.array(tie("node"), { maxLength: 3 }).map((items): Node => ({ array: items })),
  ),
})).node;

/** A document whose top is an object, usually holding the path (the interesting case). */
const document = fc
  .tuple(tree, fc.option(numberToken, { nil: undefined }), fc.array(fc.tuple(fc.constantFrom(...KEYS), tree), { maxLength: 3 }))
  .map(([extra, balance, rest]): Node => {
    const data: [string, Node][] = [["x", extra]];
    if (balance !== undefined) data.push(["balance", { token: balance }]);
    return { object: [["data", { object: data }], ...rest] };
  });

const whitespace = fc.constantFrom("", "", " ", "\n  ", "\r\n\r\n", "\t");

function serialize(node: Node, ws: string): string {
  if ("token" in node) return node.token;
  if ("array" in node) return `[${ws}${node.array.map((n) => serialize(n, ws)).join(`,${ws}`)}${ws}]`;
  return `{${ws}${node.object.map(([k, v]) => `${JSON.stringify(k)}${ws}:${ws}${serialize(v, ws)}`).join(`,${ws}`)}${ws}}`;
}

/** The token at the path as the server meant it, or undefined when absent or named twice on the way. */
function truth(root: Node): string | undefined {
  let node = root;
  for (const key of PATH.split(".")) {
    if (!("object" in node)) return undefined;
    const hits = node.object.filter(([k]) => k === key);
    if (hits.length !== 1) return undefined;
    node = (hits[0] as [string, Node])[1];
  }
  if (!("token" in node)) return undefined;
  const token = node.token;
  return /^-?[0-9]/.test(token) || /^"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"$/.test(token) ? token : undefined;
}

function httpAnswer(body: string, chunks: number[] | undefined): string {
  const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Session: s3cr3t\r\n";
  if (chunks === undefined) return `${head}Content-Length: ${Buffer.byteLength(body, "latin1")}\r\n\r\n${body}`;
  let framed = "";
  let at = 0;
  for (const size of chunks) {
    if (at >= body.length) break;
    const piece = body.slice(at, at + size);
    framed += `${piece.length.toString(16)}\r\n${piece}\r\n`;
    at += piece.length;
  }
  if (at < body.length) framed += `${(body.length - at).toString(16)}\r\n${body.slice(at)}\r\n`;
  return `${head}Transfer-Encoding: chunked\r\n\r\n${framed}0\r\n\r\n`;
}

function hide(answer: string, spans: readonly Span[]): string {
  const chars = answer.split("");
  for (const span of spans) for (let i = Math.max(0, span.from); i < Math.min(chars.length, span.to); i++) chars[i] = "*";
  return chars.join("");
}

/** Splits the seen text into records at `cuts`; `wholes` marks records shown as wholly hidden (length + 16, as a tag). */
function recordsOf(seen: string, cuts: number[], wholes: Set<number>): SeenRecord[] {
  const points = [...new Set(cuts.map((c) => c % (seen.length + 1)))].sort((a, b) => a - b);
  const records: SeenRecord[] = [];
  let at = 0;
  for (const point of [...points, seen.length]) {
    if (point <= at) continue;
    const text = seen.slice(at, point);
    records.push(wholes.has(records.length) ? { text: "*".repeat(text.length + 16), whole: true } : { text, whole: false });
    at = point;
  }
  return records;
}

const answers = fc.record({
  root: document,
  ws: whitespace,
  chunks: fc.option(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }), { nil: undefined }),
  cuts: fc.array(fc.nat(), { maxLength: 4 }),
});

describe("what the attestor reads from an answer with hidden bytes", () => {
  it("never a token the server did not send at the path, whatever a lying prover hides", () => {
    let shownWithHidden = 0;
    fc.assert(
      fc.property(
        answers,
        // Random runs inside the body, and the honest plan's runs moved, stretched, shrunk or joined.
        fc.oneof(
          { arbitrary: fc.constant<[number, number][]>([]), weight: 3 },
          { arbitrary: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 2 }), weight: 1 },
        ),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: -4, max: 4 }), fc.integer({ min: -4, max: 12 })), { maxLength: 3 }),
        fc.array(fc.nat({ max: 5 }), { maxLength: 1 }),
        ({ root, ws, chunks, cuts }, runs: [number, number][], nudges, wholes) => {
          const answer = httpAnswer(serialize(root, ws), chunks);
          const bodyStart = answer.indexOf("\r\n\r\n") + 4;
          const bodyLength = answer.length - bodyStart;
          const spans: Span[] = runs.map(([at, length]) => ({ from: bodyStart + (at % bodyLength), to: bodyStart + (at % bodyLength) + length }));
          const plan = revealPlan(answer, PATH);
          const honest = plan.ok ? [...plan.value] : [];
          for (const [which, left, right] of nudges) {
            const i = which % Math.max(1, honest.length);
            const span = honest[i];
            if (span !== undefined) honest[i] = { from: span.from + left, to: span.to + right };
          }
          spans.push(...honest);
          const seen = hide(answer, spans);
          const read = readRevealedField(recordsOf(seen, cuts, new Set(wholes)), PATH);
          if (read.ok && seen.slice(bodyStart).includes("*")) shownWithHidden++;
          if (read.ok) expect(read.value.raw).toBe(truth(root));
        },
      ),
      { numRuns: 4000 },
    );
    // The property is about reads that succeed with bytes hidden: enough of them must have happened.
    expect(shownWithHidden).toBeGreaterThan(300);
  });

  it("the honest plan's view always reads the token the server sent (or refuses an answer with no single number there)", () => {
    fc.assert(
      fc.property(answers, ({ root, ws, chunks, cuts }) => {
        const answer = httpAnswer(serialize(root, ws), chunks);
        const expected = truth(root);
        const plan = revealPlan(answer, PATH);
        const read = plan.ok ? readRevealedField(recordsOf(hide(answer, plan.value), cuts, new Set()), PATH) : plan;
        if (expected === undefined) {
          expect(read.ok).toBe(false);
          return;
        }
        // A key holding `*` reads as hidden: refused rather than guessed (such keys are rare and none is here by accident).
        const starKey = serialize(root, "").includes('"*"') || serialize(root, "").includes('"a*b"');
        if (!starKey) expect(read).toEqual({ ok: true, value: { raw: expected, spelling: expected.replace(/"/g, "") } });
        expect(readField(answer, PATH)).toEqual({ ok: true, value: { raw: expected, spelling: expected.replace(/"/g, "") } });
      }),
      { numRuns: 2000 },
    );
  });

  it("the honest plan hides every value but the proven one, and every header value but the framing's", () => {
    const answer = httpAnswer('{"data":{"balance":4321.987,"limit":450,"note":"secret"},"list":[1,"two",null]}', undefined);
    const plan = revealPlan(answer, PATH);
    if (!plan.ok) throw new Error(plan.reason);
    const seen = hide(answer, plan.value);
    expect(seen).toContain('{"data":{"balance":4321.987,"limit":***,"note":********},"list":[*,*****,****]}');
    expect(seen).toContain("X-Session:*******\r\n");
    expect(seen).toContain("Content-Type: application/json\r\n");
    expect(seen).not.toContain("450");
    expect(seen).not.toContain("secret");
  });
});

describe("why the attestor refuses", () => {
  const body = '{"data":{"balance":4321.987,"limit":450}}';
  const answer = httpAnswer(body, undefined);
  const at = (text: string): number => answer.indexOf(text);
  const cases: [string, Span[], string][] = [
    ["the number's tail hidden", [{ from: at("1.987"), to: at("1.987") + 5 }], "the body hides something other than a whole value"],
    ["digits hidden in the middle", [{ from: at("321"), to: at("321") + 3 }], "the body hides something other than a whole value"],
    ["the proven value hidden", [{ from: at("4321.987"), to: at("4321.987") + 8 }], "the value at data.balance is hidden"],
    ["a key hidden", [{ from: at('"limit"'), to: at('"limit"') + 7 }], "the body hides something other than a whole value"],
    ["the length hidden", [{ from: at("Content-Length: ") + 16, to: at("Content-Length: ") + 18 }], "the content-length header's value is hidden"],
    ["a header name hidden", [{ from: at("X-Session"), to: at("X-Session") + 3 }], "a header line is hidden or malformed"],
    ["the end of the headers hidden", [{ from: at("\r\n\r\n"), to: at("\r\n\r\n") + 4 }], "the end of the answer's headers is not revealed"],
  ];
  it.each(cases)("%s", (_, spans, reason) => {
    const read = readRevealedField([{ text: hide(answer, spans), whole: false }], PATH);
    expect(read.ok ? "read" : read.reason).toContain(reason);
  });

  it("a wholly hidden record inside the body: its length cannot be counted", () => {
    const split = at("4321.987") + 8;
    const records: SeenRecord[] = [
      { text: answer.slice(0, split), whole: false },
      { text: "*".repeat(20), whole: true },
      { text: answer.slice(split), whole: false },
    ];
    expect(readRevealedField(records, PATH)).toEqual({ ok: false, reason: "a whole TLS record inside the body is hidden, so the body's length cannot be counted" });
  });

  it("hidden records before the status line (TLS 1.3 session tickets) are passed over", () => {
    expect(readRevealedField([{ text: "*".repeat(200), whole: true }, { text: answer, whole: false }], PATH)).toEqual({
      ok: true,
      value: { raw: "4321.987", spelling: "4321.987" },
    });
  });

  it("a key named twice on the way, or a value that is not a number", () => {
    const twice = httpAnswer('{"data":{"balance":1,"balance":2}}', undefined);
    expect(readRevealedField([{ text: twice, whole: false }], PATH)).toEqual({ ok: false, reason: "the body names balance twice in one object on the way to data.balance" });
    const text = httpAnswer('{"data":{"balance":"about 5"}}', undefined);
    expect(readRevealedField([{ text, whole: false }], PATH)).toEqual({ ok: false, reason: "the value at data.balance is not a number" });
  });

  it("an answer that is not a 2xx, or has no framing", () => {
    expect(readRevealedField([{ text: "HTTP/1.1 401 Unauthorized\r\n\r\n{}", whole: false }], PATH)).toEqual({ ok: false, reason: "the provider answered HTTP 401" });
    expect(readRevealedField([{ text: `HTTP/1.1 200 OK\r\n\r\n${body}`, whole: false }], PATH)).toEqual({
      ok: false,
      reason: "the answer's length is not revealed (no content-length or chunked transfer-encoding)",
    });
  });
});

describe("the account id of a schema unique per account (docs/nullifiers.md)", () => {
  const ACCOUNT = "data.account";
  /** The answer's bytes as latin1 (what both ends read), from a body written in UTF-8. */
  const answerOf = (body: string): string => httpAnswer(Buffer.from(body, "utf8").toString("latin1"), undefined);

  it("the prover and the attestor read the same account: a string's text, a number's spelling", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }), fc.integer().map(String)), fc.boolean(), (account, asNumber) => {
        const value = asNumber && /^-?[0-9]+$/.test(account) ? account : JSON.stringify(account);
        const answer = answerOf(`{"data":{"balance":12,"account":${value},"x":[true]}}`);
        const prover = readAccountId(answer, ACCOUNT);
        const attestor = readRevealedAccountId([{ text: answer, whole: false }], ACCOUNT);
        expect(prover).toEqual({ ok: true, value: account });
        // The attestor sees a hidden byte as `*`: an account holding one cannot be told from a hidden one.
        if (account.includes("*")) expect(attestor).toMatchObject({ ok: false, reason: expect.stringContaining("inside a string") });
        else expect(attestor).toEqual(prover);
      }),
    );
  });

  it("escapes are read as the text they stand for", () => {
    expect(readAccountId(answerOf('{"data":{"account":"Zo\\u00eb \\"7\\""}}'), ACCOUNT)).toEqual({ ok: true, value: 'Zoë "7"' });
  });

  const answer = answerOf('{"data":{"account":"ACC-0042","balance":5}}');
  const at = answer.indexOf('"ACC-0042"');
  const refusals: [string, SeenRecord[], string][] = [
    ["the account hidden", [{ text: hide(answer, [{ from: at, to: at + 10 }]), whole: false }], "the account at data.account is hidden"],
    ["part of the account hidden", [{ text: hide(answer, [{ from: at + 4, to: at + 9 }]), whole: false }], "the body hides something other than a whole value"],
    ["an object", [{ text: answerOf('{"data":{"account":{"id":1}}}'), whole: false }], "the value at data.account is not a string or a number, so it names no account"],
    ["a literal", [{ text: answerOf('{"data":{"account":null}}'), whole: false }], "the value at data.account is not a string or a number"],
    ["an empty string", [{ text: answerOf('{"data":{"account":""}}'), whole: false }], "the account at data.account is an empty string"],
    ["too long", [{ text: answerOf(`{"data":{"account":"${"é".repeat(MAX_ACCOUNT_ID_BYTES / 2 + 1)}"}}`), whole: false }], `longer than ${MAX_ACCOUNT_ID_BYTES} bytes`],
    ["absent", [{ text: answerOf('{"data":{"balance":5}}'), whole: false }], "no value at data.account"],
  ];
  it.each(refusals)("refused: %s", (_, records, reason) => {
    const read = readRevealedAccountId(records, ACCOUNT);
    expect(read.ok ? "read" : read.reason).toContain(reason);
  });
});

describe("the smallest document for a token", () => {
  it("nests the token under the path's keys", () => {
    expect(documentOf("data.balance", "4321.987")).toBe('{"data":{"balance":4321.987}}');
    expect(JSON.parse(documentOf("a.b.c", '"12"'))).toEqual({ a: { b: { c: "12" } } });
  });
});
