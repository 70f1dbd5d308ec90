/**
 * The caller's two steps of a claim's nullifier (common/claim-nullifier.ts), with a key dealt 2 of 3 and
 * attestors' evaluations made by the protocol's own functions: the finished nullifier is the one the
 * dapp's check accepts, and every answer that must not be finished is refused with its reason.
 */
import type { Address, Hex } from "viem";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.ts";
import { drawClaimBlind, finishClaimNullifier, keysOfWire } from "./claim-nullifier.ts";
import { dealKey } from "./nullifier-dealer.ts";
import { blindCommitmentOf, evaluateNullifierShare, nullifierElement, NullifierError, verifyNullifier, type NullifierBlinding } from "./nullifier.ts";
import { encodeElement } from "./oprf-ristretto255.ts";
import { bytesToHex } from "./hex.ts";
import { claimContext, type TlsClaim } from "./tls-claim.ts";

const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });
const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const schemaId = `0x${"cd".repeat(32)}` as Hex;
const FIELD = "data.accountId";
const subjectOf = (accountId: string) => ({ provider: "https", schemaId, accountId });
/** The account each blinded element was made from: an attestor reads it from the session it saw. */
const accountIdOf = new Map<Hex, string>();

/** What an attestor of the claim answers: its signed claim binding B and R, and its evaluation of B. */
function answer(index: number, blinding: NullifierBlinding, accountField = FIELD) {
  const binding = { blinded: blinding.blinded, blindCommitment: blinding.blindCommitment, accountField };
  const claim: TlsClaim = { provider: "http", parameters: "{}", owner, timestampS: 1, context: canonicalJson(claimContext(owner, schemaId, undefined, undefined, binding)), identifier: "0x", epoch: 1 };
  const share = dealt.shares.find((s) => s.index === index);
  if (share === undefined) throw new Error(`no share ${index}`);
  return { claim, nullifier: evaluateNullifierShare(share, subjectOf(accountIdOf.get(blinding.blinded) ?? ""), blinding) };
}
/** The blinding the prover process makes from the account it read, under the caller's r. */
function blindingFor(blind: bigint, accountId: string): NullifierBlinding {
  const blinded = bytesToHex(encodeElement(nullifierElement(subjectOf(accountId)).multiply(blind)));
  accountIdOf.set(blinded, accountId);
  return { blind, blinded, blindCommitment: blindCommitmentOf(blind) };
}

describe("finishing a claim's nullifier", () => {
  it("two attestors' answers under one blind make the nullifier the dapp accepts, the same for one account under any two", () => {
    const nullifiers = [
      [1, 2],
      [2, 3],
      [1, 3],
    ].map((pair) => {
      const claim = drawClaimBlind(FIELD);
      expect(claim.request).toEqual({ blind: expect.stringMatching(/^0x[0-9a-f]{64}$/), accountField: FIELD });
      const blinding = blindingFor(claim.blind, "ACC-1");
      const published = finishClaimNullifier(claim, pair.map((i) => answer(i, blinding)), keysOfWire(wireOf(dealt.keySet)));
      expect(verifyNullifier(published, dealt.keys)).toEqual({ ok: true, nullifier: published.nullifier });
      return published.nullifier;
    });
    expect(new Set(nullifiers).size).toBe(1);
  });

  it("refuses answers that must not be finished, each with its reason", () => {
    const claim = drawClaimBlind(FIELD);
    const keys = dealt.keys;
    const mine = blindingFor(claim.blind, "ACC-1");
    const otherBlind = blindingFor(drawClaimBlind(FIELD).blind, "ACC-1");
    const otherAccount = blindingFor(claim.blind, "ACC-2");
    const refusal = (answers: Parameters<typeof finishClaimNullifier>[1]) => {
      try {
        finishClaimNullifier(claim, answers, keys);
      } catch (error) {
        expect(error).toBeInstanceOf(NullifierError);
        return (error as Error).message;
      }
      return "finished";
    };
    expect(refusal([answer(1, mine), answer(2, otherBlind)])).toBe("claim 2 binds another blind than this claim's");
    expect(refusal([answer(1, mine), answer(2, otherAccount)])).toBe("claim 2 binds another blinded account (B) than claim 1: the attestors saw different accounts");
    expect(refusal([answer(1, mine)])).toBe("1 attestors answered with a valid share, 2 are needed");
    expect(refusal([answer(1, mine), { ...answer(2, mine), nullifier: undefined }])).toBe("1 attestors answered with a valid share, 2 are needed");
    const unbound = { ...answer(2, mine), claim: { ...answer(2, mine).claim, context: canonicalJson(claimContext(owner, schemaId)) } };
    expect(refusal([answer(1, mine), unbound])).toBe("claim 2: the claim's signed context binds no nullifier blind (B and R)");
    expect(refusal([])).toBe("no attestor answered");
  });

  it("believes no key set whose commitments do not lie on one polynomial", () => {
    const wire = wireOf(dealt.keySet);
    const moved = { ...wire, commitments: wire.commitments.map((c, i) => (i === 2 ? { ...c, commitment: wire.commitments[0]?.commitment as Hex } : c)) };
    expect(() => keysOfWire(moved)).toThrow("the registered key set does not check: commitment 3 is not on the polynomial the others lie on");
  });
});

function wireOf(keySet: typeof dealt.keySet) {
  return { threshold: keySet.threshold, group_key: keySet.groupKey, commitments: keySet.commitments.map((c) => ({ ...c, attestor: owner })), registered_at: 1 };
}
