/**
 * The nullifiers' protocol (common/nullifier.ts) and dealer (common/nullifier-dealer.ts), as
 * docs/nullifiers.md states it: any t attestors give the same nullifier, k·P; fewer give another value
 * and are refused; every lie by an attestor or the prover is refused with its reason; re-sharing keeps
 * every nullifier; and nothing published holds the account id or P.
 */
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { hexToBytes } from "./hex.ts";
import {
  blindNullifier,
  checkKeySet,
  evaluateNullifierShare,
  finishNullifier,
  nullifierElement,
  nullifierInput,
  verifyNullifier,
  type KeyShare,
  type NullifierKeys,
  type NullifierSubject,
  type PublishedNullifier,
} from "./nullifier.ts";
import { acceptRedistribution, dealKey, interpolateSecret, redistributeShare, reshare, shareFileOf, shareFromFile, type DealtKey } from "./nullifier-dealer.ts";
import { encodeElement, GENERATOR, randomScalar, Scalars } from "./oprf-ristretto255.ts";

const SCHEMA = `0x${"5c".repeat(32)}` as Hex;
const OTHER_SCHEMA = `0x${"5d".repeat(32)}` as Hex;
const alice: NullifierSubject = { provider: "bank.example", schemaId: SCHEMA, accountId: "acct-7731-0042" };
const bob: NullifierSubject = { ...alice, accountId: "acct-1234-9999" };

const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`;

/** Every subset of `items` of size `size`. */
function subsets<T>(items: readonly T[], size: number): T[][] {
  if (size === 0) return [[]];
  return items.flatMap((item, i) => subsets(items.slice(i + 1), size - 1).map((rest) => [item, ...rest]));
}

/** A whole claim: the prover blinds, the chosen attestors evaluate, the prover finishes. */
function prove(subject: NullifierSubject, shares: readonly KeyShare[], keys: NullifierKeys): PublishedNullifier {
  const blinding = blindNullifier(subject);
  return finishNullifier(
    blinding,
    shares.map((share) => evaluateNullifierShare(share, subject, blinding)),
    keys,
  );
}

const expectRefused = (published: PublishedNullifier, keys: NullifierKeys, reason: string, index?: number) => {
  const verdict = verifyNullifier(published, keys);
  expect(verdict.ok).toBe(false);
  if (verdict.ok) return;
  expect(verdict.reason).toBe(reason);
  if (index !== undefined) expect(verdict.index).toBe(index);
};

describe.each([
  [2, 3],
  [3, 3],
])("t = %i of %i attestors", (t, n) => {
  const k = randomScalar();
  const dealt = dealKey({ threshold: t, indices: Array.from({ length: n }, (_, i) => i + 1), secret: k });
  const expected = hexOf(encodeElement(nullifierElement(alice).multiply(k)));

  it("any t attestors give the same nullifier, k·P, and the dapp accepts it", () => {
    for (const chosen of subsets(dealt.shares, t)) {
      const published = prove(alice, chosen, dealt.keys);
      expect(published.nullifier).toBe(expected);
      expect(verifyNullifier(published, dealt.keys)).toEqual({ ok: true, nullifier: expected });
    }
    expect(interpolateSecret(dealt.shares)).toBe(k);
  });

  it("fewer than t shares interpolate to another value, and the dapp refuses t − 1 shares", () => {
    for (const chosen of subsets(dealt.shares, t - 1)) {
      expect(interpolateSecret(chosen)).not.toBe(k);
      const partial = nullifierElement(alice).multiply(interpolateSecret(chosen));
      expect(hexOf(encodeElement(partial))).not.toBe(expected);
    }
    const published = prove(alice, dealt.shares, dealt.keys);
    expectRefused({ ...published, shares: published.shares.slice(0, t - 1) }, dealt.keys, "too_few_shares");
    expect(() => finishNullifier(blindNullifier(alice), [], dealt.keys)).toThrow(/0 attestors answered with a valid share, \d are needed/);
  });

  it("a lying attestor is refused: a wrong share, or a proof for another blinded element", () => {
    const liar = dealt.shares[0] as KeyShare;
    const blinding = blindNullifier(alice);
    const honest = dealt.shares.map((s) => evaluateNullifierShare(s, alice, blinding));
    const published = finishNullifier(blinding, honest.slice(0, t), dealt.keys);
    // Evaluated with another share than the registered one: its proof holds for that share, not for K_i.
    const wrongShare = evaluateNullifierShare({ index: liar.index, secret: Scalars.add(liar.secret, 1n) }, alice, blinding);
    expectRefused({ ...published, shares: [wrongShare, ...published.shares.slice(1)] }, dealt.keys, "wrong_share_proof", liar.index);
    // The prover drops a liar's share: with t honest others it still finishes, with fewer it cannot.
    expect(() => finishNullifier(blinding, [wrongShare, ...honest.slice(1, t)], dealt.keys)).toThrow(/valid share/);
    if (t < n) expect(finishNullifier(blinding, [wrongShare, ...honest.slice(1)], dealt.keys).nullifier).toBe(expected);
    // An honest evaluation, but of another claim's blinded element, replayed here.
    const replayed = evaluateNullifierShare(liar, alice, blindNullifier(alice));
    expectRefused({ ...published, shares: [replayed, ...published.shares.slice(1)] }, dealt.keys, "wrong_share_proof", liar.index);
  });

  it("refuses a duplicated index, an unregistered one, and malformed parts", () => {
    const published = prove(alice, dealt.shares.slice(0, t), dealt.keys);
    const first = published.shares[0] as PublishedNullifier["shares"][number];
    expectRefused({ ...published, shares: [first, ...published.shares] }, dealt.keys, "duplicate_share", first.index);
    expectRefused({ ...published, shares: [...published.shares, { ...first, index: 9 }] }, dealt.keys, "unregistered_share", 9);
    expectRefused({ ...published, nullifier: `0x${"00".repeat(32)}` }, dealt.keys, "malformed");
    expectRefused({ ...published, blinded: `0x${"ff".repeat(32)}` }, dealt.keys, "malformed");
    expectRefused({ ...published, blindCommitment: "0x12" }, dealt.keys, "malformed");
    expectRefused({ ...published, unblindingProof: published.unblindingProof.slice(0, -2) as Hex }, dealt.keys, "malformed");
    expectRefused({ ...published, shares: [{ ...first, index: 0 }] }, dealt.keys, "malformed");
    expectRefused({ ...published, shares: [{ ...first, evaluation: `0x${"00".repeat(32)}` }] }, dealt.keys, "malformed", first.index);
  });

  it("a prover who lies in unblinding is refused: another nullifier, or another blind than R's", () => {
    const blinding = blindNullifier(alice);
    const evaluations = dealt.shares.slice(0, t).map((s) => evaluateNullifierShare(s, alice, blinding));
    const honest = finishNullifier(blinding, evaluations, dealt.keys);
    const bobs = prove(bob, dealt.shares.slice(0, t), dealt.keys);
    expectRefused({ ...honest, nullifier: bobs.nullifier }, dealt.keys, "wrong_unblinding");
    // A second blind r' makes a self-consistent N' = r'⁻¹·Z with its own proof, but R commits to r.
    const other = { ...blinding, blind: randomScalar() };
    const lying = finishNullifier(other, evaluations, dealt.keys);
    expect(lying.nullifier).not.toBe(honest.nullifier);
    expectRefused(lying, dealt.keys, "wrong_unblinding");
    expect(verifyNullifier(honest, dealt.keys).ok).toBe(true);
  });
});

describe("the attestor's checks", () => {
  const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
  const share = dealt.shares[0] as KeyShare;

  it("evaluates only the blinded element of the account it saw, under the blind it is given", () => {
    const blinding = blindNullifier(alice);
    expect(() => evaluateNullifierShare(share, bob, blinding)).toThrow("the blinded element is not this account's under this blind");
    expect(() => evaluateNullifierShare(share, { ...alice, schemaId: OTHER_SCHEMA }, blinding)).toThrow(/not this account's/);
    expect(() => evaluateNullifierShare(share, alice, { ...blinding, blindCommitment: blindNullifier(alice).blindCommitment })).toThrow("the blind's commitment R is not r·G");
    // A blind of zero would make B and R the identity, and any N would "unblind" it.
    expect(() => evaluateNullifierShare(share, alice, { ...blinding, blind: 0n })).toThrow("the blind is not a non-zero scalar");
  });
});

describe("what a nullifier is of", () => {
  const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
  const nullifier = (subject: NullifierSubject) => prove(subject, dealt.shares.slice(0, 2), dealt.keys).nullifier;

  it("differs with the schema, the provider or the account; is the same for the same triple", () => {
    const base = nullifier(alice);
    expect(nullifier(alice)).toBe(base);
    expect(nullifier({ ...alice, schemaId: OTHER_SCHEMA })).not.toBe(base);
    expect(nullifier({ ...alice, provider: "other.example" })).not.toBe(base);
    expect(nullifier(bob)).not.toBe(base);
    // Under another dealing's key the same account has another nullifier.
    const another = dealKey({ threshold: 2, indices: [1, 2, 3] });
    expect(prove(alice, another.shares.slice(0, 2), another.keys).nullifier).not.toBe(base);
  });

  it("hashes an unambiguous, length-prefixed encoding", () => {
    const input = nullifierInput({ provider: "p", schemaId: SCHEMA, accountId: "a" });
    const tag = Buffer.from("rollup-attestation/nullifier/v1");
    const expected = Buffer.concat([Buffer.from([0, tag.length]), tag, Buffer.from([0, 1]), Buffer.from("p"), Buffer.from([0, 32]), Buffer.from(hexToBytes(SCHEMA)), Buffer.from([0, 1]), Buffer.from("a")]);
    expect(Buffer.from(input).equals(expected)).toBe(true);
    expect(hexOf(nullifierInput({ ...alice, accountId: "ab" }))).not.toBe(hexOf(nullifierInput({ ...alice, accountId: "ab\u0000" })));
    expect(() => nullifierInput({ ...alice, accountId: "" })).toThrow("a nullifier needs an account id");
    expect(() => nullifierInput({ ...alice, schemaId: "0x12" })).toThrow("a schema id is 0x and 64 hex digits");
    expect(() => nullifierInput({ ...alice, accountId: "x".repeat(65536) })).toThrow(/over 65535 bytes/);
  });

  it("publishes neither the account id nor P: every published byte string searched", () => {
    const published = prove(alice, dealt.shares.slice(0, 2), dealt.keys);
    const p = encodeElement(nullifierElement(alice));
    const account = Buffer.from(alice.accountId, "utf8");
    const strings: Hex[] = [
      published.nullifier,
      published.blinded,
      published.blindCommitment,
      published.unblindingProof,
      ...published.shares.flatMap((s) => [s.evaluation, s.proof]),
      dealt.keySet.groupKey,
      ...dealt.keySet.commitments.map((c) => c.commitment),
    ];
    const blobs = [...strings.map((s) => Buffer.from(hexToBytes(s))), Buffer.from(JSON.stringify({ published, keySet: dealt.keySet }), "utf8")];
    for (const blob of blobs) {
      expect(blob.includes(account)).toBe(false);
      expect(blob.includes(Buffer.from(p))).toBe(false);
      expect(blob.includes(Buffer.from(nullifierInput(alice)))).toBe(false);
    }
    const text = JSON.stringify({ published, keySet: dealt.keySet }).toLowerCase();
    expect(text).not.toContain(alice.accountId.toLowerCase());
    expect(text).not.toContain(account.toString("hex"));
    expect(text).not.toContain(Buffer.from(p).toString("hex"));
  });
});

describe("key sets", () => {
  const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });

  it("refuses commitments off one polynomial, or a group key they do not interpolate to", () => {
    const stray = hexOf(encodeElement(GENERATOR.multiply(randomScalar())));
    const commitments = dealt.keySet.commitments.map((c) => (c.index === 3 ? { ...c, commitment: stray } : c));
    expect(checkKeySet({ ...dealt.keySet, commitments })).toMatchObject({ ok: false, reason: "inconsistent_commitments", message: "commitment 3 is not on the polynomial the others lie on" });
    expect(checkKeySet({ ...dealt.keySet, groupKey: stray })).toMatchObject({ ok: false, reason: "inconsistent_commitments" });
    expect(checkKeySet({ ...dealt.keySet, threshold: 4 })).toMatchObject({ ok: false, reason: "malformed", message: "a threshold of 4 needs at least 4 commitments" });
    expect(checkKeySet({ ...dealt.keySet, suite: "P256-SHA256" })).toMatchObject({ ok: false, reason: "malformed" });
    expect(checkKeySet(dealt.keySet).ok).toBe(true);
  });

  it("a share file round-trips, and one whose secret is not its commitment's is refused", () => {
    const share = dealt.shares[1] as KeyShare;
    const file = shareFileOf(share, dealt.keys);
    expect(shareFromFile(JSON.parse(JSON.stringify(file)))).toEqual(share);
    const other = shareFileOf(dealt.shares[2] as KeyShare, dealt.keys);
    expect(() => shareFromFile({ ...file, secret: other.secret })).toThrow("share 2's secret does not match its commitment");
    expect(() => shareFromFile({ ...file, suite: "x" })).toThrow(/not a share file: suite/);
  });
});

describe("re-sharing keeps k, so every nullifier stays", () => {
  const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
  const before = prove(alice, dealt.shares.slice(0, 2), dealt.keys).nullifier;
  const sameNullifier = (next: DealtKey) => {
    for (const chosen of subsets(next.shares, next.keys.threshold)) expect(prove(alice, chosen, next.keys).nullifier).toBe(before);
  };

  it("adding an attestor, then removing one, then raising the threshold", () => {
    const added = reshare({ shares: dealt.shares.slice(1), oldKeys: dealt.keys, newIndices: [1, 2, 3, 4], newThreshold: 2 });
    expect(added.keySet.groupKey).toBe(dealt.keySet.groupKey);
    sameNullifier(added);
    const removed = reshare({ shares: added.shares.slice(2), oldKeys: added.keys, newIndices: [1, 3, 4], newThreshold: 2 });
    sameNullifier(removed);
    const raised = reshare({ shares: removed.shares, oldKeys: removed.keys, newIndices: [1, 3, 4, 5], newThreshold: 3 });
    sameNullifier(raised);
    // An old share does not combine with a new one: the polynomial is fresh.
    expect(interpolateSecret([dealt.shares[0] as KeyShare, raised.shares[1] as KeyShare, raised.shares[2] as KeyShare])).not.toBe(interpolateSecret(dealt.shares));
    expect(interpolateSecret(raised.shares.slice(0, 3))).toBe(interpolateSecret(dealt.shares));
  });

  it("refuses too few old shares, one not matching its commitment, and a sub-share off its commitments", () => {
    expect(() => reshare({ shares: dealt.shares.slice(0, 1), oldKeys: dealt.keys, newIndices: [1, 2, 3, 4], newThreshold: 2 })).toThrow(/needs at least 2 attestors/);
    const bad = { index: 1, secret: Scalars.add((dealt.shares[0] as KeyShare).secret, 1n) };
    expect(() => reshare({ shares: [bad, dealt.shares[1] as KeyShare], oldKeys: dealt.keys, newIndices: [1, 2], newThreshold: 2 })).toThrow("share 1 does not match its registered commitment");
    const dealings = dealt.shares.slice(0, 2).map((s) => redistributeShare(s, [1, 2, 4], 2));
    const received = dealings.map((d) => ({ ...d, subShare: (d.subShares[2] as KeyShare).secret }));
    expect(acceptRedistribution(4, received, dealt.keys).index).toBe(4);
    const tampered = received.map((r, i) => (i === 0 ? { ...r, subShare: Scalars.add(r.subShare, 1n) } : r));
    expect(() => acceptRedistribution(4, tampered, dealt.keys)).toThrow("old holder 1's sub-share for 4 does not match its commitments");
    // An old holder that re-shares another value than its registered share is caught by C_0.
    const impostor = redistributeShare({ index: 1, secret: randomScalar() }, [1, 2, 4], 2);
    const withImpostor = [{ ...impostor, subShare: (impostor.subShares[2] as KeyShare).secret }, received[1] as (typeof received)[number]];
    expect(() => acceptRedistribution(4, withImpostor, dealt.keys)).toThrow("old holder 1 re-shared something other than its registered share");
  });
});
