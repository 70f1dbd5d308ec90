/**
 * Advance payloads fuzzed against the real dapp in-process, for volume: the real dispatcher on a real
 * migrated SQLite database, and a sample of every family again through the real @deroll/app HTTP loop.
 * Families: bad hex, bytes that are not UTF-8, text that is not JSON, truncated and deeply nested JSON,
 * JSON that is no envelope, unknown kinds, wrong types, huge strings, forged senders, and random byte
 * mutations of valid inputs. Every rejected input must be rejected with its own code, leave exactly one
 * error report and no notice, and leave the state digest unchanged; the loop keeps serving afterwards.
 * Inspect queries fuzzed for volume are in dapp-fuzz-inspect.test.ts; the fixtures in dapp-fuzz-support.ts.
 */
import fc from "fast-check";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { DAPP_ERROR_CODES, INPUT_KINDS } from "../../common/wire.ts";
import { SCHEMA } from "../dapp/fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, startHarness, T0, type Harness } from "../dapp/harness.ts";
import type { AdvanceOutcome } from "../dapp/rollup-server.ts";
import { aliceGrant, FAR, FIELDS, forgedArb, fullDigest, s1, scalarOrContainer, SENDER, setup, VALID, wrongValue } from "./dapp-fuzz-support.ts";
import { bytes32Arb, directDapp, scaledTimeout, errorOf, fcOptions, figure, nested, type DirectDapp, type DirectOutcome } from "./support.ts";

let d: DirectDapp;
/** Every 8th rejected case, sent again through the HTTP loop at the end. */
const samples: { payload: string; sender: string; code: string }[] = [];
let digest: string;
let sent = 0;
const counts = new Map<string, number>();
const started = Date.now();

let lastSend: { payload: string; sender: string } = { payload: "", sender: ADMIN };
/** Index of the last accepted input: health's processed_inputs is this + 1 (a rejection leaves no trace). */
let lastAccepted = -1;
async function send(payload: string, sender: string = ADMIN): Promise<DirectOutcome> {
  lastSend = { payload, sender };
  const index = sent++;
  const outcome = await d.advance(payload, sender, T0 + index, index);
  if (outcome.status === "accept") lastAccepted = index;
  return outcome;
}

/** The input was rejected with `code` (or one of `codes`), left one error report, no notice, and changed nothing. */
function expectRejected(outcome: DirectOutcome | AdvanceOutcome, codes: string | readonly string[], db = d.db): void {
  const allowed = typeof codes === "string" ? [codes] : codes;
  const error = errorOf(outcome.reports[0]);
  expect({ status: outcome.status, notices: outcome.notices.length, reports: outcome.reports.length }).toEqual({
    status: "reject",
    notices: 0,
    reports: 1,
  });
  expect(allowed).toContain(error?.code);
  // The message names the problem without echoing a huge input back into the rollup's outputs.
  expect(error?.message.length ?? 0).toBeLessThan(2048);
  counts.set(error?.code ?? "?", (counts.get(error?.code ?? "?") ?? 0) + 1);
  expect(fullDigest(db.$client)).toBe(digest);
  if (db === d.db && sent % 8 === 0 && error !== undefined) samples.push({ ...lastSend, code: error.code });
}

beforeAll(async () => {
  d = directDapp({ admins: [ADMIN] });
  for (const [type, params, sender] of setup) expect((await send(jsonToHex({ type, params }), sender)).status).toBe("accept");
  digest = fullDigest(d.db.$client);
});

afterAll(async () => {
  const summary = [...counts].sort().map(([code, n]) => `${code} ${n}`).join(", ");
  figure(`dapp advance fuzz: ${sent} inputs in ${((Date.now() - started) / 1000).toFixed(1)} s (${summary})`);
  d?.close();
});

describe("advance payloads that do not decode", () => {
  it("bad hex (no 0x, odd length, non-hex digits, empty) is INVALID_PAYLOAD", { timeout: scaledTimeout(60_000) }, async () => {
    const badHex = fc.oneof(
      fc.string({ maxLength: 200 }).filter((s) => !/^0x(?:[0-9a-fA-F]{2})*$/.test(s)),
      fc.stringMatching(/^0x[0-9a-f]{1,60}$/).filter((s) => s.length % 2 === 1),
      fc.stringMatching(/^0x[0-9a-f]{0,20}[g-z][0-9a-f]{0,20}$/),
      fc.stringMatching(/^[0-9a-f]{2,40}$/),
      fc.constantFrom("", "0x0", "0X7b7d", " 0x7b7d", "0x7b7d ", "0x\u0000"),
    );
    await fc.assert(
      fc.asyncProperty(badHex, async (payload) => {
        const outcome = await send(payload);
        expectRejected(outcome, "INVALID_PAYLOAD");
        expect(errorOf(outcome.reports[0])?.message).toMatch(/^payload: /);
      }),
      fcOptions(300),
    );
  });

  it("bytes that are not UTF-8 are INVALID_PAYLOAD", { timeout: scaledTimeout(60_000) }, async () => {
    // A lone continuation byte, an overlong form or a truncated sequence somewhere in otherwise good JSON.
    const invalid = fc.constantFrom([0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xff], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), invalid, fc.nat(), async (text, bad, at) => {
        const bytes = Buffer.from(JSON.stringify({ type: "register_schema", params: { text } }), "utf8");
        const cut = at % (bytes.length + 1);
        const payload = Buffer.concat([bytes.subarray(0, cut), Buffer.from(bad), bytes.subarray(cut)]);
        expectRejected(await send(`0x${payload.toString("hex")}`), "INVALID_PAYLOAD");
      }),
      fcOptions(300),
    );
  });

  it("text that is not JSON, and truncated JSON of valid inputs, is INVALID_PAYLOAD", { timeout: scaledTimeout(60_000) }, async () => {
    const notJson = fc.string({ maxLength: 120 }).filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    });
    const truncated = fc
      .tuple(fc.constantFrom(...INPUT_KINDS), fc.nat())
      .map(([kind, at]) => {
        const text = JSON.stringify({ type: kind, params: VALID[kind]() });
        return text.slice(0, at % text.length);
      });
    await fc.assert(
      fc.asyncProperty(fc.oneof(notJson, truncated), async (text) => {
        const outcome = await send(utf8ToHex(text));
        expectRejected(outcome, "INVALID_PAYLOAD");
        expect(errorOf(outcome.reports[0])?.message).toBe("payload: not JSON");
      }),
      fcOptions(400),
    );
  });

  it("JSON that is not a {type, params} envelope is INVALID_PAYLOAD", { timeout: scaledTimeout(60_000) }, async () => {
    const notEnvelope = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== "object" || v === null || Array.isArray(v)),
      fc.record({ type: scalarOrContainer.filter((t) => typeof t !== "string"), params: fc.object({ maxDepth: 1 }) }),
      fc.record({
        type: fc.constantFrom(...INPUT_KINDS),
        params: fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.array(fc.integer()), fc.constant(null)),
      }),
      fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => k !== "type"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    );
    await fc.assert(
      fc.asyncProperty(notEnvelope, async (value) => {
        // A record whose params is null falls back to {} (params may be left out): that is a kind's own check.
        const v = (typeof value === "object" && value !== null ? value : {}) as { type?: unknown; params?: unknown };
        const outcome = await send(jsonToHex(value));
        expectRejected(outcome, typeof v.type === "string" && v.params === null ? ["INVALID_PARAMS"] : ["INVALID_PAYLOAD"]);
      }),
      fcOptions(400),
    );
  });

  it("deeply nested JSON (up to 100,000 levels) is rejected, never an internal error", { timeout: scaledTimeout(60_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 100_000 }),
        fc.constantFrom("envelope", "params", "field", "value"),
        fc.constantFrom(...INPUT_KINDS),
        async (depth, where, kind) => {
          let text: string;
          let code: string;
          if (where === "envelope") {
            text = nested(depth, `{"type":"${kind}","params":{}}`);
            code = "INVALID_PAYLOAD";
          } else if (where === "params") {
            text = `{"type":"${kind}","params":${nested(depth)}}`;
            code = "INVALID_PAYLOAD";
          } else {
            // A real field of the kind gets the nested value, so the kind's own schema meets it.
            const [firstField] = Object.keys(VALID[kind]());
            const params = JSON.stringify({ ...VALID[kind](), [firstField ?? "x"]: "__DEEP__" });
            const value = where === "field" ? nested(depth) : `{"a":${nested(depth, "{}")}}`;
            text = `{"type":"${kind}","params":${params.replace('"__DEEP__"', value)}}`;
            code = "INVALID_PARAMS";
          }
          const outcome = await send(utf8ToHex(text), SENDER[kind]);
          expectRejected(outcome, code);
        },
      ),
      fcOptions(60),
    );
  });
});

describe("advance payloads that decode but must not apply", () => {
  it("unknown kinds, prototype names included, are UNKNOWN_KIND", { timeout: scaledTimeout(60_000) }, async () => {
    const unknownKind = fc.oneof(
      fc.string({ maxLength: 40 }).filter((s) => !(INPUT_KINDS as readonly string[]).includes(s)),
      fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "REGISTER_SCHEMA", "register_schema ", "set-role"),
    );
    await fc.assert(
      fc.asyncProperty(unknownKind, fc.object({ maxDepth: 2 }), async (type, params) => {
        const outcome = await send(jsonToHex({ type, params }));
        expectRejected(outcome, "UNKNOWN_KIND");
      }),
      fcOptions(400),
    );
  });

  it("a field of the wrong type or shape is INVALID_PARAMS", { timeout: scaledTimeout(60_000) }, async () => {
    const field = fc.constantFrom(...FIELDS);
    await fc.assert(
      fc.asyncProperty(
        field.chain((f) => fc.tuple(fc.constant(f), wrongValue(f.type, f.pattern === true))),
        async ([f, value]) => {
          const params = { ...VALID[f.kind](), [f.field]: value };
          const outcome = await send(jsonToHex({ type: f.kind, params }), SENDER[f.kind]);
          expectRejected(outcome, "INVALID_PARAMS");
        },
      ),
      fcOptions(600),
    );
  });

  it("a missing required field is INVALID_PARAMS naming it", { timeout: scaledTimeout(60_000) }, async () => {
    const optional = ["name", "description", "owner", "proof", "proofs", "attestorQuorum", "validityPeriod", "requireSignedConsent", "consent", "reason", "superseded_by", "sealing", "accountIdField", "nullifier"];
    // A grant may carry keys; sharing them is what share_keys is for.
    const required = FIELDS.filter((f) => !optional.includes(f.field) && !(f.kind === "grant_access" && f.field === "keys"));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...required), async (f) => {
        const params: Record<string, unknown> = VALID[f.kind]();
        delete params[f.field];
        const outcome = await send(jsonToHex({ type: f.kind, params }), SENDER[f.kind]);
        expectRejected(outcome, "INVALID_PARAMS");
        expect(errorOf(outcome.reports[0])?.message).toBe(`missing required parameter: ${f.field}`);
      }),
      fcOptions(100),
    );
  });

  it("huge strings (past each field's limit, up to 256 KiB) are INVALID_PARAMS", { timeout: scaledTimeout(60_000) }, async () => {
    const bounded = FIELDS.filter((f) => f.type === "string");
    await fc.assert(
      fc.asyncProperty(
        // Past the field's own limit (4 KiB for those without one: they have a pattern no long string matches).
        fc.constantFrom(...bounded).chain((f) => fc.tuple(fc.constant(f), fc.integer({ min: Math.max(f.max ?? 4096, 4096) + 2, max: 256 * 1024 }))),
        fc.boolean(),
        async ([f, length], hexLike) => {
        const value = hexLike ? `0x${"ab".repeat(Math.ceil(length / 2))}` : "x".repeat(length);
        const params = { ...VALID[f.kind](), [f.field]: value };
        const outcome = await send(jsonToHex({ type: f.kind, params }), SENDER[f.kind]);
        expectRejected(outcome, "INVALID_PARAMS");
        },
      ),
      fcOptions(60),
    );
  });

  it("forged senders: admin and attestor kinds are UNAUTHORIZED_SENDER, another owner's grant NOT_OWNER", { timeout: scaledTimeout(60_000) }, async () => {
    const attempt = fc.constantFrom(
      "register_schema",
      "register_encryption_key",
      "set_role_self",
      "create_attestation",
      "grant_for_alice",
      "revoke_alice_grant",
      "revoke_for_alice",
      "revoke_attestation",
    );
    await fc.assert(
      fc.asyncProperty(forgedArb, attempt, bytes32Arb, async (sender, what, id) => {
        let kind: string;
        let params: Record<string, unknown>;
        let code = "UNAUTHORIZED_SENDER";
        switch (what) {
          case "set_role_self":
            [kind, params] = ["set_role", { address: sender, role: "admin", enabled: true }];
            break;
          case "grant_for_alice":
            [kind, params] = ["grant_access", { requester: sender, schema_id: s1, expires_at: FAR, owner: ALICE }];
            break;
          case "revoke_alice_grant":
            [kind, params, code] = ["revoke_grant", { grant_id: aliceGrant }, "NOT_OWNER"];
            break;
          case "revoke_for_alice":
            [kind, params] = ["revoke_grant", { grant_id: aliceGrant, owner: ALICE }];
            break;
          case "register_schema":
            [kind, params] = ["register_schema", { ...SCHEMA, domain: `${id.slice(2, 12)}.example` }];
            break;
          default:
            [kind, params] = [what, VALID[what as "create_attestation"]()];
        }
        expectRejected(await send(jsonToHex({ type: kind, params }), sender), code);
      }),
      fcOptions(400),
    );
  });

  it("references to things that do not exist are SCHEMA_NOT_FOUND, GRANT_NOT_FOUND or ATTESTATION_NOT_FOUND", { timeout: scaledTimeout(60_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(bytes32Arb, fc.constantFrom("create_attestation", "grant_access", "revoke_grant", "revoke_attestation", "superseded_by"), async (id, kind) => {
        if (kind === "revoke_attestation") {
          expectRejected(await send(jsonToHex({ type: kind, params: { attestation_id: id } }), ADMIN), "ATTESTATION_NOT_FOUND");
        } else if (kind === "superseded_by") {
          expectRejected(await send(jsonToHex({ type: "revoke_attestation", params: { ...VALID.revoke_attestation(), superseded_by: id } }), ATTESTOR), "ATTESTATION_NOT_FOUND");
        } else if (kind === "revoke_grant") {
          expectRejected(await send(jsonToHex({ type: kind, params: { grant_id: id } }), ALICE), "GRANT_NOT_FOUND");
        } else {
          const params = { ...VALID[kind](), schema_id: id };
          expectRejected(await send(jsonToHex({ type: kind, params }), SENDER[kind]), "SCHEMA_NOT_FOUND");
        }
      }),
      fcOptions(200),
    );
  });
});

describe("random mutations of valid inputs", () => {
  it("never fail internally; a rejection changes nothing; an acceptance is a valid input", { timeout: scaledTimeout(60_000) }, async () => {
    const mutation = fc.oneof(
      fc.record({ op: fc.constant("flip"), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ op: fc.constant("delete"), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
      fc.record({ op: fc.constant("insert"), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
      fc.record({ op: fc.constant("swapText"), at: fc.nat(), text: fc.constantFrom("null", "[]", "{}", '"', "\\", "1e999", "-0", "true", ",") }),
    );
    const kinds = fc.constantFrom(...INPUT_KINDS);
    await fc.assert(
      fc.asyncProperty(kinds, fc.array(mutation, { minLength: 1, maxLength: 4 }), async (kind, mutations) => {
        let bytes = Buffer.from(JSON.stringify({ type: kind, params: VALID[kind]() }), "utf8");
        for (const m of mutations) {
          const at = m.at % (bytes.length + 1);
          if (m.op === "flip" && bytes.length > 0) {
            const i = m.at % bytes.length;
            bytes = Buffer.from(bytes);
            bytes[i] = (bytes[i] as number) ^ (1 << m.bit);
          } else if (m.op === "delete") {
            bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.n)]);
          } else if (m.op === "insert") {
            bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
          } else if (m.op === "swapText") {
            bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.text), bytes.subarray(at + 1)]);
          }
        }
        const before = fullDigest(d.db.$client);
        const outcome = await send(`0x${bytes.toString("hex")}`, SENDER[kind]);
        if (outcome.status === "reject") {
          const error = errorOf(outcome.reports[0]);
          expect(DAPP_ERROR_CODES).toContain(error?.code);
          expect(error?.code).not.toBe("INTERNAL_ERROR");
          expect(outcome.notices).toEqual([]);
          expect(fullDigest(d.db.$client)).toBe(before);
          counts.set(`mutated:${error?.code ?? "?"}`, (counts.get(`mutated:${error?.code ?? "?"}`) ?? 0) + 1);
        } else {
          counts.set("mutated:accept", (counts.get("mutated:accept") ?? 0) + 1);
        }
        // Whatever happened, the state digest now is the reference for the next case.
        digest = fullDigest(d.db.$client);
      }),
      fcOptions(600),
    );
  });

  it("the dispatcher still serves: health counts up to the last accepted input, and a valid input is accepted", { timeout: scaledTimeout(60_000) }, async () => {
    const health = await d.inspect(jsonToHex({ type: "health", params: {} }));
    expect(health.exception).toBeNull();
    expect(JSON.parse(Buffer.from((health.reports[0] ?? "0x").slice(2), "hex").toString("utf8"))).toEqual({
      status: "ok",
      database: "ok",
      processed_inputs: lastAccepted + 1,
    });
    const outcome = await send(jsonToHex({ type: "set_role", params: { address: BOB, role: "operator", enabled: true } }));
    expect(outcome.status).toBe("accept");
  });
});

describe("the same hostile inputs through the real HTTP loop (@deroll/app against a rollup server)", () => {
  let h: Harness | undefined;
  afterAll(async () => {
    await h?.close();
  });

  it("gives the same rejection codes, leaves the whole database unchanged and keeps the loop up", { timeout: scaledTimeout(60_000) }, async () => {
    h = await startHarness();
    for (const [type, params, sender] of setup) expect((await h.input(type, params, { sender })).status).toBe("accept");
    const reference = fullDigest(h.db.$client);
    digest = reference;
    for (const sample of samples) {
      const outcome = await h.raw(sample.payload as Hex, { sender: sample.sender });
      expectRejected(outcome, sample.code, h.db);
    }
    expect(samples.length).toBeGreaterThan(100);
    const health = await h.read<{ processed_inputs: number }>("health");
    expect(health.processed_inputs).toBe(setup.length);
    expect((await h.input("set_role", { address: BOB, role: "operator", enabled: true })).status).toBe("accept");
    figure(`dapp advance fuzz through the HTTP loop: ${samples.length} sampled hostile inputs, same codes`);
  });
});
