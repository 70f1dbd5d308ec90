/**
 * The dapp on the host behaves as in the Cartesi machine, where the node reverts the whole machine on a
 * rejected input (DECISIONS.md sections 2 and 9): every kind of rejected input leaves the database file
 * exactly as it was, bookkeeping included; health's processed_inputs counts up to the last accepted input;
 * and a rejected input delivered again (the dapp died before its /finish) gets the same report.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utf8ToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, startHarness, type Harness } from "./harness.ts";
import { PUBLIC_KEY, SCHEMA, UNKNOWN_ID } from "./fixtures.ts";

let h: Harness;
let lastAccepted = -1;
let timestamp = 1_750_000_000;
const s1 = schemaIdOf(SCHEMA);

beforeAll(async () => {
  h = await startHarness();
  for (const [type, params] of [
    ["register_schema", SCHEMA],
    ["register_encryption_key", { publicKey: PUBLIC_KEY, algorithm: "nacl-box" }],
    ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
  ] as const) {
    const outcome = await h.input(type, params);
    expect(outcome.status).toBe("accept");
    lastAccepted = outcome.index;
  }
});
afterAll(async () => {
  await h?.close();
});

const REJECTED: { name: string; payload: () => Hex; sender?: string; code: string }[] = [
  { name: "bad hex", payload: () => "0xzz" as Hex, code: "INVALID_PAYLOAD" },
  { name: "not JSON", payload: () => utf8ToHex("{nope"), code: "INVALID_PAYLOAD" },
  { name: "unknown kind", payload: () => utf8ToHex(JSON.stringify({ type: "mint", params: {} })), code: "UNKNOWN_KIND" },
  { name: "invalid params", payload: () => utf8ToHex(JSON.stringify({ type: "set_role", params: { address: "x", role: "admin", enabled: true } })), code: "INVALID_PARAMS" },
  { name: "sender without the role", sender: BOB, payload: () => utf8ToHex(JSON.stringify({ type: "register_schema", params: { ...SCHEMA, domain: "b.example" } })), code: "UNAUTHORIZED_SENDER" },
  {
    name: "unknown reference",
    sender: ATTESTOR,
    payload: () => utf8ToHex(JSON.stringify({ type: "create_attestation", params: { schema_id: UNKNOWN_ID, owner: ALICE, provider: "http", encrypted_data: "0x01", bucket_values: {} } })),
    code: "SCHEMA_NOT_FOUND",
  },
  { name: "duplicate key", payload: () => utf8ToHex(JSON.stringify({ type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" } })), code: "DUPLICATE" },
  {
    name: "grant_access to an unknown schema",
    sender: ALICE,
    payload: () => utf8ToHex(JSON.stringify({ type: "grant_access", params: { requester: BOB, schema_id: UNKNOWN_ID, expires_at: 4_000_000_000 } })),
    code: "SCHEMA_NOT_FOUND",
  },
  { name: "revoke_grant of an unknown grant", sender: ALICE, payload: () => utf8ToHex(JSON.stringify({ type: "revoke_grant", params: { grant_id: UNKNOWN_ID } })), code: "GRANT_NOT_FOUND" },
  {
    name: "batch whose every item fails",
    sender: ALICE,
    payload: () =>
      utf8ToHex(
        JSON.stringify({
          type: "batch",
          params: {
            items: [
              { type: "grant_access", params: { requester: BOB, schema_id: s1, expires_at: 1 } },
              { type: "revoke_grant", params: { grant_id: UNKNOWN_ID } },
            ],
          },
        }),
      ),
    code: "INVALID_PARAMS",
  },
];

describe("a rejected input leaves no trace", () => {
  it.each(REJECTED)("$name: rejected with $code, the whole database unchanged, processed_inputs unchanged", async (c) => {
    const before = databaseDigest(h.db.$client);
    // A redelivery is the same input: same index, same block timestamp (a report may name it).
    timestamp += 10;
    const outcome = await h.raw(c.payload(), { sender: c.sender ?? ADMIN, timestamp });
    expect(outcome.status).toBe("reject");
    const report = JSON.parse(Buffer.from((outcome.reports[0] ?? "0x").slice(2), "hex").toString("utf8")) as { error: { code: string } };
    expect(report.error.code).toBe(c.code);
    expect(databaseDigest(h.db.$client)).toBe(before);
    expect((await h.read<{ processed_inputs: number }>("health")).processed_inputs).toBe(lastAccepted + 1);

    // Delivered again at the same index (the dapp died before /finish): the same verdict and report.
    const again = await h.raw(c.payload(), { sender: c.sender ?? ADMIN, index: outcome.index, timestamp });
    expect([again.status, again.reports]).toEqual(["reject", outcome.reports]);
    expect(databaseDigest(h.db.$client)).toBe(before);
  });

  it("an accepted input after them moves processed_inputs to its index + 1", async () => {
    const outcome = await h.input("create_attestation", { schema_id: s1, owner: ALICE, provider: "http", encrypted_data: "0x01", bucket_values: {} }, { sender: ATTESTOR });
    expect(outcome.status).toBe("accept");
    expect((await h.read<{ processed_inputs: number }>("health")).processed_inputs).toBe(outcome.index + 1);
  });
});
