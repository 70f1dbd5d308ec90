/**
 * The `batch` input kind (DECISIONS.md sections 2 and 3) on the real dapp: items applied one by one, each
 * on its own; a failing item leaves no trace and reports its position; ids per item; the input accepted
 * when one item applied and rejected without a trace when none did; replays and redeliveries.
 */
import type { Hex } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { utf8ToHex } from "../../common/hex.ts";
import { inputIdOf, itemIdOf, schemaIdOf, writeIdOf } from "../../common/ids.ts";
import { nativeKeccakHex } from "../../common/native-keccak.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, OPERATOR, startHarness, startReadyHarness, type Harness } from "./harness.ts";
import { PUBLIC_KEY, SCHEMA, SCHEMA_2, UNKNOWN_ID } from "./fixtures.ts";

const s1 = schemaIdOf(SCHEMA);
const s2 = schemaIdOf(SCHEMA_2);
const LATER = 1_900_000_000;
const claim = (owner: string, schemaId: string = s1, label = "low") => ({
  type: "create_attestation",
  params: { schema_id: schemaId, owner, provider: "http", encrypted_data: "0x0102", bucket_values: { balance: label } },
});
const grant = (requester: string, owner?: string) => ({
  type: "grant_access",
  params: { requester, schema_id: s1, expires_at: LATER, ...(owner === undefined ? {} : { owner }) },
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** A dapp with SCHEMA registered and ATTESTOR and OPERATOR holding their roles. */
async function ready(): Promise<Harness> {
  h = await startReadyHarness(SCHEMA);
  return h;
}

const decoded = (payloads: Hex[]) => payloads.map((p) => decode(p));

describe("write ids", () => {
  it("are the same hashed natively (the api's) and in pure JS (the dapp's)", () => {
    for (const [index, item] of [[0, null], [7, 0], [123_456, 255], [2 ** 40, 3]] as const) {
      for (const kind of ["create_attestation", "grant_access"] as const) {
        expect(writeIdOf(kind, index, item, nativeKeccakHex)).toBe(writeIdOf(kind, index, item));
      }
    }
    expect(writeIdOf("grant_access", 5, null)).toBe(inputIdOf("grant_access", 5));
  });
});

describe("a batch with good and bad items", () => {
  it("applies the good ones in order, reports each bad one by position, and is accepted", async () => {
    await ready();
    const out = await h.input(
      "batch",
      { items: [claim(ALICE), claim(BOB, UNKNOWN_ID), claim(BOB, s1, "high"), { type: "set_role", params: { address: BOB, role: "admin", enabled: true } }, claim(ALICE, s1, "mid")] },
      { sender: ATTESTOR },
    );
    expect(out.status).toBe("accept");
    expect(decoded(out.reports)).toEqual([
      { item: 1, error: { code: "SCHEMA_NOT_FOUND", message: `schema not found: ${UNKNOWN_ID}` } },
      { item: 2, error: { code: "INVALID_PARAMS", message: 'bucket_values.balance: "high" is not one of the field\'s labels' } },
      { item: 3, error: { code: "UNAUTHORIZED_SENDER", message: `sender ${ATTESTOR} does not hold the admin role` } },
    ]);
    const ids = [itemIdOf("create_attestation", out.index, 0), itemIdOf("create_attestation", out.index, 4)];
    expect(decoded(out.notices).map((n) => (n as { data: { claimId: Hex } }).data.claimId)).toEqual(ids);
    const listed = await h.read<{ attestation_id: Hex; input_index: number; item_index: number | null }[]>("attestations_by_owner", { owner: ALICE });
    expect(listed.map((a) => [a.attestation_id, a.input_index, a.item_index])).toEqual([
      [ids[0], out.index, 0],
      [ids[1], out.index, 4],
    ]);
    expect(await h.read<unknown[]>("attestations_by_owner", { owner: BOB })).toEqual([]);
    // Lone inputs keep the plain formula and have no item.
    const lone = await h.input("create_attestation", claim(BOB).params, { sender: ATTESTOR });
    expect(await h.read("attestation", { attestation_id: inputIdOf("create_attestation", lone.index) })).toMatchObject({ item_index: null, input_index: lone.index });
  });

  it("judges each item as if the sender had sent it alone, whoever sends the batch", async () => {
    await ready();
    // ALICE holds no role: her own grants apply, her claim and a relayed grant do not.
    const out = await h.input("batch", { items: [grant(BOB), claim(ALICE), grant(ATTESTOR, BOB)] }, { sender: ALICE });
    expect(out.status).toBe("accept");
    expect(decoded(out.reports).map((r) => (r as { item: number; error: { code: string } }).item)).toEqual([1, 2]);
    expect(decoded(out.notices)).toEqual([{ event: "grant:created", data: { grantId: itemIdOf("grant_access", out.index, 0), owner: ALICE, requester: BOB } }]);
    // An operator relays for owners inside a batch as it does alone.
    const relayed = await h.input("batch", { items: [grant(ATTESTOR, ALICE), grant(ALICE, BOB)] }, { sender: OPERATOR });
    expect([relayed.status, relayed.reports]).toEqual(["accept", []]);
  });

  it("lets later items see earlier ones: a grant then its revoke; two grants of one triple", async () => {
    await ready();
    const next = (await h.read<{ processed_inputs: number }>("health")).processed_inputs;
    const grantId = itemIdOf("grant_access", next, 0);
    const out = await h.input("batch", { items: [grant(BOB), { type: "revoke_grant", params: { grant_id: grantId } }, grant(BOB), grant(BOB)] }, { sender: ALICE });
    expect(out.index).toBe(next);
    expect(out.status).toBe("accept");
    // The revoke sees the grant of item 0; item 2 grants anew (the first was revoked); item 3 duplicates item 2.
    expect(decoded(out.notices).map((n) => (n as { event: string }).event)).toEqual(["grant:created", "grant:revoked", "grant:created"]);
    expect(decoded(out.reports)).toEqual([
      { item: 3, error: { code: "DUPLICATE", message: `an active grant for this owner, requester and schema already exists: ${itemIdOf("grant_access", next, 2)}` } },
    ]);
    const access = await h.read<{ has_access: boolean; grants: { grant_id: Hex }[] }>("check_access", { owner: ALICE, requester: BOB });
    expect(access.grants.map((g) => g.grant_id)).toEqual([itemIdOf("grant_access", next, 2)]);
  });

  it("registers a schema and attests under it in one batch; a duplicate schema item is accepted as a no-op", async () => {
    await ready();
    const out = await h.input("batch", { items: [{ type: "register_schema", params: SCHEMA_2 }, claim(ALICE, s2, "x"), { ...claim(ALICE, s2), params: { ...claim(ALICE, s2).params, bucket_values: { score: "fair" } } }, { type: "register_schema", params: SCHEMA }] });
    expect(out.status).toBe("accept");
    expect(decoded(out.reports).map((r) => (r as { item: number }).item)).toEqual([1]);
    expect(decoded(out.notices).map((n) => (n as { event: string }).event)).toEqual(["schema:registered", "attestation:created"]);
    expect(await h.read("provider_schema", { schema_id: s2 })).toMatchObject({ schema_id: s2 });
  });
});

describe("a batch that applies nothing, or is not a batch", () => {
  it.each([
    ["no item applies", { items: [claim(ALICE, UNKNOWN_ID), { type: "batch", params: { items: [claim(ALICE)] } }, { type: "mint", params: {} }, "x", { type: "set_role" }] }],
    ["no items", { items: [] }],
    ["257 items", { items: Array.from({ length: 257 }, () => claim(ALICE)) }],
    ["items not a list", { items: { 0: claim(ALICE) } }],
  ])("%s: rejected, the whole database unchanged", async (_name, params) => {
    await ready();
    await h.input("register_encryption_key", { publicKey: PUBLIC_KEY, algorithm: "nacl-box" });
    const before = databaseDigest(h.db.$client);
    const out = await h.input("batch", params, { sender: ATTESTOR });
    expect(out.status).toBe("reject");
    expect(out.notices).toEqual([]);
    expect(databaseDigest(h.db.$client)).toBe(before);
    if (_name === "no item applies") {
      expect(decoded(out.reports)).toEqual([
        { item: 0, error: { code: "SCHEMA_NOT_FOUND", message: `schema not found: ${UNKNOWN_ID}` } },
        { item: 1, error: { code: "INVALID_PARAMS", message: "a batch cannot hold a batch" } },
        { item: 2, error: { code: "UNKNOWN_KIND", message: "unknown input kind: mint" } },
        { item: 3, error: { code: "INVALID_PARAMS", message: "expected an item {type, params}" } },
        { item: 4, error: { code: "INVALID_PARAMS", message: "missing required parameter: address" } },
      ]);
    } else {
      expect(decoded(out.reports)).toEqual([{ error: { code: "INVALID_PARAMS", message: expect.stringContaining("items") } }]);
    }
  });

  it("takes 256 items, the most a batch holds", async () => {
    await ready();
    const out = await h.input("batch", { items: Array.from({ length: 256 }, (_, i) => claim(`0x${(i + 1).toString(16).padStart(40, "0")}`)) }, { sender: ATTESTOR });
    expect([out.status, out.notices.length, out.reports.length]).toEqual(["accept", 256, 0]);
  });
});

describe("replays and redeliveries", () => {
  const script = (sender: string) => [
    { type: "batch", params: { items: [grant(BOB), claim(ALICE), grant(BOB)] }, sender },
    { type: "batch", params: { items: [claim(ALICE, UNKNOWN_ID)] }, sender },
    { type: "batch", params: { items: [claim(BOB), claim(ALICE, s1, "mid"), { type: "revoke_grant", params: { grant_id: UNKNOWN_ID } }] }, sender },
  ];

  it("replaying the same inputs gives byte-identical tables and identical outputs", async () => {
    const run = async () => {
      await ready();
      const outcomes = [];
      for (const step of [...script(ATTESTOR), ...script(ALICE)]) outcomes.push(await h.input(step.type, step.params, { sender: step.sender }));
      const digest = databaseDigest(h.db.$client);
      await h.close();
      return { digest, outcomes };
    };
    const first = await run();
    const second = await run();
    expect(second.digest).toBe(first.digest);
    expect(second.outcomes).toEqual(first.outcomes);
  });

  it("a batch delivered again after commit sends the same notices and reports, in the same order, and applies nothing twice", async () => {
    await ready();
    const out = await h.input("batch", { items: [claim(ALICE), claim(ALICE, UNKNOWN_ID), claim(BOB)] }, { sender: ATTESTOR });
    const before = databaseDigest(h.db.$client);
    const again = await h.raw(utf8ToHex(JSON.stringify({ type: "batch", params: { items: [claim(ALICE), claim(ALICE, UNKNOWN_ID), claim(BOB)] } })), { sender: ATTESTOR, index: out.index });
    expect([again.status, again.notices, again.reports]).toEqual([out.status, out.notices, out.reports]);
    expect(databaseDigest(h.db.$client)).toBe(before);
  });
});

describe("the senders' roles and the admin", () => {
  it("an admin batch registers a key and grants a role; a later item uses the role", async () => {
    h = await startHarness();
    expect((await h.input("register_schema", SCHEMA)).status).toBe("accept");
    const out = await h.input("batch", { items: [{ type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" } }, { type: "set_role", params: { address: ATTESTOR, role: "attestor", enabled: true } }] }, { sender: ADMIN });
    expect([out.status, out.reports]).toEqual(["accept", []]);
    expect((await h.input("batch", { items: [claim(ALICE)] }, { sender: ATTESTOR })).status).toBe("accept");
  });
});
