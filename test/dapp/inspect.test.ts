/**
 * Inspect queries through the rollup HTTP server protocol: every type answered with the exact result
 * (byte-exact report), and rejected with each exact /exception message; inspect never writes.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import type { QueryResults } from "../../common/wire.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { SCHEMA, SCHEMA_2, UNKNOWN_ID } from "./fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, startHarness, T0, type Harness } from "./harness.ts";

let h: Harness;
const s1 = schemaIdOf(SCHEMA);
const s2 = schemaIdOf(SCHEMA_2);
/** Input indexes of what the fixture creates, for the ids derived from them. */
const at: Record<string, number> = {};

beforeAll(async () => {
  h = await startHarness();
  const steps: [string, string, unknown, string][] = [
    ["schema1", "register_schema", SCHEMA, ADMIN],
    ["schema2", "register_schema", SCHEMA_2, ADMIN],
    ["role", "set_role", { address: ATTESTOR, role: "attestor", enabled: true }, ADMIN],
    ["att1", "create_attestation", { schema_id: s1, owner: ALICE, provider: "http", encrypted_data: "0x0102", bucket_values: { balance: "low" } }, ATTESTOR],
    ["att2", "create_attestation", { schema_id: s2, owner: ALICE, provider: "http", encrypted_data: "0x03", bucket_values: { score: "good", age: "adult" } }, ATTESTOR],
    ["att3", "create_attestation", { schema_id: s1, owner: BOB, provider: "http", encrypted_data: "0x04", bucket_values: {} }, ATTESTOR],
    // Expires 100 s after its own input, long before the last input's time below.
    ["grantShort", "grant_access", { requester: BOB, schema_id: s2, expires_at: T0 + 107 }, ALICE],
    ["grantLong", "grant_access", { requester: BOB, schema_id: s1, expires_at: T0 + 10_000 }, ALICE],
    ["grantRevoked", "grant_access", { requester: ATTESTOR, schema_id: s1, expires_at: T0 + 10_000 }, ALICE],
  ];
  for (const [label, type, params, sender] of steps) {
    const outcome = await h.input(type, params, { sender, timestamp: T0 + Object.keys(at).length + 1 });
    expect(outcome.status).toBe("accept");
    at[label] = outcome.index;
  }
  const revoke = await h.input("revoke_grant", { grant_id: inputIdOf("grant_access", at.grantRevoked as number) }, { sender: ALICE, timestamp: T0 + 500 });
  expect(revoke.status).toBe("accept");
});

afterAll(async () => {
  await h.close();
});

const attId = (label: string) => inputIdOf("create_attestation", at[label] as number);
const grantId = (label: string) => inputIdOf("grant_access", at[label] as number);

const summary1 = { schema_id: s1, name: "bank.example/web", provider_type: "http", bucket_definitions: SCHEMA.bucketDefinitions };
/** Canonical storage sorts the keys of bucket_definitions. */
const summary2 = {
  schema_id: s2,
  name: "Credit score",
  provider_type: "http",
  bucket_definitions: { age: SCHEMA_2.bucketDefinitions.age, score: SCHEMA_2.bucketDefinitions.score },
};
const att1 = () => ({
  attestation_id: attId("att1"),
  schema_id: s1,
  owner: ALICE,
  encrypted_data: "0x0102",
  bucket_values: { balance: "low" },
  timestamp: T0 + 4,
  input_index: at.att1 as number,
  item_index: null,
  attestor: null,
  attestors: [],
  attester: ATTESTOR,
  expires_at: null,
  revocation: null,
  // At the rollup's clock: the latest input (T0 + 500), 496 s into a half-life of an hour.
  status: "valid",
  freshness: 2 ** (-496 / 3600),
  at: T0 + 500,
});
const att2 = () => ({
  attestation_id: attId("att2"),
  schema_id: s2,
  owner: ALICE,
  encrypted_data: "0x03",
  bucket_values: { score: "good", age: "adult" },
  timestamp: T0 + 5,
  input_index: at.att2 as number,
  item_index: null,
  attestor: null,
  attestors: [],
  attester: ATTESTOR,
  expires_at: null,
  revocation: null,
  status: "valid",
  freshness: 2 ** (-495 / 86400),
  at: T0 + 500,
});

describe("answered queries", () => {
    // Params that name created ids are thunks: the ids exist once beforeAll has run.
  const cases: { name: string; type: keyof QueryResults; params?: object | (() => object); expected: () => unknown }[] = [
    { name: "all_provider_schemas", type: "all_provider_schemas", params: {}, expected: () => [summary1, summary2] },
    {
      name: "all_provider_schemas with descriptions",
      type: "all_provider_schemas",
      params: { include_description: true },
      expected: () => [
        { schema_id: s1, name: summary1.name, description: "", provider_type: "http", bucket_definitions: summary1.bucket_definitions },
        { schema_id: s2, name: summary2.name, description: "A credit bureau's score", provider_type: "http", bucket_definitions: summary2.bucket_definitions },
      ],
    },
    { name: "all_provider_schemas, second page", type: "all_provider_schemas", params: { limit: 1, offset: 1 }, expected: () => [summary2] },
    { name: "all_provider_schemas past the end", type: "all_provider_schemas", params: { offset: 5 }, expected: () => [] },
    {
      name: "provider_schema",
      type: "provider_schema",
      params: { schema_id: s2 },
      expected: () => ({ ...summary2, data_keys: ["score", "age"], freshness_half_life: 86400, domain: SCHEMA_2.domain, proof: "none", attestor_quorum: 1, validity_period: null, require_signed_consent: false, sealing: "admin", unique_per_account: false, account_id_field: null }),
    },
    {
      name: "provider_schema with description, id in upper case",
      type: "provider_schema",
      params: { schema_id: `0x${s1.slice(2).toUpperCase()}`, include_description: true },
      expected: () => ({
        schema_id: s1,
        name: summary1.name,
        description: "",
        provider_type: "http",
        bucket_definitions: summary1.bucket_definitions,
        data_keys: ["balance"],
        freshness_half_life: 3600,
        domain: SCHEMA.domain,
        proof: "none",
        attestor_quorum: 1,
        validity_period: null,
        require_signed_consent: false,
        sealing: "admin",
        unique_per_account: false,
        account_id_field: null,
      }),
    },
    {
      name: "attestations_by_owner, in creation order with block numbers",
      type: "attestations_by_owner",
      params: { owner: ALICE.toUpperCase().replace("0X", "0x") },
      expected: () => [
        { ...att1(), block_number: 100 + (at.att1 as number) },
        { ...att2(), block_number: 100 + (at.att2 as number) },
      ],
    },
    {
      name: "attestations_by_owner, paginated",
      type: "attestations_by_owner",
      params: { owner: ALICE, limit: 1, offset: 1 },
      expected: () => [{ ...att2(), block_number: 100 + (at.att2 as number) }],
    },
    { name: "attestations_by_owner of an owner without any", type: "attestations_by_owner", params: { owner: ADMIN }, expected: () => [] },
    { name: "attestation", type: "attestation", params: () => ({ attestation_id: attId("att1") }), expected: att1 },
    {
      name: "attestation at a given time: one half-life after it was made, freshness 0.5",
      type: "attestation",
      params: () => ({ attestation_id: attId("att1"), at: T0 + 4 + 3600 }),
      expected: () => ({ ...att1(), freshness: 0.5, at: T0 + 3604 }),
    },
    {
      name: "check_access at the latest input's time: the short grant has expired",
      type: "check_access",
      params: { owner: ALICE, requester: BOB },
      expected: () => ({ has_access: true, grants: [{ grant_id: grantId("grantLong"), schema_id: s1, expires_at: T0 + 10_000, consent: "owner" }] }),
    },
    {
      name: "check_access at a given time",
      type: "check_access",
      params: { owner: ALICE, requester: BOB, at: T0 + 50 },
      expected: () => ({
        has_access: true,
        grants: [
          { grant_id: grantId("grantShort"), schema_id: s2, expires_at: T0 + 107, consent: "owner" },
          { grant_id: grantId("grantLong"), schema_id: s1, expires_at: T0 + 10_000, consent: "owner" },
        ],
      }),
    },
    {
      name: "check_access at the expiry second itself: expired",
      type: "check_access",
      params: { owner: ALICE, requester: BOB, at: T0 + 10_000 },
      expected: () => ({ has_access: false, grants: [] }),
    },
    { name: "check_access with a revoked grant only", type: "check_access", params: { owner: ALICE, requester: ATTESTOR }, expected: () => ({ has_access: false, grants: [] }) },
    { name: "check_access the other way round", type: "check_access", params: { owner: BOB, requester: ALICE }, expected: () => ({ has_access: false, grants: [] }) },
    {
      name: "grants_by_owner: unrevoked, expired included",
      type: "grants_by_owner",
      params: { owner: ALICE },
      expected: () => [
        { grant_id: grantId("grantShort"), requester: BOB, schema_id: s2, created_at: T0 + 7, expires_at: T0 + 107, consent: "owner" },
        { grant_id: grantId("grantLong"), requester: BOB, schema_id: s1, created_at: T0 + 8, expires_at: T0 + 10_000, consent: "owner" },
      ],
    },
    {
      name: "grants_by_owner, paginated",
      type: "grants_by_owner",
      params: { owner: ALICE, limit: 1 },
      expected: () => [{ grant_id: grantId("grantShort"), requester: BOB, schema_id: s2, created_at: T0 + 7, expires_at: T0 + 107, consent: "owner" }],
    },
    { name: "health", type: "health", params: {}, expected: () => ({ status: "ok", database: "ok", processed_inputs: 10 }) },
    { name: "health without params", type: "health", expected: () => ({ status: "ok", database: "ok", processed_inputs: 10 }) },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const params = typeof c.params === "function" ? c.params() : c.params;
      const payload = params === undefined ? jsonToHex({ type: c.type }) : jsonToHex({ type: c.type, params });
      const outcome = await h.server.inspect(payload);
      expect(outcome).toEqual({ status: "Accepted", reports: [jsonToHex(c.expected())], exception: null });
    });
  }

  it("accepts a payload that is still percent-encoded", async () => {
    const text = encodeURIComponent(JSON.stringify({ type: "attestation", params: { attestation_id: attId("att1") } }));
    const outcome = await h.server.inspect(utf8ToHex(text));
    expect(outcome.reports).toEqual([jsonToHex(att1())]);
  });

  it("answers a query followed by the query string a v1 node hands on (`?x=1`)", async () => {
    const json = JSON.stringify({ type: "attestation", params: { attestation_id: attId("att1") } });
    for (const text of [`${json}?x=1`, `${encodeURIComponent(json)}?x=1&y=%3F`, `${json}?`]) {
      expect((await h.server.inspect(utf8ToHex(text))).reports).toEqual([jsonToHex(att1())]);
    }
    const broken = await h.server.inspect(utf8ToHex(`{"type":?x=1`));
    expect(broken.exception).toBe(utf8ToHex("invalid query: not JSON"));
  });
});

describe("rejected queries", () => {
  const cases: { name: string; payload: () => Hex; message: string | { startsWith: string } }[] = [
    { name: "unknown type", payload: () => jsonToHex({ type: "all_attestations", params: {} }), message: "unknown query type: all_attestations" },
    { name: "a prototype name is no type", payload: () => jsonToHex({ type: "constructor", params: {} }), message: "unknown query type: constructor" },
    { name: "missing schema_id", payload: () => jsonToHex({ type: "provider_schema", params: {} }), message: "missing required parameter: schema_id" },
    { name: "missing attestation_id", payload: () => jsonToHex({ type: "attestation", params: {} }), message: "missing required parameter: attestation_id" },
    { name: "missing owner", payload: () => jsonToHex({ type: "attestations_by_owner", params: {} }), message: "missing required parameter: owner" },
    { name: "missing requester", payload: () => jsonToHex({ type: "check_access", params: { owner: ALICE } }), message: "missing required parameter: requester" },
    { name: "missing owner of grants", payload: () => jsonToHex({ type: "grants_by_owner" }), message: "missing required parameter: owner" },
    { name: "unknown schema", payload: () => jsonToHex({ type: "provider_schema", params: { schema_id: UNKNOWN_ID } }), message: `schema not found: ${UNKNOWN_ID}` },
    { name: "schema id that cannot be one", payload: () => jsonToHex({ type: "provider_schema", params: { schema_id: "abc" } }), message: "schema not found: abc" },
    { name: "unknown attestation", payload: () => jsonToHex({ type: "attestation", params: { attestation_id: UNKNOWN_ID } }), message: `attestation not found: ${UNKNOWN_ID}` },
    { name: "owner not an address", payload: () => jsonToHex({ type: "attestations_by_owner", params: { owner: "alice" } }), message: "invalid query: owner: expected a 0x-prefixed 20-byte hex address" },
    { name: "schema_id of the wrong type", payload: () => jsonToHex({ type: "provider_schema", params: { schema_id: 7 } }), message: { startsWith: "invalid query: schema_id: " } },
    { name: "limit 0", payload: () => jsonToHex({ type: "all_provider_schemas", params: { limit: 0 } }), message: { startsWith: "invalid query: limit: " } },
    { name: "limit 1001", payload: () => jsonToHex({ type: "grants_by_owner", params: { owner: ALICE, limit: 1001 } }), message: { startsWith: "invalid query: limit: " } },
    { name: "negative offset", payload: () => jsonToHex({ type: "attestations_by_owner", params: { owner: ALICE, offset: -1 } }), message: { startsWith: "invalid query: offset: " } },
    { name: "at not an integer", payload: () => jsonToHex({ type: "check_access", params: { owner: ALICE, requester: BOB, at: "now" } }), message: { startsWith: "invalid query: at: " } },
    { name: "not JSON", payload: () => utf8ToHex("{type: health}"), message: "invalid query: not JSON" },
    { name: "bad percent-encoding", payload: () => utf8ToHex("%7B%zz"), message: "invalid query: not JSON" },
    { name: "not hex", payload: () => "0xnothex" as Hex, message: "invalid query: not 0x-prefixed hex with an even number of digits" },
    { name: "not UTF-8", payload: () => "0xc3" as Hex, message: "invalid query: payload is not valid UTF-8" },
    { name: "not an object", payload: () => jsonToHex("health"), message: "invalid query: expected a JSON object {type, params}" },
    { name: "params not an object", payload: () => jsonToHex({ type: "health", params: [] }), message: "invalid query: params must be a JSON object" },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const outcome = await h.server.inspect(c.payload());
      expect(outcome.status).toBe("Rejected");
      expect(outcome.reports).toEqual([]);
      const exception = outcome.exception as Hex;
      if (typeof c.message === "string") {
        expect(exception).toBe(utf8ToHex(c.message));
      } else {
        expect(Buffer.from(exception.slice(2), "hex").toString("utf8").startsWith(c.message.startsWith)).toBe(true);
      }
    });
  }
});

describe("inspect never writes", () => {
  it("leaves every table, bookkeeping included, as it was", async () => {
    const before = databaseDigest(h.db.$client);
    for (const type of ["all_provider_schemas", "health", "grants_by_owner", "nope"]) await h.query(type, { owner: ALICE });
    expect(databaseDigest(h.db.$client)).toBe(before);
  });
});
