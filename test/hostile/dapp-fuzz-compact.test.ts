/**
 * The compact batch fuzzed against the JSON batch of the same items (issue 37): two dapps with the same
 * history, the real dispatcher on real SQLite each; every case goes to one as a JSON `batch` and to the
 * other as a compact batch, at the same index, time and sender, and both must answer the same verdict,
 * notices and reports and hold the same rows afterwards. Generated batches mix plain attestations (valid
 * and not: unknown labels, other providers, empty data, unknown schemas), proven ones with signed claims,
 * and other kinds (as JSON items). Mutated batches (bits flipped, bytes cut, inserted or appended) are
 * judged by what they still say: one that cannot be split is rejected whole, naming a byte, with nothing
 * written; an item that cannot be read is rejected alone, naming itself and a byte, where its JSON twin
 * is an item that fails without a trace; every other item as the JSON batch of the decoded items.
 */
import fc from "fast-check";
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical.ts";
import { CompactProblem, compactItemToJson, compactSchemaOf, encodeCompactBatch, parseCompactBatch, type CompactContainer, type CompactSchema, type CompactWrite } from "../../common/compact-batch.ts";
import { hexToBytes, hexToUtf8, jsonToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type TlsProof } from "../../common/tls-claim.ts";
import type { SchemaDetail } from "../../common/wire.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, OPERATOR, T0 } from "../dapp/harness.ts";
import { FAR, fullDigest, s1, s2, setup } from "./dapp-fuzz-support.ts";
import { addressArb, directDapp, fcOptions, figure, scaledTimeout, stateDigest, type DirectDapp, type DirectOutcome } from "./support.ts";

const signer = privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123");
const DEFINITION = { boundaries: [0, 100, 1000], labels: ["low", "mid"] };
const PROVEN = { provider: "http", flowType: "proven", domain: "bank.example", bucketDefinitions: { "data.balance": DEFINITION }, dataKeys: [], freshnessHalfLife: 60, proof: "attestor" as const };
const sProven = schemaIdOf(PROVEN);
const SETUP: [string, unknown, Address][] = [...setup, ["register_schema", PROVEN, ADMIN], ["set_tls_attestor", { address: signer.address, enabled: true, name: "fuzz" }, ADMIN]];

let json: DirectDapp;
let compact: DirectDapp;
const schemas = new Map<Hex, CompactSchema>();
let index = 0;
const counts = new Map<string, number>();
const count = (what: string): void => void counts.set(what, (counts.get(what) ?? 0) + 1);

beforeAll(async () => {
  json = directDapp({ admins: [ADMIN] });
  compact = directDapp({ admins: [ADMIN] });
  for (const [type, params, sender] of SETUP) {
    for (const d of [json, compact]) expect((await d.advance(jsonToHex({ type, params }), sender, T0 + index, index)).status).toBe("accept");
    index += 1;
  }
  for (const id of [s1, s2, sProven]) {
    const answer = await compact.inspect(jsonToHex({ type: "provider_schema", params: { schema_id: id, include_index: true } }));
    const s = JSON.parse(hexToUtf8(answer.reports[0] as Hex)) as SchemaDetail;
    schemas.set(id, compactSchemaOf(s.schema_index as number, s.schema_id, s.provider_type, s.domain, s.bucket_definitions));
  }
});

afterAll(() => {
  figure(`compact batch fuzz: ${index} inputs per dapp (${[...counts].sort().map(([k, n]) => `${k} ${n}`).join(", ")})`);
  json?.close();
  compact?.close();
});

/** A directory as the dapp's: the index of each schema the setup registered. */
const directory = (i: number): CompactSchema | undefined => [...schemas.values()].find((s) => s.index === i);

async function proofFor(owner: Address, label: string, at: number, nonce: number): Promise<TlsProof> {
  const range = binRange(DEFINITION, label) ?? binRange(DEFINITION, "low");
  if (range === undefined) throw new Error("no bin");
  const parameters = canonicalJson(claimParameters({ url: "https://bank.example/balance", method: "GET", field: "data.balance", range }));
  // Half the claims carry attestor-core's provider hash (keccak256 of the parameters: rebuilt), half another (sent).
  const providerHash = nonce % 2 === 0 ? keccak256(stringToBytes(parameters)) : `0x${"ab".repeat(32)}`;
  const context = canonicalJson({ ...claimContext(owner, sProven, `0x${nonce.toString(16).padStart(8, "0")}`), providerHash });
  const base = { provider: "http", parameters, owner: signer.address.toLowerCase() as Address, timestampS: at, context };
  const identifier = claimIdentifier(base);
  const claim = { ...base, identifier, epoch: 1 };
  return { claim, signature: await signer.signMessage({ message: claimSignText(claim, identifier) }) };
}

const ownerArb = fc.oneof(fc.constantFrom(ALICE, BOB, OPERATOR), addressArb);
const dataArb = fc.uint8Array({ maxLength: 40 }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex);
const labelArb = fc.constantFrom("low", "mid", "poor", "fair", "good", "adult", "nope");

/** One write, as a model: what it is, and the schema it names (so it may travel compact). */
const writeArb: fc.Arbitrary<{ item: CompactWrite["item"]; schemaId?: Hex; proven?: { label: string; nonce: number } }> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ schemaId: fc.constantFrom(s1, s2, s1), owner: ownerArb, data: dataArb, balance: fc.option(labelArb), score: fc.option(labelArb), age: fc.option(labelArb), provider: fc.constantFrom("http", "http", "http", "ftp") }).map((m) => {
    const bucket: Record<string, string> = {};
    // Fields in the schema's own order (age, score for SCHEMA_2), as the api writes them; a stray field sometimes.
    if (m.schemaId === s1 && m.balance !== null) bucket.balance = m.balance;
    if (m.schemaId === s2 && m.age !== null) bucket.age = m.age;
    if (m.schemaId === s2 && m.score !== null) bucket.score = m.score;
    if (m.schemaId === s1 && m.age !== null && m.age === "nope") bucket.age = "adult";
    return { item: { type: "create_attestation", params: { schema_id: m.schemaId, owner: m.owner, provider: m.provider, encrypted_data: m.data, bucket_values: bucket } }, schemaId: m.schemaId };
  }) },
  { weight: 1, arbitrary: fc.record({ owner: fc.constantFrom(ALICE, BOB), label: fc.constantFrom("low", "mid"), nonce: fc.integer({ min: 0, max: 5 }) }).map((m) => ({
    item: { type: "create_attestation", params: { schema_id: sProven, owner: m.owner, provider: "http", encrypted_data: "0x01" as Hex, bucket_values: { "data.balance": m.label } } },
    schemaId: sProven,
    proven: { label: m.label, nonce: m.nonce },
  })) },
  { weight: 1, arbitrary: fc.record({ owner: ownerArb }).map((m) => ({ item: { type: "grant_access", params: { requester: m.owner, schema_id: s2, expires_at: FAR, owner: ALICE } } })) },
  { weight: 1, arbitrary: fc.constantFrom({ item: { type: "set_role", params: { address: BOB, role: "attestor", enabled: false } } }, { item: { type: "batch", params: { items: [] } } }, { item: { type: "mint", params: {} } }) },
);

const senderArb = fc.constantFrom(ATTESTOR, ATTESTOR, ATTESTOR, OPERATOR, ALICE);

/** The writes of a model, proofs signed for the input's time (claims repeat now and then: replays). */
async function writesOf(models: { item: CompactWrite["item"]; schemaId?: Hex; proven?: { label: string; nonce: number } }[], at: number): Promise<CompactWrite[]> {
  const out: CompactWrite[] = [];
  for (const m of models) {
    const params = m.item.params as { owner: Address };
    const item = m.proven === undefined ? m.item : { ...m.item, params: { ...params, proofs: [await proofFor(params.owner, m.proven.label, at - 10, m.proven.nonce)] } };
    out.push({ item, schema: m.schemaId === undefined ? undefined : schemas.get(m.schemaId) });
  }
  return out;
}

interface Seen {
  status: string;
  notices: Hex[];
  reports: unknown[];
}

const seen = (o: DirectOutcome): Seen => ({ status: o.status, notices: o.notices, reports: o.reports.map((r) => JSON.parse(hexToUtf8(r)) as unknown) });

/** One case to both dapps: the JSON batch of `items` to one, `payload` to the other, at the same index and time. */
async function sendBoth(items: unknown[], payload: Hex, sender: Address): Promise<{ json: Seen; compact: Seen }> {
  const at = T0 + 1_000 + index;
  const [a, b] = [await json.advance(jsonToHex({ type: "batch", params: { items } }), sender, at, index), await compact.advance(payload, sender, at, index)];
  index += 1;
  return { json: seen(a), compact: seen(b) };
}

describe("compact batches against the JSON batch of the same items", () => {
  it("generated batches: the same verdicts, reports, notices and rows", { timeout: scaledTimeout(120_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(writeArb, { minLength: 1, maxLength: 12 }), senderArb, async (models, sender) => {
        const writes = await writesOf(models, T0 + 1_000 + index);
        const encoded = encodeCompactBatch(writes);
        const out = await sendBoth(writes.map((w) => w.item), encoded.payload, sender);
        expect(out.compact).toEqual(out.json);
        expect(fullDigest(compact.db.$client)).toBe(fullDigest(json.db.$client));
        count(`generated:${out.json.status}`);
        count(`compact items ${encoded.compactItems > 0 ? "some" : "none"}`);
      }),
      fcOptions(200),
    );
  });

  const mutation = fc.oneof(
    fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ op: fc.constant("delete" as const), at: fc.nat(), n: fc.integer({ min: 1, max: 6 }) }),
    fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
    fc.record({ op: fc.constant("append" as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }),
    // Inside an item's body, keeping every length: what the item says changes, not where it ends.
    fc.record({ op: fc.constant("body" as const), item: fc.nat(), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  );

  it("mutated batches: split or rejected whole; each item as its JSON twin, or rejected alone naming itself and a byte", { timeout: scaledTimeout(120_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(writeArb, { minLength: 1, maxLength: 6 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), senderArb, async (models, mutations, sender) => {
        const writes = await writesOf(models, T0 + 1_000 + index);
        let bytes = [...hexToBytes(encodeCompactBatch(writes).payload)];
        for (const m of mutations) {
          if (m.op === "body") {
            const slices = parseCompactBatch(hexToBytes(encodeCompactBatch(writes).payload)).items;
            const slice = slices[m.item % slices.length];
            if (slice !== undefined && slice.body.length > 0 && slice.bodyOffset + slice.body.length <= bytes.length) bytes[slice.bodyOffset + (m.at % slice.body.length)] = m.value;
            continue;
          }
          // The marker stays: a first byte other than 0xc1 is JSON text, fuzzed in dapp-fuzz.test.ts.
          const at = m.op === "append" ? 0 : 1 + (m.at % Math.max(1, bytes.length - 1));
          if (m.op === "flip") bytes[at] = ((bytes[at] ?? 0) ^ (1 << m.bit)) & 0xff;
          else if (m.op === "set") bytes[at] = m.value;
          else if (m.op === "delete") bytes.splice(at, m.n);
          else if (m.op === "insert") bytes.splice(at, 0, ...m.bytes);
          else bytes = [...bytes, ...m.bytes];
        }
        const payload = `0x${Buffer.from(bytes).toString("hex")}` as Hex;
        let container: CompactContainer;
        try {
          container = parseCompactBatch(Uint8Array.from(bytes));
        } catch (error) {
          if (!(error instanceof CompactProblem)) throw error;
          const before = fullDigest(compact.db.$client);
          const out = seen(await compact.advance(payload, sender, T0 + 1_000 + index, index));
          index += 1;
          expect(out).toEqual({ status: "reject", notices: [], reports: [{ error: { code: "INVALID_PAYLOAD", message: error.message } }] });
          expect(error.message).toMatch(/^compact batch, byte \d+: /);
          expect(fullDigest(compact.db.$client)).toBe(before);
          count("mutated:whole rejected");
          return;
        }
        // The JSON twin of each item: what it decodes to, or an item that fails without a trace.
        const failing = new Set<number>();
        const items = container.items.map((_, i) => {
          try {
            return compactItemToJson(container, i, directory);
          } catch (error) {
            if (!(error instanceof CompactProblem)) throw error;
            failing.add(i);
            return { type: "create_attestation", params: {} };
          }
        });
        const out = await sendBoth(items, payload, sender);
        const mine = (o: Seen) => ({ ...o, reports: o.reports.filter((r) => !failing.has((r as { item: number }).item)) });
        expect(mine(out.compact)).toEqual(mine(out.json));
        for (const report of out.compact.reports as { item: number; error: { message: string } }[]) {
          if (failing.has(report.item)) expect(report.error.message).toMatch(new RegExp(`^compact batch item ${report.item}, byte \\d+: `));
        }
        expect((out.compact.reports as { item: number }[]).map((r) => r.item)).toEqual((out.json.reports as { item: number }[]).map((r) => r.item));
        // Every row alike; the bookkeeping keeps the last input's reports, whose texts differ for unread items.
        expect(stateDigest(compact.db.$client)).toBe(stateDigest(json.db.$client));
        count(`mutated:${out.compact.status}${failing.size > 0 ? " (items unread)" : ""}`);
      }),
      fcOptions(400),
    );
  });
});
