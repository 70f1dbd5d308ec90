/**
 * Attestations proven by a TLS attestor, on the real dapp (real migrations, real SQLite, the @deroll/app
 * loop): claims signed here in the attestor's exact format (common/tls-claim.ts), accepted when they check
 * out and rejected, without a trace, for each way they can fail (dapp/proof.ts).
 */
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type ProofMode, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { MAX_CLAIM_AGE_SECONDS, MAX_CLAIM_SKEW_SECONDS } from "../../dapp/proof.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, startHarness, T0, type Harness } from "./harness.ts";

const attestorKey = "0x0123456789012345678901234567890123456789012345678901234567890123" as const;
const attestor = privateKeyToAccount(attestorKey);
const stranger = privateKeyToAccount("0x1111111111111111111111111111111111111111111111111111111111111111");
const ATTESTOR_ADDRESS = attestor.address.toLowerCase() as Address;

const SCHEMA = {
  provider: "http",
  flowType: "balance",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor" as const,
};
const PLAIN_SCHEMA = { ...SCHEMA, proof: undefined, flowType: "plain" };
const sid = schemaIdOf(SCHEMA);
const plainSid = schemaIdOf({ ...PLAIN_SCHEMA });
const URL_OK = "https://bank.example/api/balance";

interface ClaimOptions {
  mode?: ProofMode;
  url?: string;
  field?: string;
  owner?: Address;
  schemaId?: Hex;
  value?: string;
  timestampS?: number;
  nonce?: Hex;
  signer?: typeof attestor;
}

/** A claim as the attestor makes it, signed with `signer`'s key. */
async function signedClaim(o: ClaimOptions = {}): Promise<TlsProof> {
  const parameters = canonicalJson(claimParameters({ url: o.url ?? URL_OK, method: "GET", field: o.field ?? "data.balance", mode: o.mode ?? "reveal" }));
  const context = canonicalJson({
    ...claimContext(o.owner ?? ALICE, o.schemaId ?? sid, o.nonce ?? "0x01"),
    extractedParameters: { value: o.value ?? "512.5" },
    providerHash: "0x00",
  });
  const base = { provider: "http", parameters, owner: "0x2e53b0b53d54995108412e305a38080fa2bfd468", timestampS: o.timestampS ?? T0 + 100, context, epoch: 1 };
  const identifier = claimIdentifier(base);
  const claim: TlsClaim = { ...base, identifier };
  const signature = await (o.signer ?? attestor).signMessage({ message: claimSignText(claim, identifier) });
  return { claim, signature };
}

function attestation(proof: TlsProof | undefined, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_id: sid,
    owner: ALICE,
    provider: "http",
    encrypted_data: "0x0102",
    bucket_values: { "data.balance": "mid" },
    ...(proof === undefined ? {} : { proof }),
    ...overrides,
  };
}

let h: Harness;
/** The timestamp the next input gets: each claim below is dated 100 s before it. */
const AT = T0 + 200;

beforeEach(async () => {
  h = await startHarness();
  for (const [type, params] of [
    ["register_schema", SCHEMA],
    ["register_schema", PLAIN_SCHEMA],
    ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
    ["set_tls_attestor", { address: attestor.address, enabled: true, name: "test attestor" }],
  ] as const) {
    const outcome = await h.input(type, params);
    if (outcome.status !== "accept") throw new Error(`setup ${type} rejected: ${JSON.stringify(outcome.reports.map(decode))}`);
  }
});
afterEach(async () => {
  await h?.close();
});

async function send(params: Record<string, unknown>, sender: Address = ATTESTOR) {
  const outcome = await h.input("create_attestation", params, { sender, timestamp: AT });
  return { ...outcome, report: outcome.reports[0] === undefined ? undefined : decode(outcome.reports[0]) };
}

describe("a proven attestation", () => {
  it.each(["reveal", "zk"] as const)("a %s claim signed by a registered attestor is accepted and names it", async (mode) => {
    const out = await send(attestation(await signedClaim({ mode })));
    expect(out.status, JSON.stringify(out.report)).toBe("accept");
    const id = inputIdOf("create_attestation", out.index);
    expect(decode(out.notices[0] as Hex)).toEqual({
      event: "attestation:created",
      data: { claimId: id, owner: ALICE, provider: "http", schema_id: sid, bucket_values: { "data.balance": "mid" }, attestor: ATTESTOR_ADDRESS },
    });
    expect(await h.read("attestation", { attestation_id: id })).toMatchObject({ attestation_id: id, attestor: ATTESTOR_ADDRESS });
  });

  it("an unproven schema keeps its id, takes attestations without proof, and checks a proof when one comes", async () => {
    expect(schemaIdOf({ ...PLAIN_SCHEMA })).toBe(schemaIdOf({ ...SCHEMA, proof: "none", flowType: "plain" }));
    expect(sid).not.toBe(schemaIdOf({ ...SCHEMA, proof: "none" }));
    const bare = await send(attestation(undefined, { schema_id: plainSid }));
    expect(bare.status).toBe("accept");
    // The notice of an unproven attestation has no attestor member at all: its bytes are as they were.
    expect(Object.keys((decode(bare.notices[0] as Hex) as { data: object }).data)).not.toContain("attestor");
    expect(await h.read("attestation", { attestation_id: inputIdOf("create_attestation", bare.index) })).toMatchObject({ attestor: null });
    const forged = await send(attestation(await signedClaim({ schemaId: plainSid, signer: stranger }), { schema_id: plainSid }));
    expect(forged.report).toEqual({ error: { code: "PROOF_REJECTED", message: `proof: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor` } });
  });

  it("the schema query says which schemas require proof", async () => {
    expect(await h.read("provider_schema", { schema_id: sid })).toMatchObject({ proof: "attestor" });
    expect(await h.read("provider_schema", { schema_id: plainSid })).toMatchObject({ proof: "none" });
  });
});

describe("a claim that does not check out is rejected with its reason and leaves no trace", () => {
  const cases: [string, () => Promise<Record<string, unknown>>, string, string][] = [
    ["no proof for a schema that requires one", async () => attestation(undefined), "PROOF_REJECTED", `proof: schema ${sid} requires an attestor proof`],
    ["a signer that is not a registered attestor", async () => attestation(await signedClaim({ signer: stranger })), "PROOF_REJECTED", `proof: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor`],
    [
      "a tampered value under the original signature",
      async () => {
        const proof = await signedClaim();
        return attestation({ ...proof, claim: { ...proof.claim, context: proof.claim.context.replace('"512.5"', '"5000"') } });
      },
      "PROOF_REJECTED",
      "proof: the claim's identifier does not match its content",
    ],
    [
      "a tampered value with a recomputed identifier",
      async () => {
        const proof = await signedClaim();
        const claim = { ...proof.claim, context: proof.claim.context.replace('"512.5"', '"5000"') };
        return attestation({ ...proof, claim: { ...claim, identifier: claimIdentifier(claim) } });
      },
      "PROOF_REJECTED",
      // The signature now recovers to someone else: nobody signed this content.
      "proof: signed by",
    ],
    [
      "a tampered signature",
      async () => {
        const proof = await signedClaim();
        const flipped = `${proof.signature.slice(0, 20)}${proof.signature[20] === "a" ? "b" : "a"}${proof.signature.slice(21)}` as Hex;
        return attestation({ ...proof, signature: flipped });
      },
      "PROOF_REJECTED",
      "proof: ",
    ],
    ["a signature whose v is not 27/28 or 0/1", async () => attestation({ ...(await signedClaim()), signature: `0x${"11".repeat(64)}05` }), "PROOF_REJECTED", "proof: the signature does not recover"],
    ["another host than the schema's domain", async () => attestation(await signedClaim({ url: "https://evil.example/api/balance" })), "PROOF_REJECTED", "proof: the claim names host evil.example, the schema's domain is bank.example"],
    ["plain http", async () => attestation(await signedClaim({ url: "http://bank.example/api/balance" })), "PROOF_REJECTED", "proof: the claim's URL is not https"],
    ["another field extracted", async () => attestation(await signedClaim({ field: "data.limit" })), "PROOF_REJECTED", "proof: the claim does not extract field data.balance"],
    ["a bucket the signed value is not in", async () => attestation(await signedClaim(), { bucket_values: { "data.balance": "high" } }), "PROOF_REJECTED", 'proof: the signed value falls in bucket "mid", not "high"'],
    ["a signed value outside every bucket", async () => attestation(await signedClaim({ value: "-5" })), "PROOF_REJECTED", 'proof: the signed value falls in bucket "none", not "mid"'],
    ["another owner", async () => attestation(await signedClaim({ owner: BOB })), "PROOF_REJECTED", "proof: the claim was made for another owner"],
    ["another schema", async () => attestation(await signedClaim({ schemaId: plainSid })), "PROOF_REJECTED", "proof: the claim was made for another schema"],
    ["a value that is not a number", async () => attestation(await signedClaim({ value: "12abc" })), "PROOF_REJECTED", "proof: the claim holds no number for data.balance"],
    ["a claim older than an hour", async () => attestation(await signedClaim({ timestampS: AT - MAX_CLAIM_AGE_SECONDS - 1 })), "PROOF_REJECTED", `proof: the claim is ${MAX_CLAIM_AGE_SECONDS + 1} s old (at most ${MAX_CLAIM_AGE_SECONDS})`],
    ["a claim dated too far ahead", async () => attestation(await signedClaim({ timestampS: AT + MAX_CLAIM_SKEW_SECONDS + 1 })), "PROOF_REJECTED", `proof: the claim is dated ${MAX_CLAIM_SKEW_SECONDS + 1} s after its input`],
    ["two bucketed fields", async () => attestation(await signedClaim(), { bucket_values: { "data.balance": "mid", other: "x" } }), "INVALID_PARAMS", "bucket_values.other: not a bucket field of schema"],
    ["a proof with an unknown member", async () => attestation({ ...(await signedClaim()), extra: 1 } as unknown as TlsProof), "INVALID_PARAMS", "proof: Unrecognized key"],
  ];

  it.each(cases)("%s", async (_, build, code, message) => {
    const params = await build();
    const before = databaseDigest(h.db.$client, { includeMeta: false });
    const out = await send(params);
    expect(out.status).toBe("reject");
    const error = (out.report as { error: { code: string; message: string } }).error;
    expect(error.code).toBe(code);
    expect(error.message.startsWith(message), error.message).toBe(true);
    // Never the private value in a message.
    expect(error.message).not.toContain("512.5");
    expect(databaseDigest(h.db.$client, { includeMeta: false })).toBe(before);
  });

  it("a claim used once is refused the second time, whatever the signature's encoding", async () => {
    const proof = await signedClaim();
    const first = await send(attestation(proof));
    expect(first.status).toBe("accept");
    const firstId = inputIdOf("create_attestation", first.index);
    const before = databaseDigest(h.db.$client, { includeMeta: false });
    const again = await send(attestation(proof));
    expect(again.report).toEqual({ error: { code: "DUPLICATE", message: `proof: this claim was already used by attestation ${firstId}` } });
    // v as 0/1 instead of 27/28: the same signed claim.
    const v = parseInt(proof.signature.slice(-2), 16) - 27;
    const reencoded = `${proof.signature.slice(0, -2)}0${v}` as Hex;
    const third = await send(attestation({ ...proof, signature: reencoded }));
    expect(third.report).toEqual({ error: { code: "DUPLICATE", message: `proof: this claim was already used by attestation ${firstId}` } });
    expect(databaseDigest(h.db.$client, { includeMeta: false })).toBe(before);
    // Another nonce is another claim.
    expect((await send(attestation(await signedClaim({ nonce: "0x02" })))).status).toBe("accept");
  });

  it("a removed attestor signs nothing the rollup accepts any more", async () => {
    expect((await h.input("set_tls_attestor", { address: attestor.address, enabled: false })).status).toBe("accept");
    const out = await send(attestation(await signedClaim()));
    expect(out.report).toEqual({ error: { code: "PROOF_REJECTED", message: `proof: signed by ${ATTESTOR_ADDRESS}, which is not a registered attestor` } });
  });

  it("in a batch, a forged item fails alone and a genuine one applies", async () => {
    const genuine = attestation(await signedClaim());
    const forged = attestation(await signedClaim({ signer: stranger, nonce: "0x03" }));
    const out = await h.input("batch", { items: [{ type: "create_attestation", params: forged }, { type: "create_attestation", params: genuine }] }, { sender: ATTESTOR, timestamp: AT });
    expect(out.status).toBe("accept");
    expect(out.reports.map(decode)).toEqual([
      { item: 0, error: { code: "PROOF_REJECTED", message: `proof: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor` } },
    ]);
    expect(out.notices).toHaveLength(1);
  });
});

describe("set_tls_attestor and tls_attestors", () => {
  it("admins register, rename and remove attestors; the query lists them in order", async () => {
    expect(await h.read("tls_attestors")).toEqual([{ address: ATTESTOR_ADDRESS, name: "test attestor", added_at: T0 + 4 }]);
    const renamed = await h.input("set_tls_attestor", { address: attestor.address, enabled: true, name: "renamed" });
    expect(renamed.notices.map(decode)).toEqual([{ event: "attestor:registered", data: { address: ATTESTOR_ADDRESS, name: "renamed" } }]);
    await h.input("set_tls_attestor", { address: stranger.address, enabled: true });
    expect(await h.read("tls_attestors")).toEqual([
      { address: ATTESTOR_ADDRESS, name: "renamed", added_at: T0 + 4 },
      { address: stranger.address.toLowerCase(), name: "", added_at: expect.any(Number) },
    ]);
    const removed = await h.input("set_tls_attestor", { address: stranger.address, enabled: false });
    expect(removed.notices.map(decode)).toEqual([{ event: "attestor:removed", data: { address: stranger.address.toLowerCase() } }]);
    const again = await h.input("set_tls_attestor", { address: stranger.address, enabled: false });
    expect(again.reports.map(decode)).toEqual([
      { error: { code: "INVALID_PARAMS", message: `address: ${stranger.address.toLowerCase()} is not a registered attestor` } },
    ]);
  });

  it("only an admin may", async () => {
    const out = await h.input("set_tls_attestor", { address: stranger.address, enabled: true }, { sender: ATTESTOR });
    expect(out.reports.map(decode)).toEqual([{ error: { code: "UNAUTHORIZED_SENDER", message: `sender ${ATTESTOR} does not hold the admin role` } }]);
    expect(ADMIN).not.toBe(ATTESTOR);
  });

  it("a schema with proof refuses fields a proof cannot name", async () => {
    const out = await h.input("register_schema", { ...SCHEMA, bucketDefinitions: { "items.0.value": SCHEMA.bucketDefinitions["data.balance"] } });
    expect(out.reports.map(decode)).toEqual([
      {
        error: {
          code: "INVALID_PARAMS",
          message: 'bucketDefinitions.items.0.value: "items.0.value" cannot be proven: each segment must be an object key of letters, digits, "_" or "-" (got "0")',
        },
      },
    ]);
  });
});
