/**
 * Attestations proven by TLS attestors, on the real dapp (real migrations, real SQLite, the @deroll/app
 * loop): range claims signed here in the attestor's exact format (common/tls-claim.ts), accepted when they
 * check out and rejected, without a trace, for each way they can fail (common/proof-check.ts): a wider or
 * shifted range, another key, too few attestors, a repeated one, claims that disagree, an owner other
 * than the sender.
 */
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import { binRange, type DecimalRange } from "../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { MAX_CLAIM_AGE_SECONDS, MAX_CLAIM_SKEW_SECONDS } from "../../dapp/proof.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, startHarness, T0, type Harness } from "./harness.ts";

const attestor = privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123");
const second = privateKeyToAccount("0x2222222222222222222222222222222222222222222222222222222222222222");
const stranger = privateKeyToAccount("0x1111111111111111111111111111111111111111111111111111111111111111");
const ATTESTOR_ADDRESS = attestor.address.toLowerCase() as Address;
const SECOND_ADDRESS = second.address.toLowerCase() as Address;

const DEFINITION = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const SCHEMA = {
  provider: "http",
  flowType: "balance",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": DEFINITION },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor" as const,
};
const PLAIN_SCHEMA = { ...SCHEMA, proof: undefined, flowType: "plain" };
const QUORUM_SCHEMA = { ...SCHEMA, flowType: "quorum", attestorQuorum: 2 };
const sid = schemaIdOf(SCHEMA);
const plainSid = schemaIdOf({ ...PLAIN_SCHEMA });
const quorumSid = schemaIdOf(QUORUM_SCHEMA);
const URL_OK = "https://bank.example/api/balance";

function bin(label: string): DecimalRange {
  const range = binRange(DEFINITION, label);
  if (range === undefined) throw new Error(`no bin ${label}`);
  return range;
}

interface ClaimOptions {
  url?: string;
  field?: string;
  /** The range the claim's pattern states (the bin of "mid" unless said). */
  range?: DecimalRange;
  owner?: Address;
  schemaId?: Hex;
  timestampS?: number;
  nonce?: Hex;
  signer?: typeof attestor;
  /** Changes the parameters after they are built (an older format, an extra member). */
  tamper?: (parameters: Record<string, unknown>) => Record<string, unknown>;
}

/** A claim as the attestor makes it, signed with `signer`'s key. */
async function signedClaim(o: ClaimOptions = {}): Promise<TlsProof> {
  const built = claimParameters({ url: o.url ?? URL_OK, method: "GET", field: o.field ?? "data.balance", range: o.range ?? bin("mid") });
  const parameters = canonicalJson(o.tamper === undefined ? built : o.tamper({ ...built }));
  const context = canonicalJson({ ...claimContext(o.owner ?? ALICE, o.schemaId ?? sid, o.nonce ?? "0x01"), providerHash: "0x00" });
  const base = { provider: "http", parameters, owner: "0x2e53b0b53d54995108412e305a38080fa2bfd468" as Address, timestampS: o.timestampS ?? T0 + 100, context, epoch: 1 };
  const identifier = claimIdentifier(base);
  const claim: TlsClaim = { ...base, identifier };
  const signature = await (o.signer ?? attestor).signMessage({ message: claimSignText(claim, identifier) });
  return { claim, signature };
}

function attestation(proofs: TlsProof[] | undefined, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_id: sid,
    owner: ALICE,
    provider: "http",
    encrypted_data: "0x0102",
    bucket_values: { "data.balance": "mid" },
    ...(proofs === undefined ? {} : { proofs }),
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
    ["register_schema", QUORUM_SCHEMA],
    ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
    ["set_tls_attestor", { address: attestor.address, enabled: true, name: "test attestor" }],
    ["set_tls_attestor", { address: second.address, enabled: true, name: "second attestor" }],
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
  it("a range claim signed by a registered attestor is accepted and names it", async () => {
    const out = await send(attestation([await signedClaim()]));
    expect(out.status, JSON.stringify(out.report)).toBe("accept");
    const id = inputIdOf("create_attestation", out.index);
    expect(decode(out.notices[0] as Hex)).toEqual({
      event: "attestation:created",
      data: {
        claimId: id,
        owner: ALICE,
        provider: "http",
        schema_id: sid,
        bucket_values: { "data.balance": "mid" },
        attestor: ATTESTOR_ADDRESS,
        attester: ATTESTOR,
        timestamp: AT,
        expires_at: null,
        freshness_half_life: SCHEMA.freshnessHalfLife,
      },
    });
    expect(await h.read("attestation", { attestation_id: id })).toMatchObject({ attestation_id: id, attestor: ATTESTOR_ADDRESS, attestors: [ATTESTOR_ADDRESS] });
  });

  it("the owner may send its own proven attestation, without any role", async () => {
    const out = await send(attestation([await signedClaim()]), ALICE);
    expect(out.status, JSON.stringify(out.report)).toBe("accept");
  });

  it("an unproven schema keeps its id, takes attestations without proof, and checks proofs when they come", async () => {
    expect(schemaIdOf({ ...PLAIN_SCHEMA })).toBe(schemaIdOf({ ...SCHEMA, proof: "none", flowType: "plain" }));
    expect(sid).not.toBe(schemaIdOf({ ...SCHEMA, proof: "none" }));
    // A quorum of 1 is the default: it is not part of the id.
    expect(schemaIdOf({ ...SCHEMA, attestorQuorum: 1 })).toBe(sid);
    const bare = await send(attestation(undefined, { schema_id: plainSid }));
    expect(bare.status).toBe("accept");
    // The notice of an unproven attestation has no attestor member at all: its bytes are as they were.
    expect(Object.keys((decode(bare.notices[0] as Hex) as { data: object }).data)).not.toContain("attestor");
    expect(await h.read("attestation", { attestation_id: inputIdOf("create_attestation", bare.index) })).toMatchObject({ attestor: null, attestors: [] });
    const forged = await send(attestation([await signedClaim({ schemaId: plainSid, signer: stranger })], { schema_id: plainSid }));
    expect(forged.report).toEqual({ error: { code: "PROOF_REJECTED", message: `proof: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor` } });
  });

  it("the schema query says which schemas require proof, and by how many attestors", async () => {
    expect(await h.read("provider_schema", { schema_id: sid })).toMatchObject({ proof: "attestor", attestor_quorum: 1 });
    expect(await h.read("provider_schema", { schema_id: plainSid })).toMatchObject({ proof: "none", attestor_quorum: 1 });
    expect(await h.read("provider_schema", { schema_id: quorumSid })).toMatchObject({ proof: "attestor", attestor_quorum: 2 });
  });
});

describe("a schema that requires two attestors", () => {
  const both = async (o: ClaimOptions = {}) => [await signedClaim({ schemaId: quorumSid, ...o }), await signedClaim({ schemaId: quorumSid, signer: second, nonce: "0x02", ...o })];

  it("accepts two claims from distinct registered attestors and names both", async () => {
    const out = await send(attestation(await both(), { schema_id: quorumSid }));
    expect(out.status, JSON.stringify(out.report)).toBe("accept");
    const id = inputIdOf("create_attestation", out.index);
    expect((decode(out.notices[0] as Hex) as { data: object }).data).toMatchObject({ attestor: ATTESTOR_ADDRESS, attestors: [ATTESTOR_ADDRESS, SECOND_ADDRESS] });
    expect(await h.read("attestation", { attestation_id: id })).toMatchObject({ attestor: ATTESTOR_ADDRESS, attestors: [ATTESTOR_ADDRESS, SECOND_ADDRESS] });
  });

  const cases: [string, () => Promise<TlsProof[]>, string][] = [
    ["one signature", async () => [await signedClaim({ schemaId: quorumSid })], `proof: schema ${quorumSid} requires claims from 2 attestors, got 1`],
    [
      "the same attestor twice (two sessions)",
      async () => [await signedClaim({ schemaId: quorumSid }), await signedClaim({ schemaId: quorumSid, nonce: "0x09" })],
      `proof: attestor ${ATTESTOR_ADDRESS} signed two of the claims: each claim must come from a distinct attestor`,
    ],
    [
      "claims that disagree on the bucket",
      async () => [await signedClaim({ schemaId: quorumSid }), await signedClaim({ schemaId: quorumSid, signer: second, nonce: "0x02", range: bin("high") })],
      'proof: claim 2: the claim does not prove that data.balance lies in bucket "mid"',
    ],
    [
      "a second claim for another owner",
      async () => [await signedClaim({ schemaId: quorumSid }), await signedClaim({ schemaId: quorumSid, signer: second, nonce: "0x02", owner: BOB })],
      "proof: claim 2: the claim was made for another owner",
    ],
    [
      "a second signer that is not registered",
      async () => [await signedClaim({ schemaId: quorumSid }), await signedClaim({ schemaId: quorumSid, signer: stranger, nonce: "0x02" })],
      `proof: claim 2: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor`,
    ],
  ];
  it.each(cases)("refuses %s, leaving no trace", async (_, build, message) => {
    const before = databaseDigest(h.db.$client, { includeMeta: false });
    const out = await send(attestation(await build(), { schema_id: quorumSid }));
    expect(out.report).toEqual({ error: { code: "PROOF_REJECTED", message } });
    expect(databaseDigest(h.db.$client, { includeMeta: false })).toBe(before);
  });

  it("registration refuses a quorum without proof, or above 16", async () => {
    const noProof = await h.input("register_schema", { ...PLAIN_SCHEMA, attestorQuorum: 2 });
    expect(noProof.reports.map(decode)).toEqual([{ error: { code: "INVALID_PARAMS", message: 'attestorQuorum: a quorum of attestors needs proof "attestor"' } }]);
    const tooMany = await h.input("register_schema", { ...SCHEMA, attestorQuorum: 17 });
    expect((tooMany.reports.map(decode)[0] as { error: { message: string } }).error.message).toMatch(/^attestorQuorum: /);
  });
});

describe("a claim that does not check out is rejected with its reason and leaves no trace", () => {
  const cases: [string, () => Promise<Record<string, unknown>>, string, string, Address?][] = [
    ["no proof for a schema that requires one", async () => attestation(undefined), "PROOF_REJECTED", `proof: schema ${sid} requires signed claims from 1 attestor(s)`],
    ["a signer that is not a registered attestor", async () => attestation([await signedClaim({ signer: stranger })]), "PROOF_REJECTED", `proof: signed by ${stranger.address.toLowerCase()}, which is not a registered attestor`],
    [
      "a widened range under the original signature",
      async () => {
        const [proof] = [await signedClaim()];
        const wider = canonicalJson(claimParameters({ url: URL_OK, method: "GET", field: "data.balance", range: { lo: "0", hi: "1000", hiInclusive: false } }));
        return attestation([{ ...proof, claim: { ...proof.claim, parameters: wider } }]);
      },
      "PROOF_REJECTED",
      "proof: the claim's identifier does not match its content",
    ],
    [
      "a tampered range with a recomputed identifier",
      async () => {
        const proof = await signedClaim();
        const wider = canonicalJson(claimParameters({ url: URL_OK, method: "GET", field: "data.balance", range: { lo: "0", hi: "1000", hiInclusive: false } }));
        const claim = { ...proof.claim, parameters: wider };
        return attestation([{ ...proof, claim: { ...claim, identifier: claimIdentifier(claim) } }]);
      },
      "PROOF_REJECTED",
      // The signature now recovers to someone else: nobody signed this content.
      "proof: signed by",
    ],
    [
      "a wider range, signed by the attestor",
      async () => attestation([await signedClaim({ range: { lo: "0", hi: "1000", hiInclusive: false } })]),
      "PROOF_REJECTED",
      'proof: the claim does not prove that data.balance lies in bucket "mid"',
    ],
    [
      "a shifted range, signed by the attestor",
      async () => attestation([await signedClaim({ range: { lo: "150", hi: "1150", hiInclusive: false } })]),
      "PROOF_REJECTED",
      'proof: the claim does not prove that data.balance lies in bucket "mid"',
    ],
    [
      "the bin's upper edge included, signed by the attestor",
      async () => attestation([await signedClaim({ range: { lo: "100", hi: "1000", hiInclusive: true } })]),
      "PROOF_REJECTED",
      'proof: the claim does not prove that data.balance lies in bucket "mid"',
    ],
    ["a pattern over another key", async () => attestation([await signedClaim({ field: "data.limit" })]), "PROOF_REJECTED", "proof: the claim is not about field data.balance"],
    ["another bucket than the one proven", async () => attestation([await signedClaim()], { bucket_values: { "data.balance": "high" } }), "PROOF_REJECTED", 'proof: the claim does not prove that data.balance lies in bucket "high"'],
    [
      "an older claim that extracts the value (it would publish it)",
      async () =>
        attestation([
          await signedClaim({
            tamper: (p) => ({ url: p.url, method: p.method, responseMatches: [{ type: "regex", value: '"balance"\\s*:\\s*(?<value>-?[0-9]+(?:\\.[0-9]+)?)' }] }),
          }),
        ]),
      "PROOF_REJECTED",
      "proof: the claim is not about field data.balance",
    ],
    [
      "parameters with a member a proven attestation may not use",
      async () => attestation([await signedClaim({ tamper: (p) => ({ ...p, paramValues: { x: "1" } }) })]),
      "PROOF_REJECTED",
      'proof: the claim\'s parameters hold "paramValues", which a proven attestation may not use',
    ],
    [
      "a tampered signature",
      async () => {
        const proof = await signedClaim();
        const flipped = `${proof.signature.slice(0, 20)}${proof.signature[20] === "a" ? "b" : "a"}${proof.signature.slice(21)}` as Hex;
        return attestation([{ ...proof, signature: flipped }]);
      },
      "PROOF_REJECTED",
      "proof: ",
    ],
    ["a signature whose v is not 27/28 or 0/1", async () => attestation([{ ...(await signedClaim()), signature: `0x${"11".repeat(64)}05` }]), "PROOF_REJECTED", "proof: the signature does not recover"],
    ["another host than the schema's domain", async () => attestation([await signedClaim({ url: "https://evil.example/api/balance" })]), "PROOF_REJECTED", "proof: the claim names host evil.example, the schema's domain is bank.example"],
    ["plain http", async () => attestation([await signedClaim({ url: "http://bank.example/api/balance" })]), "PROOF_REJECTED", "proof: the claim's URL is not https"],
    ["another owner", async () => attestation([await signedClaim({ owner: BOB })]), "PROOF_REJECTED", "proof: the claim was made for another owner"],
    ["another schema", async () => attestation([await signedClaim({ schemaId: plainSid })]), "PROOF_REJECTED", "proof: the claim was made for another schema"],
    ["a claim older than an hour", async () => attestation([await signedClaim({ timestampS: AT - MAX_CLAIM_AGE_SECONDS - 1 })]), "PROOF_REJECTED", `proof: the claim is ${MAX_CLAIM_AGE_SECONDS + 1} s old (at most ${MAX_CLAIM_AGE_SECONDS})`],
    ["a claim dated too far ahead", async () => attestation([await signedClaim({ timestampS: AT + MAX_CLAIM_SKEW_SECONDS + 1 })]), "PROOF_REJECTED", `proof: the claim is dated ${MAX_CLAIM_SKEW_SECONDS + 1} s after its input`],
    ["two bucketed fields", async () => attestation([await signedClaim()], { bucket_values: { "data.balance": "mid", other: "x" } }), "INVALID_PARAMS", "bucket_values.other: not a bucket field of schema"],
    ["a proof with an unknown member", async () => attestation([{ ...(await signedClaim()), extra: 1 } as unknown as TlsProof]), "INVALID_PARAMS", "proofs.0: Unrecognized key"],
    ["more claims than the largest quorum", async () => attestation(Array.from({ length: 17 }, () => ({ claim: {} }) as unknown as TlsProof)), "INVALID_PARAMS", "proofs: "],
    [
      "a claim relayed for another owner, sent straight by someone without the role",
      async () => attestation([await signedClaim()]),
      "UNAUTHORIZED_SENDER",
      `sender ${BOB} does not hold the attestor role and is not the owner ${ALICE} it names`,
      BOB,
    ],
    [
      "an owner's own claim made for another owner",
      async () => attestation([await signedClaim({ owner: BOB })], { owner: BOB }),
      "UNAUTHORIZED_SENDER",
      `sender ${ALICE} does not hold the attestor role and is not the owner ${BOB} it names`,
      ALICE,
    ],
    ["an owner's own attestation without claims", async () => attestation(undefined), "UNAUTHORIZED_SENDER", `sender ${ALICE} does not hold the attestor role`, ALICE],
  ];

  it.each(cases)("%s", async (_, build, code, message, sender) => {
    const params = await build();
    const before = databaseDigest(h.db.$client, { includeMeta: false });
    const out = await send(params, sender);
    expect(out.status).toBe("reject");
    const error = (out.report as { error: { code: string; message: string } }).error;
    expect(error.code).toBe(code);
    expect(error.message.startsWith(message), error.message).toBe(true);
    expect(databaseDigest(h.db.$client, { includeMeta: false })).toBe(before);
  });

  it("a claim used once is refused the second time, whatever the signature's encoding", async () => {
    const proof = await signedClaim();
    const first = await send(attestation([proof]));
    expect(first.status).toBe("accept");
    const firstId = inputIdOf("create_attestation", first.index);
    const before = databaseDigest(h.db.$client, { includeMeta: false });
    const again = await send(attestation([proof]));
    expect(again.report).toEqual({ error: { code: "DUPLICATE", message: `proof: this claim was already used by attestation ${firstId}` } });
    // v as 0/1 instead of 27/28: the same signed claim.
    const v = parseInt(proof.signature.slice(-2), 16) - 27;
    const reencoded = `${proof.signature.slice(0, -2)}0${v}` as Hex;
    const third = await send(attestation([{ ...proof, signature: reencoded }]));
    expect(third.report).toEqual({ error: { code: "DUPLICATE", message: `proof: this claim was already used by attestation ${firstId}` } });
    expect(databaseDigest(h.db.$client, { includeMeta: false })).toBe(before);
    // Another nonce is another claim.
    expect((await send(attestation([await signedClaim({ nonce: "0x02" })]))).status).toBe("accept");
  });

  it("a removed attestor signs nothing the rollup accepts any more", async () => {
    expect((await h.input("set_tls_attestor", { address: attestor.address, enabled: false })).status).toBe("accept");
    const out = await send(attestation([await signedClaim()]));
    expect(out.report).toEqual({ error: { code: "PROOF_REJECTED", message: `proof: signed by ${ATTESTOR_ADDRESS}, which is not a registered attestor` } });
  });

  it("in a batch, a forged item fails alone and a genuine one applies", async () => {
    const genuine = attestation([await signedClaim()]);
    const forged = attestation([await signedClaim({ signer: stranger, nonce: "0x03" })]);
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
    expect(await h.read("tls_attestors")).toEqual([
      { address: ATTESTOR_ADDRESS, name: "test attestor", added_at: T0 + 5 },
      { address: SECOND_ADDRESS, name: "second attestor", added_at: T0 + 6 },
    ]);
    const renamed = await h.input("set_tls_attestor", { address: attestor.address, enabled: true, name: "renamed" });
    expect(renamed.notices.map(decode)).toEqual([{ event: "attestor:registered", data: { address: ATTESTOR_ADDRESS, name: "renamed" } }]);
    await h.input("set_tls_attestor", { address: stranger.address, enabled: true });
    expect(await h.read("tls_attestors")).toEqual([
      { address: ATTESTOR_ADDRESS, name: "renamed", added_at: T0 + 5 },
      { address: SECOND_ADDRESS, name: "second attestor", added_at: T0 + 6 },
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
