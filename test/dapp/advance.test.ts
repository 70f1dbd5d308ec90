/**
 * Advance inputs through the rollup HTTP server protocol into the real dapp: every kind accepted, and
 * rejected for each reason, with byte-exact notices and reports; a rejection leaves the state unchanged.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { inputIdOf, keyIdOf, schemaIdOf } from "../../common/ids.ts";
import type { DappErrorCode, NoticeEvent } from "../../common/wire.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, OPERATOR, startReadyHarness, T0, type Harness } from "./harness.ts";
import { PUBLIC_KEY, SCHEMA, SCHEMA_2, UNKNOWN_ID } from "./fixtures.ts";

const CAROL = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc" as const;
const schemaId = schemaIdOf(SCHEMA);
const keyBytes = Buffer.from(PUBLIC_KEY, "base64");

/** Addresses and ids are case-insensitive on the way in. */
function upperHex(value: string): string {
  return `0x${value.slice(2).toUpperCase()}`;
}

let h: Harness;
/** Grant ids created during the run, by label, for later cases. */
const grantIds = new Map<string, Hex>();

beforeAll(async () => {
  h = await startReadyHarness(SCHEMA);
});

afterAll(async () => {
  await h.close();
});

function stateDigest(): string {
  return databaseDigest(h.db.$client, { includeMeta: false });
}

interface Send {
  type: string;
  params: unknown;
  sender?: string;
}

describe("accepted inputs", () => {
  interface Accepted extends Send {
    name: string;
    /** The notices expected, given the input's index. */
    notices: (index: number) => NoticeEvent[];
    /** Remember the grant created, for later cases. */
    grant?: string;
    /** The input's block time, when its notice carries it. */
    timestamp?: number;
  }

  const cases: Accepted[] = [
    {
      name: "register_schema with a name and description",
      type: "register_schema",
      params: SCHEMA_2,
      notices: () => [{ event: "schema:registered", data: { schema_id: schemaIdOf(SCHEMA_2) } }],
    },
    {
      name: "register_schema of content already registered: no change, no notice",
      type: "register_schema",
      params: { ...SCHEMA, name: "another name", description: "another description" },
      notices: () => [],
    },
    {
      name: "register_encryption_key",
      type: "register_encryption_key",
      params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" },
      notices: () => [{ event: "key:registered", data: { keyId: keyIdOf(keyBytes) } }],
    },
    {
      name: "create_attestation by an attestor, owner in checksum case",
      type: "create_attestation",
      sender: ATTESTOR,
      params: {
        schema_id: schemaId,
        owner: upperHex(ALICE),
        provider: "http",
        encrypted_data: "0xc0ffee",
        bucket_values: { balance: "mid" },
      },
      notices: (i) => [
        {
          event: "attestation:created",
          // Key order is part of the notice: the specification's bytes, which clients read and replays compare.
          data: { claimId: inputIdOf("create_attestation", i), owner: ALICE, provider: "http", schema_id: schemaId, bucket_values: { balance: "mid" }, attester: ATTESTOR, timestamp: T0 + 500, expires_at: null, freshness_half_life: 3600 },
        },
      ],
      timestamp: T0 + 500,
    },
    {
      name: "create_attestation by an admin (admins hold every role), no bucket values",
      type: "create_attestation",
      sender: ADMIN,
      params: { schema_id: schemaId, owner: BOB, provider: "http", encrypted_data: "0x00", bucket_values: {} },
      notices: (i) => [
        { event: "attestation:created", data: { claimId: inputIdOf("create_attestation", i), owner: BOB, provider: "http", schema_id: schemaId, bucket_values: {}, attester: ADMIN, timestamp: T0 + 501, expires_at: null, freshness_half_life: 3600 } },
      ],
      timestamp: T0 + 501,
    },
    {
      name: "grant_access by the owner",
      type: "grant_access",
      sender: ALICE,
      params: { requester: BOB, schema_id: schemaId, expires_at: 2_000_000_000 },
      notices: (i) => [{ event: "grant:created", data: { grantId: inputIdOf("grant_access", i), owner: ALICE, requester: BOB } }],
      grant: "alice→bob",
    },
    {
      name: "grant_access naming its own sender as owner",
      type: "grant_access",
      sender: ALICE,
      params: { requester: CAROL, schema_id: schemaId, expires_at: 2_000_000_000, owner: ALICE },
      notices: (i) => [{ event: "grant:created", data: { grantId: inputIdOf("grant_access", i), owner: ALICE, requester: CAROL } }],
      grant: "alice→carol",
    },
    {
      name: "grant_access relayed by an operator",
      type: "grant_access",
      sender: OPERATOR,
      params: { requester: ALICE, schema_id: schemaId, expires_at: 2_000_000_000, owner: BOB },
      notices: (i) => [{ event: "grant:created", data: { grantId: inputIdOf("grant_access", i), owner: BOB, requester: ALICE } }],
      grant: "bob→alice",
    },
    {
      name: "set_role enabling a role",
      type: "set_role",
      params: { address: CAROL, role: "admin", enabled: true },
      notices: () => [],
    },
    {
      name: "set_role removing a granted admin",
      type: "set_role",
      params: { address: CAROL, role: "admin", enabled: false },
      notices: () => [],
    },
    {
      name: "set_role removing a role never held",
      type: "set_role",
      params: { address: CAROL, role: "operator", enabled: false },
      notices: () => [],
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const outcome = await h.input(c.type, c.params, { sender: c.sender ?? ADMIN, ...(c.timestamp === undefined ? {} : { timestamp: c.timestamp }) });
      expect(outcome.status).toBe("accept");
      expect(outcome.reports).toEqual([]);
      expect(outcome.notices).toEqual(c.notices(outcome.index).map((n) => jsonToHex(n)));
      if (c.grant) grantIds.set(c.grant, inputIdOf("grant_access", outcome.index));
    });
  }

  it("revoke_grant by the owner", async () => {
    const grantId = grantIds.get("alice→carol") as Hex;
    const outcome = await h.input("revoke_grant", { grant_id: grantId }, { sender: ALICE });
    expect(outcome.status).toBe("accept");
    expect(outcome.notices).toEqual([jsonToHex({ event: "grant:revoked", data: { grantId, owner: ALICE } })]);
  });

  it("revoke_grant relayed by an operator, grant id in upper case", async () => {
    const grantId = grantIds.get("bob→alice") as Hex;
    const outcome = await h.input("revoke_grant", { grant_id: upperHex(grantId), owner: BOB }, { sender: OPERATOR });
    expect(outcome.status).toBe("accept");
    expect(outcome.notices).toEqual([jsonToHex({ event: "grant:revoked", data: { grantId, owner: BOB } })]);
  });

  it("grant_access again after a revocation is not a duplicate", async () => {
    const outcome = await h.input("grant_access", { requester: CAROL, schema_id: schemaId, expires_at: 2_000_000_000 }, { sender: ALICE });
    expect(outcome.status).toBe("accept");
    expect(outcome.notices).toHaveLength(1);
  });
});

describe("rejected inputs", () => {
  interface Rejected extends Partial<Send> {
    name: string;
    /** A raw payload instead of `{type, params}`. */
    raw?: Hex;
    code: DappErrorCode;
    /** The exact message, or for zod's own wording the field path it must start with. */
    message: string | (() => string) | { startsWith: string };
    timestamp?: number;
  }

  const attestation = { schema_id: schemaId, owner: ALICE, provider: "http", encrypted_data: "0x01", bucket_values: { balance: "low" } };
  const longHex = `0x${"00".repeat(16 * 1024 + 1)}`;

  const cases: Rejected[] = [
    { name: "bad hex", raw: "0xzz" as Hex, code: "INVALID_PAYLOAD", message: "payload: not 0x-prefixed hex with an even number of digits" },
    { name: "odd hex", raw: "0xabc" as Hex, code: "INVALID_PAYLOAD", message: "payload: not 0x-prefixed hex with an even number of digits" },
    { name: "non-UTF-8", raw: "0xfffe" as Hex, code: "INVALID_PAYLOAD", message: "payload is not valid UTF-8" },
    { name: "non-JSON", raw: utf8ToHex("register_schema"), code: "INVALID_PAYLOAD", message: "payload: not JSON" },
    { name: "an array", raw: jsonToHex([1, 2]), code: "INVALID_PAYLOAD", message: "payload: expected a JSON object {type, params}" },
    { name: "JSON null", raw: jsonToHex(null), code: "INVALID_PAYLOAD", message: "payload: expected a JSON object {type, params}" },
    { name: "type not a string", raw: jsonToHex({ type: 1, params: {} }), code: "INVALID_PAYLOAD", message: "payload: expected a JSON object {type, params}" },
    { name: "params not an object", raw: jsonToHex({ type: "set_role", params: [] }), code: "INVALID_PAYLOAD", message: "payload: params must be a JSON object" },
    { name: "unknown kind", type: "mint", params: {}, code: "UNKNOWN_KIND", message: "unknown input kind: mint" },
    { name: "a prototype name is no kind", type: "toString", params: {}, code: "UNKNOWN_KIND", message: "unknown input kind: toString" },
    { name: "missing param", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, schema_id: undefined }, code: "INVALID_PARAMS", message: "missing required parameter: schema_id" },
    { name: "missing nested param", type: "register_schema", params: { ...SCHEMA, bucketDefinitions: { balance: { boundaries: [0, 1] } } }, code: "INVALID_PARAMS", message: "missing required parameter: bucketDefinitions.balance.labels" },
    { name: "params left out", raw: jsonToHex({ type: "set_role" }), code: "INVALID_PARAMS", message: "missing required parameter: address" },
    { name: "owner not an address", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, owner: "0x1234" }, code: "INVALID_PARAMS", message: "owner: expected a 0x-prefixed 20-byte hex address" },
    { name: "schema_id not an id", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, schema_id: "0x12" }, code: "INVALID_PARAMS", message: "schema_id: expected a 0x-prefixed 32-byte hex id" },
    { name: "encrypted_data empty", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, encrypted_data: "0x" }, code: "INVALID_PARAMS", message: "encrypted_data: expected non-empty 0x-prefixed hex bytes" },
    { name: "encrypted_data too long", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, encrypted_data: longHex }, code: "INVALID_PARAMS", message: "encrypted_data: at most 16384 bytes" },
    { name: "bucket field not in the schema", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, bucket_values: { score: "low" } }, code: "INVALID_PARAMS", message: `bucket_values.score: not a bucket field of schema ${schemaId}` },
    { name: "label not in the definition", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, bucket_values: { balance: "huge" } }, code: "INVALID_PARAMS", message: 'bucket_values.balance: "huge" is not one of the field\'s labels' },
    { name: "a prototype name is no bucket field", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, bucket_values: { constructor: "low" } }, code: "INVALID_PARAMS", message: `bucket_values.constructor: not a bucket field of schema ${schemaId}` },
    { name: "__proto__ as a bucket field", type: "create_attestation", sender: ATTESTOR, raw: utf8ToHex(`{"type":"create_attestation","params":{"schema_id":"${schemaId}","owner":"${ALICE}","provider":"http","encrypted_data":"0x01","bucket_values":{"__proto__":"low"}}}`), code: "INVALID_PARAMS", message: { startsWith: "bucket_values.__proto__: " } },
    { name: "provider not the schema's", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, provider: "zktls" }, code: "INVALID_PARAMS", message: 'provider: "zktls" is not the schema\'s provider_type "http"' },
    { name: "bucket labels miscounted", type: "register_schema", params: { ...SCHEMA, bucketDefinitions: { balance: { boundaries: [0, 1, 2], labels: ["a"] } } }, code: "INVALID_PARAMS", message: "bucketDefinitions.balance: labels must number boundaries or boundaries - 1 (got 1 labels for 3 boundaries)" },
    { name: "bucket boundaries descending", type: "register_schema", params: { ...SCHEMA, bucketDefinitions: { balance: { boundaries: [2, 1], labels: ["a"] } } }, code: "INVALID_PARAMS", message: "bucketDefinitions.balance: boundaries must be strictly ascending" },
    { name: "bucket definition with an unknown key", type: "register_schema", params: { ...SCHEMA, bucketDefinitions: { balance: { field: "balance", boundaries: [0, 1], labels: ["a"] } } }, code: "INVALID_PARAMS", message: { startsWith: "bucketDefinitions.balance: " } },
    { name: "name too long", type: "register_schema", params: { ...SCHEMA, name: "n".repeat(257) }, code: "INVALID_PARAMS", message: { startsWith: "name: " } },
    { name: "too many data keys", type: "register_schema", params: { ...SCHEMA, dataKeys: Array.from({ length: 65 }, (_, i) => `k${i}`) }, code: "INVALID_PARAMS", message: { startsWith: "dataKeys: " } },
    { name: "freshnessHalfLife not positive", type: "register_schema", params: { ...SCHEMA, freshnessHalfLife: 0 }, code: "INVALID_PARAMS", message: { startsWith: "freshnessHalfLife: " } },
    { name: "public key of 31 bytes", type: "register_encryption_key", params: { publicKey: Buffer.alloc(31, 1).toString("base64"), algorithm: "nacl-box" }, code: "INVALID_PARAMS", message: "publicKey: expected the base64 of a 32-byte NaCl public key" },
    { name: "public key not base64", type: "register_encryption_key", params: { publicKey: "not base64!", algorithm: "nacl-box" }, code: "INVALID_PARAMS", message: "publicKey: expected the base64 of a 32-byte NaCl public key" },
    { name: "algorithm left out", type: "register_encryption_key", params: { publicKey: PUBLIC_KEY }, code: "INVALID_PARAMS", message: "missing required parameter: algorithm" },
    { name: "role left out", type: "set_role", params: { address: BOB, enabled: true }, code: "INVALID_PARAMS", message: "missing required parameter: role" },
    { name: "another algorithm", type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "rsa" }, code: "INVALID_PARAMS", message: { startsWith: "algorithm: " } },
    { name: "unknown role", type: "set_role", params: { address: BOB, role: "king", enabled: true }, code: "INVALID_PARAMS", message: { startsWith: "role: " } },
    { name: "expires_at not later than the input", type: "grant_access", sender: ALICE, params: { requester: BOB, schema_id: schemaId, expires_at: 1_000 }, code: "INVALID_PARAMS", message: { startsWith: "expires_at: must be later than the input's timestamp " } },
    { name: "expires_at not an integer", type: "grant_access", sender: ALICE, params: { requester: BOB, schema_id: schemaId, expires_at: 2e9 + 0.5 }, code: "INVALID_PARAMS", message: { startsWith: "expires_at: " } },
    { name: "removing a permanent admin", type: "set_role", params: { address: ADMIN, role: "admin", enabled: false }, code: "INVALID_PARAMS", message: `address: ${ADMIN} is a permanent admin (DAPP_ADMINS) and cannot be removed` },
    { name: "attestation from a non-attestor", type: "create_attestation", sender: BOB, params: attestation, code: "UNAUTHORIZED_SENDER", message: `sender ${BOB} does not hold the attestor role` },
    { name: "attestation from an operator", type: "create_attestation", sender: OPERATOR, params: attestation, code: "UNAUTHORIZED_SENDER", message: `sender ${OPERATOR} does not hold the attestor role` },
    { name: "schema from an attestor", type: "register_schema", sender: ATTESTOR, params: SCHEMA, code: "UNAUTHORIZED_SENDER", message: `sender ${ATTESTOR} does not hold the admin role` },
    { name: "key from a user", type: "register_encryption_key", sender: ALICE, params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" }, code: "UNAUTHORIZED_SENDER", message: `sender ${ALICE} does not hold the admin role` },
    { name: "set_role from an operator", type: "set_role", sender: OPERATOR, params: { address: OPERATOR, role: "admin", enabled: true }, code: "UNAUTHORIZED_SENDER", message: `sender ${OPERATOR} does not hold the admin role` },
    { name: "grant relayed by a non-operator", type: "grant_access", sender: BOB, params: { requester: BOB, schema_id: schemaId, expires_at: 2e9, owner: ALICE }, code: "UNAUTHORIZED_SENDER", message: `sender ${BOB} may not act for owner ${ALICE}: operator role needed` },
    { name: "revoke relayed by a non-operator", type: "revoke_grant", sender: BOB, params: { grant_id: UNKNOWN_ID, owner: ALICE }, code: "UNAUTHORIZED_SENDER", message: `sender ${BOB} may not act for owner ${ALICE}: operator role needed` },
    { name: "attestation on an unknown schema", type: "create_attestation", sender: ATTESTOR, params: { ...attestation, schema_id: UNKNOWN_ID }, code: "SCHEMA_NOT_FOUND", message: `schema not found: ${UNKNOWN_ID}` },
    { name: "grant on an unknown schema", type: "grant_access", sender: ALICE, params: { requester: BOB, schema_id: UNKNOWN_ID, expires_at: 2e9 }, code: "SCHEMA_NOT_FOUND", message: `schema not found: ${UNKNOWN_ID}` },
    { name: "the same key twice", type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" }, code: "DUPLICATE", message: `encryption key ${keyIdOf(keyBytes)} is already registered` },
    { name: "an active grant twice", type: "grant_access", sender: ALICE, params: { requester: BOB, schema_id: schemaId, expires_at: 2_100_000_000 }, code: "DUPLICATE", message: () => `an active grant for this owner, requester and schema already exists: ${grantIds.get("alice→bob")}` },
    { name: "an active grant twice, relayed", type: "grant_access", sender: OPERATOR, params: { requester: BOB, schema_id: schemaId, expires_at: 2_100_000_000, owner: upperHex(ALICE) }, code: "DUPLICATE", message: () => `an active grant for this owner, requester and schema already exists: ${grantIds.get("alice→bob")}` },
    { name: "revoking an unknown grant", type: "revoke_grant", sender: ALICE, params: { grant_id: UNKNOWN_ID }, code: "GRANT_NOT_FOUND", message: `grant not found: ${UNKNOWN_ID}` },
    { name: "revoking a revoked grant", type: "revoke_grant", sender: ALICE, params: { grant_id: "alice→carol" }, code: "GRANT_NOT_FOUND", message: () => `grant not found: ${grantIds.get("alice→carol")}` },
    { name: "revoking another owner's grant", type: "revoke_grant", sender: BOB, params: { grant_id: "alice→bob" }, code: "NOT_OWNER", message: () => `grant ${grantIds.get("alice→bob")} does not belong to ${BOB}` },
    { name: "an operator revoking for the wrong owner", type: "revoke_grant", sender: OPERATOR, params: { grant_id: "alice→bob", owner: BOB }, code: "NOT_OWNER", message: () => `grant ${grantIds.get("alice→bob")} does not belong to ${BOB}` },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const params = resolveGrantLabels(c.params);
      const before = stateDigest();
      const outcome = c.raw ? await h.raw(c.raw, { sender: c.sender ?? ADMIN }) : await h.input(c.type as string, params, { sender: c.sender ?? ADMIN });
      expect(outcome.status).toBe("reject");
      expect(outcome.notices).toEqual([]);
      expect(outcome.reports).toHaveLength(1);
      const report = outcome.reports[0] as Hex;
      if (typeof c.message === "object") {
        const decoded = decode(report) as { error: { code: string; message: string } };
        expect(decoded.error.code).toBe(c.code);
        expect(decoded.error.message.startsWith(c.message.startsWith)).toBe(true);
        expect(report).toBe(jsonToHex({ error: { code: c.code, message: decoded.error.message } }));
      } else {
        const message = typeof c.message === "function" ? c.message() : c.message;
        expect(report).toBe(jsonToHex({ error: { code: c.code, message } }));
      }
      expect(stateDigest()).toBe(before);
    });
  }

  function resolveGrantLabels(params: unknown): unknown {
    if (typeof params !== "object" || params === null || !("grant_id" in params)) return params;
    const label = params.grant_id;
    return typeof label === "string" && grantIds.has(label) ? { ...params, grant_id: grantIds.get(label) } : params;
  }
});

describe("bookkeeping", () => {
  it("processed_inputs counts up to the last accepted input: a rejected one leaves no trace, as in the machine", async () => {
    const before = (await h.read<{ processed_inputs: number }>("health")).processed_inputs;
    const rejected = await h.raw("0x00" as Hex);
    expect(rejected.status).toBe("reject");
    expect((await h.read<{ processed_inputs: number }>("health")).processed_inputs).toBe(before);
    const accepted = await h.input("set_role", { address: BOB, role: "operator", enabled: false });
    expect((await h.read<{ processed_inputs: number }>("health")).processed_inputs).toBe(accepted.index + 1);
  });
});
