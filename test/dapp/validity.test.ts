/**
 * An attestation's life cycle in the real dapp (DECISIONS.md section 17): who may revoke it and how a
 * refused revocation leaves the state as it was; the revocation's exact notice; expiry from a schema's
 * validity period; freshness at a given time; and the `verify` query's answers and refusals.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import type { AttestationView, VerifyResult } from "../../common/wire.ts";
import { SCHEMA, SCHEMA_2 } from "./fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, type Harness, OPERATOR, startReadyHarness, stateDigest, T0 } from "./harness.ts";

const EXPIRING = { ...SCHEMA, flowType: "expiring", validityPeriod: 1000 };
const s1 = schemaIdOf(SCHEMA);
const s2 = schemaIdOf(SCHEMA_2);
const sExpiring = schemaIdOf(EXPIRING);

let h: Harness;
let clock = T0 + 10_000;

beforeAll(async () => {
  h = await startReadyHarness(SCHEMA);
  for (const schema of [SCHEMA_2, EXPIRING]) expect((await h.input("register_schema", schema, { timestamp: ++clock })).status).toBe("accept");
});

afterAll(async () => {
  await h.close();
});

/** An attestation of `owner` made by ATTESTOR at `timestamp`; its id. */
async function attest(owner: Hex, bucket: string, timestamp: number, schemaId: Hex = s1): Promise<Hex> {
  clock = Math.max(clock, timestamp);
  const field = schemaId === s2 ? "score" : "balance";
  const out = await h.input("create_attestation", { schema_id: schemaId, owner, provider: "http", encrypted_data: "0x01", bucket_values: { [field]: bucket } }, { sender: ATTESTOR, timestamp });
  expect(out.status).toBe("accept");
  return inputIdOf("create_attestation", out.index);
}

async function revoke(params: Record<string, unknown>, sender: string) {
  const out = await h.input("revoke_attestation", params, { sender, timestamp: ++clock });
  return { ...out, report: out.reports[0] === undefined ? undefined : (JSON.parse(Buffer.from(out.reports[0].slice(2), "hex").toString("utf8")) as unknown) };
}

const digest = (): string => stateDigest(h);

describe("revoke_attestation", () => {
  it("a stranger, an operator or an attestor that did not make it may not; nothing changes", async () => {
    const id = await attest(ALICE, "low", ++clock);
    const before = digest();
    for (const sender of [BOB, OPERATOR]) {
      const out = await revoke({ attestation_id: id }, sender);
      expect(out.report).toEqual({
        error: { code: "UNAUTHORIZED_SENDER", message: `sender ${sender} may not revoke attestation ${id}: only its owner, its attester ${ATTESTOR}, an attestor that proved it, or an admin` },
      });
    }
    expect(digest()).toBe(before);
  });

  it("its attester revokes it with a reason: the notice's exact bytes, the view marked, readable still", async () => {
    const id = await attest(ALICE, "low", ++clock);
    const out = await revoke({ attestation_id: id, reason: "provider data withdrawn" }, ATTESTOR);
    expect(out.status).toBe("accept");
    // Key order is part of the notice: the specification's bytes, which clients read and replays compare.
    expect(out.notices).toEqual([
      jsonToHex({ event: "attestation:revoked", data: { claimId: id, owner: ALICE, schema_id: s1, revoker: ATTESTOR, revoked_at: clock, reason: "provider data withdrawn", superseded_by: null } }),
    ]);
    const view = await h.read<AttestationView>("attestation", { attestation_id: id });
    expect(view).toMatchObject({ status: "revoked", revocation: { revoked_at: clock, revoker: ATTESTOR, reason: "provider data withdrawn", superseded_by: null, input_index: out.index } });
    // Before its revocation it was valid: status is as of `at`.
    expect(await h.read<AttestationView>("attestation", { attestation_id: id, at: clock - 1 })).toMatchObject({ status: "valid" });
  });

  it("its owner withdraws it, naming its successor; an admin revokes another; twice is ALREADY_REVOKED", async () => {
    const old = await attest(BOB, "low", ++clock);
    const successor = await attest(BOB, "mid", ++clock);
    const withdrawn = await revoke({ attestation_id: old, superseded_by: successor }, BOB);
    const withdrawnAt = clock;
    expect(withdrawn.status).toBe("accept");
    expect((await h.read<AttestationView>("attestation", { attestation_id: old })).revocation?.superseded_by).toBe(successor);
    expect((await revoke({ attestation_id: successor }, ADMIN)).status).toBe("accept");
    const again = await revoke({ attestation_id: old }, BOB);
    expect(again.report).toEqual({ error: { code: "ALREADY_REVOKED", message: `attestation ${old} was already revoked at ${withdrawnAt}` } });
  });

  it("refuses an unknown attestation, a bad successor and a reason a contract could not rebuild", async () => {
    const id = await attest(ALICE, "low", ++clock);
    const other = await attest(BOB, "low", ++clock);
    const otherSchema = await attest(ALICE, "good", ++clock, s2);
    const unknown = `0x${"ab".repeat(32)}`;
    const before = digest();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ attestation_id: unknown }, "ATTESTATION_NOT_FOUND", `attestation not found: ${unknown}`],
      [{ attestation_id: id, superseded_by: unknown }, "ATTESTATION_NOT_FOUND", `superseded_by: attestation not found: ${unknown}`],
      [{ attestation_id: id, superseded_by: id }, "INVALID_PARAMS", "superseded_by: an attestation cannot supersede itself"],
      [{ attestation_id: id, superseded_by: other }, "INVALID_PARAMS", `superseded_by: attestation ${other} is not of the same owner and schema`],
      [{ attestation_id: id, superseded_by: otherSchema }, "INVALID_PARAMS", `superseded_by: attestation ${otherSchema} is not of the same owner and schema`],
      [{ attestation_id: id, reason: 'a "quoted" reason' }, "INVALID_PARAMS", "reason: plain text only: no quotes, backslashes or control characters"],
      [{ attestation_id: id, reason: "line\nbreak" }, "INVALID_PARAMS", "reason: plain text only: no quotes, backslashes or control characters"],
      [{ attestation_id: id, reason: "x".repeat(257) }, "INVALID_PARAMS", "reason: at most 256 characters"],
      [{}, "INVALID_PARAMS", "missing required parameter: attestation_id"],
    ];
    for (const [params, code, message] of cases) {
      const out = await revoke(params, ADMIN);
      expect(out.report, JSON.stringify(params)).toMatchObject({ error: { code, message: expect.stringContaining(message) } });
    }
    expect(digest()).toBe(before);
  });

  it("goes in a batch: a refused item leaves no trace, the others apply", async () => {
    const id = await attest(ALICE, "low", ++clock);
    const out = await h.input(
      "batch",
      { items: [{ type: "revoke_attestation", params: { attestation_id: `0x${"cd".repeat(32)}` } }, { type: "revoke_attestation", params: { attestation_id: id } }] },
      { sender: ADMIN, timestamp: ++clock },
    );
    expect(out.status).toBe("accept");
    expect(out.notices).toHaveLength(1);
    expect((await h.read<AttestationView>("attestation", { attestation_id: id })).status).toBe("revoked");
  });
});

describe("expiry and freshness", () => {
  it("a schema's validity period gives each attestation expires_at; expired from that second on", async () => {
    const made = ++clock;
    const id = await attest(ALICE, "low", made, sExpiring);
    const view = await h.read<AttestationView>("attestation", { attestation_id: id, at: made + 999 });
    expect(view).toMatchObject({ expires_at: made + 1000, status: "valid" });
    expect(await h.read<AttestationView>("attestation", { attestation_id: id, at: made + 1000 })).toMatchObject({ status: "expired" });
    expect(await h.read("provider_schema", { schema_id: sExpiring })).toMatchObject({ validity_period: 1000 });
    // The validity period is part of the schema's content: another id than the same schema without it.
    expect(sExpiring).not.toBe(schemaIdOf({ ...EXPIRING, validityPeriod: undefined }));
  });

  it("freshness halves every half-life and is 1 at or before the attestation's time", async () => {
    const made = ++clock;
    const id = await attest(ALICE, "low", made);
    const at = async (t: number) => (await h.read<AttestationView>("attestation", { attestation_id: id, at: t })).freshness;
    expect([await at(made - 10), await at(made), await at(made + 3600), await at(made + 7200)]).toEqual([1, 1, 0.5, 0.25]);
  });
});

describe("verify", () => {
  const verify = (params: Record<string, unknown>) => h.read<VerifyResult>("verify", params);

  it("relies on the newest attestation that qualifies, and explains the newest when none does", async () => {
    const owner = "0x00000000000000000000000000000000000000c1" as Hex;
    const older = await attest(owner, "mid", ++clock);
    const newer = await attest(owner, "low", ++clock);
    expect(await verify({ owner, schema_id: s1 })).toMatchObject({ valid: true, checked: 1, attestation: { attestation_id: newer } });
    // A minimum the newest misses, the older meets: the owner holds one that qualifies.
    expect(await verify({ owner, schema_id: s1, min_bucket: "mid" })).toMatchObject({ valid: true, checked: 2, attestation: { attestation_id: older } });
    await revoke({ attestation_id: older }, ADMIN);
    const none = await verify({ owner, schema_id: s1, min_bucket: "mid" });
    expect(none).toMatchObject({ valid: false, checked: 2, attestation: { attestation_id: newer }, reasons: [{ code: "BUCKET_BELOW_MINIMUM", message: `attestation ${newer}: balance is "low", below the minimum "mid"` }] });
  });

  it("stops at the first attestation too old for the minimum freshness: every older one is older still", async () => {
    const owner = "0x00000000000000000000000000000000000000c2" as Hex;
    const made = ++clock;
    await attest(owner, "mid", made);
    await attest(owner, "mid", made + 1);
    const stale = await verify({ owner, schema_id: s1, at: made + 1 + 3600, min_freshness: 0.75 });
    expect(stale).toMatchObject({ valid: false, checked: 1, freshness: 0.5, reasons: [{ code: "NOT_FRESH" }] });
    clock = made + 2;
  });

  it("a minimum bucket for a schema of several fields names its field; unknown fields and labels are refused", async () => {
    const owner = "0x00000000000000000000000000000000000000c3" as Hex;
    await attest(owner, "fair", ++clock, s2);
    expect(await verify({ owner, schema_id: s2, min_bucket: { score: "fair" } })).toMatchObject({ valid: true });
    expect(await verify({ owner, schema_id: s2, min_bucket: { score: "good" } })).toMatchObject({ valid: false, reasons: [{ code: "BUCKET_BELOW_MINIMUM" }] });
    // The attestation buckets no age: a minimum on it is not met.
    expect(await verify({ owner, schema_id: s2, min_bucket: { age: "adult" } })).toMatchObject({ valid: false, reasons: [{ code: "BUCKET_BELOW_MINIMUM", message: expect.stringContaining("has no bucket for age") }] });
    const rejected = async (params: Record<string, unknown>) => {
      const out = await h.query("verify", params);
      return Buffer.from((out.exception ?? "0x").slice(2), "hex").toString("utf8");
    };
    expect(await rejected({ owner, schema_id: s2, min_bucket: "fair" })).toBe(`invalid query: min_bucket: schema ${s2} has 2 bucket fields; give {field: label}`);
    expect(await rejected({ owner, schema_id: s2, min_bucket: { height: "tall" } })).toBe(`invalid query: min_bucket.height: not a bucket field of schema ${s2}`);
    expect(await rejected({ owner, schema_id: s2, min_bucket: { score: "excellent" } })).toBe('invalid query: min_bucket.score: "excellent" is not one of the field\'s labels (poor, fair, good)');
    expect(await rejected({ owner, schema_id: `0x${"ab".repeat(32)}` })).toBe(`schema not found: 0x${"ab".repeat(32)}`);
    expect(await rejected({ owner, schema_id: s2, min_freshness: 0 })).toMatch(/^invalid query: min_freshness: /);
    expect(await rejected({ schema_id: s2 })).toBe("missing required parameter: owner");
  });
});
