/**
 * The prover's two steps around a claim of a schema unique per account (docs/nullifiers.md, steps 1 and
 * 3), shared by the api's own claims and `npm run prove` on the user's machine: draw the claim's blind r
 * before the attestors are asked, then finish the nullifier from what they answered, against the key set
 * the rollup registered (query `nullifier_keys`). The account id never passes through here: the prover
 * processes read it from the provider's answer and the attestors from what they saw.
 */
import type { Hex } from "viem";
import { blindCommitmentOf, blindHex, checkKeySet, finishNullifier, NullifierError, type NullifierKeys, type NullifierKeysWire, type PublishedNullifier, type ShareEvaluation } from "./nullifier.ts";
import { randomScalar, SUITE_ID } from "./oprf-ristretto255.ts";
import type { ProveRequest } from "./prover-protocol.ts";
import { contextNullifierBinding, type TlsClaim } from "./tls-claim.ts";

/** A claim's secret blind, and what each of its attestors' ProveRequests carries (one r for all of them). */
export interface ClaimBlind {
  blind: bigint;
  request: NonNullable<ProveRequest["nullifier"]>;
}

/** A fresh r for one claim; `accountField` is the schema's `accountIdField`. */
export function drawClaimBlind(accountField: string): ClaimBlind {
  const blind = randomScalar();
  return { blind, request: { blind: blindHex(blind), accountField } };
}

/**
 * The rollup's key set (query `nullifier_keys`) as keys to finish against, checked as the dapp checked it
 * at registration: a reader that answered a set whose commitments do not lie on one polynomial is not
 * believed.
 */
export function keysOfWire(wire: NullifierKeysWire): NullifierKeys {
  const verdict = checkKeySet({ version: 1, suite: SUITE_ID, threshold: wire.threshold, groupKey: wire.group_key, commitments: wire.commitments.map(({ index, commitment }) => ({ index, commitment })) });
  if (!verdict.ok) throw new NullifierError(`the registered key set does not check: ${verdict.message}`);
  return verdict.keys;
}

/**
 * The nullifier's published parts from the attestors' answers. Every claim must bind one B and R, with R
 * this claim's r·G (an attestor that bound another blind signed another claim); each evaluation's proof is
 * checked against the registered commitment by finishNullifier, which keeps t of those that hold.
 */
export function finishClaimNullifier(claim: ClaimBlind, proven: readonly { claim: TlsClaim; nullifier?: ShareEvaluation | undefined }[], keys: NullifierKeys): PublishedNullifier {
  let bound: { blinded: Hex; blindCommitment: Hex } | undefined;
  for (const [i, p] of proven.entries()) {
    const binding = contextNullifierBinding(p.claim.context);
    if (!binding.ok) throw new NullifierError(`claim ${i + 1}: ${binding.reason}`);
    if (binding.value.blindCommitment !== blindCommitmentOf(claim.blind)) throw new NullifierError(`claim ${i + 1} binds another blind than this claim's`);
    if (bound !== undefined && binding.value.blinded !== bound.blinded) throw new NullifierError(`claim ${i + 1} binds another blinded account (B) than claim 1: the attestors saw different accounts`);
    bound ??= binding.value;
  }
  if (bound === undefined) throw new NullifierError("no attestor answered");
  const evaluations = proven.flatMap((p) => (p.nullifier === undefined ? [] : [p.nullifier]));
  return finishNullifier({ blind: claim.blind, ...bound }, evaluations, keys);
}
