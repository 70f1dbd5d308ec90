/**
 * One provider account backs one owner (issue 52, docs/nullifiers.md), on the real dapp (real migrations,
 * a real SQLite file, the @deroll/app loop): a key set of 3 attestors with t = 2 registered with
 * set_nullifier_keys, a schema unique per account, and proven claims carrying nullifiers made by the real
 * protocol (blind, evaluate, finish). Owner A's account binds to A; B is refused it with
 * ACCOUNT_ALREADY_BOUND, before and after A's attestations are revoked, and accepted with another account;
 * A again is a refresh. Each bad nullifier and key set is refused with its reason and writes nothing. At the
 * end, nothing the run sent or the dapp emitted, and no byte of its database file, holds an account id or P.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeBatchNotice } from "../../common/attestation-batch.ts";
import { canonicalJson } from "../../common/canonical.ts";
import { bytesToHex, jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import {
  blindNullifier,
  evaluateNullifierShare,
  finishNullifier,
  nullifierElement,
  type NullifierSubject,
  type PublishedNullifier,
  type ShareEvaluation,
} from "../../common/nullifier.ts";
import { dealKey, reshare, type DealtKey } from "../../common/nullifier-dealer.ts";
import { encodeElement, GENERATOR, randomScalar } from "../../common/oprf-ristretto255.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type NullifierBinding, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import type { DappErrorCode, InputParams } from "../../common/wire.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, decode, stateDigest, startHarness, T0, type Harness } from "./harness.ts";
import type { AdvanceOutcome } from "./rollup-server.ts";

/** The three attestors, holding shares 1, 2 and 3. */
const attestors = [
  privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123"),
  privateKeyToAccount("0x2222222222222222222222222222222222222222222222222222222222222222"),
  privateKeyToAccount("0x3333333333333333333333333333333333333333333333333333333333333333"),
] as const;
const outsider = privateKeyToAccount("0x4444444444444444444444444444444444444444444444444444444444444444");
const addressOf = (index: number): Address => (attestors[index - 1] as (typeof attestors)[number]).address.toLowerCase() as Address;

const DEFINITION = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const UNIQUE: InputParams["register_schema"] = {
  provider: "http",
  flowType: "unique",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": DEFINITION },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor",
  attestorQuorum: 2,
  accountIdField: "data.accountId",
};
const PLAIN: InputParams["register_schema"] = { ...UNIQUE, flowType: "plain", proof: undefined, attestorQuorum: undefined, accountIdField: undefined };
const usid = schemaIdOf(UNIQUE);
const plainSid = schemaIdOf(PLAIN);
const URL_OK = "https://bank.example/api/balance";

/** The private account ids of the run: none may appear in anything public. */
const ACCOUNT_A = "acct-7731-0042";
const ACCOUNT_B = "acct-1234-9999";
const ACCOUNT_C = "acct-5555-0101";
const subjectOf = (accountId: string): NullifierSubject => ({ provider: UNIQUE.domain, schemaId: usid, accountId });

const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
/** The key set the attestors hold now (replaced by a re-sharing below). */
let current: DealtKey = dealt;
const holdersOf = (indices: readonly number[] = [1, 2, 3]) => indices.map((index) => ({ index, address: addressOf(index) }));

let h: Harness;
let dir: string;
let dbPath: string;
let closed = false;
/** Every input payload sent and every output the dapp emitted in the run, for the privacy search. */
const published: Hex[] = [];

async function send(type: string, params: unknown, sender: Address = ADMIN): Promise<AdvanceOutcome & { report: unknown }> {
  const payload = jsonToHex({ type, params });
  const outcome = await h.raw(payload, { sender });
  published.push(payload, ...outcome.notices, ...outcome.reports, ...(outcome.batch === null ? [] : [outcome.batch]));
  return { ...outcome, report: outcome.reports[0] === undefined ? undefined : decode(outcome.reports[0]) };
}

async function accepted(type: string, params: unknown, sender: Address = ADMIN): Promise<AdvanceOutcome> {
  const outcome = await send(type, params, sender);
  expect(outcome.status, JSON.stringify(outcome.report)).toBe("accept");
  return outcome;
}

/** Sends an input that must be refused with `code` (and a message matching `message`), and checks it wrote nothing. */
async function refused(type: string, params: unknown, code: DappErrorCode, message: string | RegExp, sender: Address = ADMIN): Promise<string> {
  const before = stateDigest(h);
  const outcome = await send(type, params, sender);
  expect(outcome.status).toBe("reject");
  const error = (outcome.report as { error: { code: string; message: string } }).error;
  expect(error.code, error.message).toBe(code);
  if (typeof message === "string") expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
  expect(stateDigest(h)).toBe(before);
  return error.message;
}

let nonce = 0;
/** One attestor's signed range claim for `owner`, its context binding the nullifier's blind when given. */
async function signedClaim(signer: (typeof attestors)[number] | typeof outsider, owner: Address, binding: NullifierBinding | undefined, schemaId: Hex = usid): Promise<TlsProof> {
  const range = binRange(DEFINITION, "mid");
  if (range === undefined) throw new Error("no bin mid");
  const parameters = canonicalJson(claimParameters({ url: URL_OK, method: "GET", field: "data.balance", range }));
  nonce += 1;
  const context = canonicalJson({ ...claimContext(owner, schemaId, `0x${nonce.toString(16).padStart(8, "0")}`, undefined, binding), providerHash: "0x00" });
  const base = { provider: "http", parameters, owner: "0x2e53b0b53d54995108412e305a38080fa2bfd468" as Address, timestampS: T0 + 1, context, epoch: 1 };
  const identifier = claimIdentifier(base);
  const claim: TlsClaim = { ...base, identifier };
  return { claim, signature: await signer.signMessage({ message: claimSignText(claim, identifier) }) };
}

interface ClaimOptions {
  /** Which attestors sign (by index): 1 and 2 unless said. */
  signers?: number[];
  /** Which attestors evaluate shares: the signers unless said. */
  evaluators?: number[];
  /** Changes the published parts after the protocol made them (a lie, a copy). */
  tamper?: (parts: PublishedNullifier) => PublishedNullifier;
  /** The blind the signed contexts bind, when not the nullifier's own (a replay); null: none at all. */
  binding?: NullifierBinding | null;
  /** The field the signed contexts say the account was read at, when not the schema's. */
  accountField?: string;
}

/** A proven attestation of the unique schema for `owner` and `accountId`, its nullifier made by the real protocol. */
async function uniqueClaim(owner: Address, accountId: string, o: ClaimOptions = {}): Promise<{ params: Record<string, unknown>; nullifier: PublishedNullifier }> {
  const signers = o.signers ?? [1, 2];
  const subject = subjectOf(accountId);
  const blinding = blindNullifier(subject);
  const evaluations = (o.evaluators ?? signers).map((index) => {
    const share = current.shares.find((s) => s.index === index);
    if (share === undefined) throw new Error(`no share ${index}`);
    return evaluateNullifierShare(share, subject, blinding);
  });
  const made = finishNullifier(blinding, evaluations, current.keys);
  const nullifier = o.tamper === undefined ? made : o.tamper(structuredClone(made));
  const binding = o.binding === undefined ? { blinded: blinding.blinded, blindCommitment: blinding.blindCommitment, accountField: o.accountField ?? (UNIQUE.accountIdField as string) } : (o.binding ?? undefined);
  const proofs = await Promise.all(signers.map((index) => signedClaim(attestors[index - 1] as (typeof attestors)[number], owner, binding)));
  return {
    params: { schema_id: usid, owner, provider: "http", encrypted_data: "0x0102", bucket_values: { "data.balance": "mid" }, proofs, nullifier },
    nullifier: made,
  };
}

/** Share `i` of published parts (the protocol always publishes t of them). */
function shareAt(parts: PublishedNullifier, i: number): ShareEvaluation {
  const share = parts.shares[i];
  if (share === undefined) throw new Error(`no share at ${i}`);
  return share;
}

const rows = (table: string): number => (h.db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "nullifier-dapp-"));
  dbPath = join(dir, "dapp.sqlite");
  h = await startHarness({ dbPath });
  await accepted("set_role", { address: ATTESTOR, role: "attestor", enabled: true });
  for (const [i, account] of attestors.entries()) await accepted("set_tls_attestor", { address: account.address, enabled: true, name: `attestor ${i + 1}` });
  await accepted("register_schema", PLAIN);
});

afterAll(async () => {
  if (!closed) await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("registering the key set and a schema unique per account", () => {
  it("refuses a unique schema before any key set is registered, and the key set's query says none is", async () => {
    expect((await h.query("nullifier_keys")).exception).toBe(utf8ToHex("no nullifier key set registered"));
    await refused("register_schema", UNIQUE, "INVALID_PARAMS", "accountIdField: no nullifier key set is registered (set_nullifier_keys): a schema unique per account needs one");
  });

  it("refuses key sets that do not check, each with its reason", async () => {
    const offCurve = structuredClone(dealt.keySet);
    // Commitment 3 moved off the polynomial through K and the first two: two quorums would give two nullifiers.
    (offCurve.commitments[2] as { commitment: Hex }).commitment = bytesToHex(encodeElement(GENERATOR.multiply(randomScalar())));
    await refused("set_nullifier_keys", { keySet: offCurve, attestors: holdersOf() }, "INVALID_PARAMS", "keySet: commitment 3 is not on the polynomial the others lie on");
    const wrongK = structuredClone(dealt.keySet);
    wrongK.groupKey = bytesToHex(encodeElement(GENERATOR.multiply(randomScalar())));
    await refused("set_nullifier_keys", { keySet: wrongK, attestors: holdersOf() }, "INVALID_PARAMS", "keySet: the commitments do not interpolate to the group key");
    const one = dealKey({ threshold: 1, indices: [1, 2, 3] });
    await refused("set_nullifier_keys", { keySet: one.keySet, attestors: holdersOf() }, "INVALID_PARAMS", /^keySet\.threshold: at least 2/);
    await refused("set_nullifier_keys", { keySet: dealt.keySet, attestors: holdersOf([1, 2]) }, "INVALID_PARAMS", "attestors: no attestor is named for share 3");
    await refused("set_nullifier_keys", { keySet: dealt.keySet, attestors: [...holdersOf([1, 2]), { index: 3, address: addressOf(1) }] }, "INVALID_PARAMS", `attestors: ${addressOf(1)} holds two indices; an attestor holds one share`);
    await refused(
      "set_nullifier_keys",
      { keySet: dealt.keySet, attestors: [...holdersOf([1, 2]), { index: 3, address: outsider.address }] },
      "INVALID_PARAMS",
      `attestors: ${outsider.address.toLowerCase()} is not a registered attestor (set_tls_attestor)`,
    );
    await refused("set_nullifier_keys", { keySet: dealt.keySet, attestors: [...holdersOf(), { index: 4, address: ATTESTOR }] }, "INVALID_PARAMS", "attestors: index 4 has no commitment in the key set");
    // Only an admin registers it.
    await refused("set_nullifier_keys", { keySet: dealt.keySet, attestors: holdersOf() }, "UNAUTHORIZED_SENDER", `sender ${ATTESTOR} does not hold the admin role`, ATTESTOR);
  });

  it("registers a dealt key set of 3 attestors with t = 2, with a notice naming each share's holder", async () => {
    const out = await accepted("set_nullifier_keys", { keySet: dealt.keySet, attestors: holdersOf() });
    expect(decode(out.notices[0] as Hex)).toEqual({
      event: "nullifier_keys:registered",
      data: { threshold: 2, groupKey: dealt.keySet.groupKey, commitments: dealt.keySet.commitments.map((c) => ({ ...c, attestor: addressOf(c.index) })) },
    });
    // The query a prover finishes nullifiers against answers the same key set.
    expect(await h.read("nullifier_keys")).toEqual({
      threshold: 2,
      group_key: dealt.keySet.groupKey,
      commitments: dealt.keySet.commitments.map((c) => ({ ...c, attestor: addressOf(c.index) })),
      registered_at: expect.any(Number),
    });
  });

  it("refuses a key set under another group key: every bound nullifier would stop matching", async () => {
    const other = dealKey({ threshold: 2, indices: [1, 2, 3] });
    await refused("set_nullifier_keys", { keySet: other.keySet, attestors: holdersOf() }, "INVALID_PARAMS", /^keySet\.groupKey: not the registered group key 0x[0-9a-f]{64}: a new key would change every nullifier/);
  });

  it("refuses a unique schema whose quorum is below t, one without proof, and one whose account id is a data key", async () => {
    await refused("register_schema", { ...UNIQUE, attestorQuorum: 1 }, "INVALID_PARAMS", /^accountIdField: a schema unique per account needs an attestorQuorum of at least the nullifier threshold 2 \(got 1\)/);
    await refused("register_schema", { ...UNIQUE, proof: undefined, attestorQuorum: undefined }, "INVALID_PARAMS", 'accountIdField: a schema unique per account needs proof "attestor": only the attestors see the account id');
    await refused("register_schema", { ...UNIQUE, dataKeys: ["data.accountId"] }, "INVALID_PARAMS", /^accountIdField: "data\.accountId" is a data key/);
    await refused("register_schema", { ...UNIQUE, accountIdField: "data.[0]" }, "INVALID_PARAMS", /^accountIdField: "data\.\[0\]" cannot be proven/);
  });

  it("registers the unique schema, whose id and views say it is unique per account", async () => {
    await accepted("register_schema", UNIQUE);
    expect(usid).not.toBe(schemaIdOf({ ...UNIQUE, accountIdField: undefined }));
    expect(await h.read("provider_schema", { schema_id: usid })).toMatchObject({ unique_per_account: true, account_id_field: "data.accountId", attestor_quorum: 2 });
    expect(await h.read("provider_schema", { schema_id: plainSid })).toMatchObject({ unique_per_account: false, account_id_field: null });
  });
});

/** A's first attestation and its nullifier's parts, for the replays below. */
let aliceFirst: { id: Hex; nullifier: PublishedNullifier };
let aliceSecond: Hex;

describe("one provider account backs one owner", () => {
  it("accepts owner A's claim and binds its nullifier to A", async () => {
    const { params, nullifier } = await uniqueClaim(ALICE, ACCOUNT_A);
    const out = await accepted("create_attestation", params, ATTESTOR);
    aliceFirst = { id: inputIdOf("create_attestation", out.index), nullifier };
    expect(rows("nullifiers")).toBe(1);
    const row = h.db.$client.prepare("select nullifier, owner, attestation_id from nullifiers").get() as { nullifier: Buffer; owner: Buffer; attestation_id: Buffer };
    expect(bytesToHex(row.nullifier)).toBe(nullifier.nullifier);
    expect(bytesToHex(row.owner)).toBe(ALICE);
    expect(bytesToHex(row.attestation_id)).toBe(aliceFirst.id);
    // Its batch notice tells the base layer's registry that its schema is unique per account (isUniquePerAccount).
    expect(decodeBatchNotice(out.batch as Hex).kinds.map((k) => [k.schemaId, k.uniquePerAccount])).toEqual([[usid, true]]);
  });

  it("any two attestors give A's account the same nullifier", async () => {
    for (const signers of [[1, 3], [2, 3]]) {
      const { nullifier } = await uniqueClaim(ALICE, ACCOUNT_A, { signers });
      expect(nullifier.nullifier).toBe(aliceFirst.nullifier.nullifier);
    }
  });

  it("refuses the same account for owner B with ACCOUNT_ALREADY_BOUND, writing nothing", async () => {
    const { params } = await uniqueClaim(BOB, ACCOUNT_A, { signers: [2, 3] });
    await refused("create_attestation", params, "ACCOUNT_ALREADY_BOUND", `nullifier: this provider account already backs another owner under schema ${usid}: one account backs one owner, and a revocation does not free it`, ATTESTOR);
  });

  it("accepts another account for owner B", async () => {
    const { params } = await uniqueClaim(BOB, ACCOUNT_B);
    await accepted("create_attestation", params, ATTESTOR);
    expect(rows("nullifiers")).toBe(2);
  });

  it("accepts A again with the same account (a refresh), binding nothing new", async () => {
    const { params, nullifier } = await uniqueClaim(ALICE, ACCOUNT_A, { signers: [3, 1] });
    expect(nullifier.nullifier).toBe(aliceFirst.nullifier.nullifier);
    const out = await accepted("create_attestation", params, ATTESTOR);
    aliceSecond = inputIdOf("create_attestation", out.index);
    expect(rows("nullifiers")).toBe(2);
  });

  it("after A's attestations are revoked, B is still refused A's account", async () => {
    await accepted("revoke_attestation", { attestation_id: aliceFirst.id, reason: "withdrawn" }, ALICE);
    await accepted("revoke_attestation", { attestation_id: aliceSecond, reason: "withdrawn" }, ALICE);
    const { params } = await uniqueClaim(BOB, ACCOUNT_A);
    await refused("create_attestation", params, "ACCOUNT_ALREADY_BOUND", /^nullifier: this provider account already backs another owner/, ATTESTOR);
    expect(rows("nullifiers")).toBe(2);
  });

  it("in one batch, a second owner of one account is refused as its item while the first applies", async () => {
    const first = await uniqueClaim(ALICE, ACCOUNT_C);
    const second = await uniqueClaim(BOB, ACCOUNT_C, { signers: [2, 3] });
    const out = await send("batch", { items: [{ type: "create_attestation", params: first.params }, { type: "create_attestation", params: second.params }] }, ATTESTOR);
    expect(out.status).toBe("accept");
    expect(out.report).toMatchObject({ item: 1, error: { code: "ACCOUNT_ALREADY_BOUND" } });
    expect(rows("nullifiers")).toBe(3);
  });
});

describe("bad nullifiers are refused with their reason, writing nothing", () => {
  const cases: [string, () => Promise<Record<string, unknown>>, DappErrorCode, string | RegExp][] = [
    [
      "a share with a wrong proof",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { tamper: (n) => ({ ...n, shares: [shareAt(n, 0), { ...shareAt(n, 1), proof: shareAt(n, 0).proof }] }) })).params,
      "NULLIFIER_REJECTED",
      "nullifier: share 2's proof does not show its registered key on this blinded element (wrong_share_proof)",
    ],
    [
      "a share from an attestor that did not sign the claim",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { signers: [1, 2], evaluators: [1, 3] })).params,
      "NULLIFIER_REJECTED",
      `nullifier: share 3 is held by attestor ${addressOf(3)}, which did not sign this claim: shares count only from the claim's signers`,
    ],
    [
      "a share of an unregistered index",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { tamper: (n) => ({ ...n, shares: [shareAt(n, 0), { ...shareAt(n, 1), index: 9 }] }) })).params,
      "NULLIFIER_REJECTED",
      "nullifier: no commitment is registered for share 9 (unregistered_share)",
    ],
    [
      "fewer than t shares (one attestor's alone)",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { tamper: (n) => ({ ...n, shares: n.shares.slice(0, 1) }) })).params,
      "NULLIFIER_REJECTED",
      "nullifier: 1 shares, 2 are needed (too_few_shares)",
    ],
    [
      "a duplicated share",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { tamper: (n) => ({ ...n, shares: [shareAt(n, 0), shareAt(n, 0)] }) })).params,
      "NULLIFIER_REJECTED",
      "nullifier: share 1 is given twice (duplicate_share)",
    ],
    [
      "A's nullifier replayed into another claim (its attestors signed another blind)",
      async () => ({ ...(await uniqueClaim(BOB, ACCOUNT_B)).params, nullifier: aliceFirst.nullifier }),
      "NULLIFIER_REJECTED",
      "nullifier: claim 1: it was signed for another blind (B, R) than the nullifier's: a nullifier counts only in the claim it was made in",
    ],
    [
      "A's nullifier replayed into claims that bind no blind at all",
      async () => ({ ...(await uniqueClaim(BOB, ACCOUNT_B, { binding: null })).params, nullifier: aliceFirst.nullifier }),
      "NULLIFIER_REJECTED",
      "nullifier: claim 1: the claim's signed context binds no nullifier blind (B and R)",
    ],
    [
      "claims whose attestors read the account at another field than the schema's (one the prover chooses)",
      async () => (await uniqueClaim(BOB, ACCOUNT_A, { accountField: "data.nickname" })).params,
      "NULLIFIER_REJECTED",
      "nullifier: claim 1: it read the account at data.nickname; the schema names its accounts by data.accountId",
    ],
    [
      "a binding whose account field is not a chain of object keys",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { accountField: "data[0]" })).params,
      "NULLIFIER_REJECTED",
      'nullifier: claim 1: the claim\'s nullifier binding must be {"blinded": <element>, "blindCommitment": <element>, "accountField": <a chain of object keys>}',
    ],
    [
      "an unblinding proof that lies (A's nullifier named for B's account)",
      async () => (await uniqueClaim(BOB, ACCOUNT_B, { tamper: (n) => ({ ...n, nullifier: aliceFirst.nullifier.nullifier }) })).params,
      "NULLIFIER_REJECTED",
      "nullifier: the nullifier is not the combined evaluation unblinded by the blind committed in R (wrong_unblinding)",
    ],
    [
      "a claim of the unique schema without a nullifier",
      async () => {
        const { nullifier: _, ...params } = (await uniqueClaim(BOB, ACCOUNT_B)).params;
        return params;
      },
      "NULLIFIER_REJECTED",
      `nullifier: schema ${usid} is unique per account: a proven claim must carry its nullifier`,
    ],
    [
      "a nullifier for a schema that is not unique per account",
      async () => ({ schema_id: plainSid, owner: BOB, provider: "http", encrypted_data: "0x0102", bucket_values: { "data.balance": "mid" }, nullifier: aliceFirst.nullifier }),
      "INVALID_PARAMS",
      `nullifier: schema ${plainSid} is not unique per account`,
    ],
  ];
  it.each(cases)("%s", async (_, build, code, message) => {
    const bound = rows("nullifiers");
    await refused("create_attestation", await build(), code, message, ATTESTOR);
    expect(rows("nullifiers")).toBe(bound);
  });
});

describe("re-sharing", () => {
  it("a new key set with the same group key replaces the old, and every nullifier stays bound", async () => {
    // The attestors re-share to t = 2 of indices 4, 5, 6 (the same three attestors, new shares).
    const next = reshare({ shares: dealt.shares.slice(0, 2), oldKeys: dealt.keys, newIndices: [4, 5, 6], newThreshold: 2 });
    expect(next.keySet.groupKey).toBe(dealt.keySet.groupKey);
    const holders = [4, 5, 6].map((index) => ({ index, address: addressOf(index - 3) }));
    await accepted("set_nullifier_keys", { keySet: next.keySet, attestors: holders });
    expect(rows("nullifier_key_shares")).toBe(3);
    // Old shares no longer count: index 1 is unregistered now.
    const { params: stale } = await uniqueClaim(ALICE, ACCOUNT_A);
    await refused("create_attestation", stale, "NULLIFIER_REJECTED", "nullifier: no commitment is registered for share 1 (unregistered_share)", ATTESTOR);
    current = next;
    // Attestors 1 and 2 sign, with their new shares 4 and 5.
    const { params, nullifier } = await uniqueClaim(ALICE, ACCOUNT_A, { signers: [1, 2], evaluators: [4, 5] });
    expect(nullifier.nullifier).toBe(aliceFirst.nullifier.nullifier);
    await accepted("create_attestation", params, ATTESTOR);
    const { params: bob } = await uniqueClaim(BOB, ACCOUNT_A, { signers: [2, 3], evaluators: [5, 6] });
    await refused("create_attestation", bob, "ACCOUNT_ALREADY_BOUND", /^nullifier: this provider account already backs another owner/, ATTESTOR);
  });

  it("refuses a threshold above a unique schema's quorum: its claims could never carry enough shares", async () => {
    const higher = reshare({ shares: current.shares.slice(0, 2), oldKeys: current.keys, newIndices: [4, 5, 6], newThreshold: 3 });
    const holders = [4, 5, 6].map((index) => ({ index, address: addressOf(index - 3) }));
    await refused("set_nullifier_keys", { keySet: higher.keySet, attestors: holders }, "INVALID_PARAMS", "keySet.threshold: 3 is above the attestor quorum 2 of a schema unique per account, whose claims could then never carry enough shares");
  });
});

describe("the account stays private", () => {
  it("no input, notice or report of the run, and no byte of the database file, holds an account id or P", async () => {
    const secrets = [ACCOUNT_A, ACCOUNT_B, ACCOUNT_C];
    const elements = secrets.map((account) => Buffer.from(encodeElement(nullifierElement(subjectOf(account)))));
    // Each secret as bytes, and as the hex text a JSON payload would carry it in.
    const needles = [...secrets.map((secret) => Buffer.from(secret, "utf8")), ...elements];
    const hexNeedles = needles.map((needle) => Buffer.from(needle.toString("hex"), "latin1"));
    const holds = (bytes: Buffer): boolean => [...needles, ...hexNeedles].some((needle) => bytes.includes(needle) || bytes.toString("latin1").toLowerCase().includes(needle.toString("latin1")));
    expect(published.length).toBeGreaterThan(20);
    for (const payload of published) expect(holds(Buffer.from(payload.slice(2), "hex")), payload).toBe(false);
    await h.close();
    closed = true;
    const files = readdirSync(dir).filter((name) => name.startsWith("dapp.sqlite"));
    const bytes = Buffer.concat(files.map((name) => readFileSync(join(dir, name))));
    // The nullifiers are in the file (the search finds what is there), the account ids and P are not.
    expect(bytes.includes(Buffer.from(aliceFirst.nullifier.nullifier.slice(2), "hex"))).toBe(true);
    expect(holds(bytes)).toBe(false);
  });
});
