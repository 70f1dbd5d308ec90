/**
 * Nullifiers (issue 52, DECISIONS.md section 23; the protocol end to end is docs/nullifiers.md): one
 * provider account backs one owner. The nullifier of (provider, schema, account id) is N = k·P with
 * P = HashToGroup(that triple), a threshold verifiable OPRF under a key k that the attestors hold in Shamir
 * shares k_i, t of n, each with a public commitment K_i = k_i·G registered in the rollup.
 *
 * Who runs what:
 * - the prover (the api, or the user proving on its machine) blinds: r, B = r·P, R = r·G;
 * - each attestor, which saw the account id in the TLS session and is given r, checks B and R, answers
 *   Z_i = k_i·B and proves it with a DLEQ against K_i;
 * - the prover combines Z = Σ λ_i·Z_i = r·k·P, publishes N = r⁻¹·Z and proves log_G(R) = log_N(Z);
 * - the dapp checks every proof and the combination (verifyNullifier), deterministically, never seeing P:
 *   P is a hash of a possibly guessable account id, so anyone holding it could test guesses.
 */
import { concatBytes } from "@noble/curves/abstract/utils";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { bytesToHex, hexToBytes, isHex } from "./hex.ts";
import {
  decodeElement,
  decodeScalar,
  encodeElement,
  encodeScalar,
  generateProof,
  GENERATOR,
  hashToGroup,
  IDENTITY,
  lagrangeCoefficients,
  lengthPrefixed,
  linearCombination,
  PROOF_BYTES,
  randomScalar,
  Scalars,
  SUITE_ID,
  verifyProof,
  type Element,
  type RandomSource,
} from "./oprf-ristretto255.ts";

/** Versions what P hashes: a new encoding gets a new tag, so it can never collide with this one. */
export const NULLIFIER_INPUT_TAG = "rollup-attestation/nullifier/v1";
/** Attestor indices are the x of their Shamir shares: never 0 (the secret's own x), at most a uint16. */
export const MAX_SHARE_INDEX = 0xffff;
/** More shares than attestors can ever be registered is refused before any curve work. */
export const MAX_PUBLISHED_SHARES = 256;

/** A prover's or attestor's step that cannot go on: one sentence, in the domain's words. */
export class NullifierError extends Error {
  override readonly name = "NullifierError";
}

/** What a nullifier is of. `accountId` is private: it leaves the prover and the attestors only hashed. */
export interface NullifierSubject {
  provider: string;
  schemaId: Hex;
  accountId: string;
}

/** One attestor's share of k. Secret: it lives in the attestor's share file only. */
export interface KeyShare {
  index: number;
  secret: bigint;
}

/** The registered public side of a dealt key, as the dealer writes it and a registration input carries it. */
export interface NullifierKeySetJson {
  version: 1;
  suite: typeof SUITE_ID;
  threshold: number;
  /** K = k·G: not needed to verify a claim, but it is what a re-sharing must keep (nullifiers unchanged). */
  groupKey: Hex;
  commitments: { index: number; commitment: Hex }[];
}

/** The registered key set as the rollup announces it (notice `nullifier_keys:registered`): public keys only. */
export interface NullifierKeysView {
  threshold: number;
  /** K = k·G, which every later key set must keep. */
  groupKey: Hex;
  /** Each share's commitment K_i and the registered attestor that holds it, by index. */
  commitments: { index: number; commitment: Hex; attestor: Address }[];
}

/**
 * The registered nullifier key set (query `nullifier_keys`, an extension): its threshold t, the group key
 * K every re-sharing keeps, and each share's commitment K_i with the attestor that holds it, by index.
 */
export interface NullifierKeysWire {
  threshold: number;
  group_key: Hex;
  commitments: { index: number; commitment: Hex; attestor: Address }[];
  registered_at: number;
}

/** A key set checked by checkKeySet: every commitment on one polynomial of degree t − 1 through K. */
export interface NullifierKeys {
  threshold: number;
  groupKey: Element;
  commitments: ReadonlyMap<number, Element>;
}

/** The prover's secret blind and the two elements it publishes. */
export interface NullifierBlinding {
  blind: bigint;
  blinded: Hex;
  blindCommitment: Hex;
}

/** One attestor's answer: Z_i = k_i·B and the DLEQ proof that log_G(K_i) = log_B(Z_i). */
export interface ShareEvaluation {
  index: number;
  evaluation: Hex;
  proof: Hex;
}

/** Everything a claim publishes about its nullifier: neither P nor the account id is in it. */
export interface PublishedNullifier {
  nullifier: Hex;
  blinded: Hex;
  blindCommitment: Hex;
  /** The prover's DLEQ proof that log_G(R) = log_N(Σ λ_i·Z_i). */
  unblindingProof: Hex;
  shares: ShareEvaluation[];
}

export type NullifierRefusalReason =
  | "malformed"
  | "duplicate_share"
  | "unregistered_share"
  | "too_few_shares"
  | "wrong_share_proof"
  | "wrong_unblinding";

export type NullifierVerdict =
  | { ok: true; nullifier: Hex }
  | { ok: false; reason: NullifierRefusalReason; message: string; index?: number };

export type KeySetVerdict = { ok: true; keys: NullifierKeys } | { ok: false; reason: "malformed" | "inconsistent_commitments"; message: string };

const elementHex = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x and 64 hex digits (an element)")
  .transform((v) => v as Hex);
const proofHex = z
  .string()
  .regex(/^0x[0-9a-fA-F]{128}$/, "expected 0x and 128 hex digits (a proof)")
  .transform((v) => v as Hex);
const shareIndex = z.number().int().min(1).max(MAX_SHARE_INDEX);

/** The published parts' shape, for an input's params; their content is judged by verifyNullifier. */
export const publishedNullifierSchema = z.object({
  nullifier: elementHex,
  blinded: elementHex,
  blindCommitment: elementHex,
  unblindingProof: proofHex,
  shares: z.array(z.object({ index: shareIndex, evaluation: elementHex, proof: proofHex })).min(1).max(MAX_PUBLISHED_SHARES),
});

/** The key set's shape, as the dealer writes it and a registration input would carry it. */
export const keySetSchema = z.object({
  version: z.literal(1),
  suite: z.literal(SUITE_ID),
  threshold: z.number().int().min(1).max(MAX_PUBLISHED_SHARES),
  groupKey: elementHex,
  commitments: z.array(z.object({ index: shareIndex, commitment: elementHex })).min(1).max(MAX_PUBLISHED_SHARES),
});

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** An element from its 0x hex, or undefined: bad hex, a wrong length, no element, or the identity. */
function elementOf(value: string): Element | undefined {
  return isHex(value) ? decodeElement(hexToBytes(value)) : undefined;
}

function proofOf(value: string): Uint8Array | undefined {
  if (!isHex(value)) return undefined;
  const bytes = hexToBytes(value);
  return bytes.length === PROOF_BYTES ? bytes : undefined;
}

const hexOf = (element: Element): Hex => bytesToHex(encodeElement(element));

/**
 * The bytes P hashes: the tag, the provider, the schema id's 32 bytes and the account id, each prefixed by
 * its 2-byte length, so no two triples share an encoding ("ab" + "c" never reads as "a" + "bc").
 */
export function nullifierInput(subject: NullifierSubject): Uint8Array {
  if (subject.provider === "") throw new NullifierError("a nullifier needs a provider");
  if (subject.accountId === "") throw new NullifierError("a nullifier needs an account id");
  if (!isHex(subject.schemaId) || subject.schemaId.length !== 66) throw new NullifierError("a schema id is 0x and 64 hex digits");
  const parts = [utf8(NULLIFIER_INPUT_TAG), utf8(subject.provider), hexToBytes(subject.schemaId), utf8(subject.accountId)];
  try {
    return concatBytes(...parts.map(lengthPrefixed));
  } catch {
    throw new NullifierError("a provider or account id over 65535 bytes cannot be hashed to a nullifier");
  }
}

/** P = HashToGroup(encode(provider, schema, account)): private, known to the prover and the attestors only. */
export function nullifierElement(subject: NullifierSubject): Element {
  const element = hashToGroup(nullifierInput(subject));
  // RFC 9497's Blind refuses an input hashing to the identity (probability 2^-252): so do we.
  if (element.equals(IDENTITY)) throw new NullifierError("the account hashes to the identity element");
  return element;
}

/** The prover's first step: a fresh secret r, B = r·P and R = r·G, which alone say nothing of P. */
/**
 * The blind r as the prover hands it to each attestor of the claim (RFC 9497's SerializeScalar: 32 bytes,
 * little-endian, as hex). Secret: with r, B gives P, and P can be tried against guessed account ids.
 */
export function blindHex(blind: bigint): Hex {
  return bytesToHex(encodeScalar(blind));
}

/** r read back from blindHex's form, or undefined when it is not a non-zero scalar. */
export function blindOfHex(text: string): bigint | undefined {
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) return undefined;
  const blind = decodeScalar(hexToBytes(text as Hex));
  return blind === undefined || Scalars.is0(blind) ? undefined : blind;
}

/** R = r·G, as the blind's commitment is published. */
export function blindCommitmentOf(blind: bigint): Hex {
  return hexOf(GENERATOR.multiply(blind));
}

export function blindNullifier(subject: NullifierSubject, random?: RandomSource): NullifierBlinding {
  const blind = randomScalar(random);
  return { blind, blinded: hexOf(nullifierElement(subject).multiply(blind)), blindCommitment: hexOf(GENERATOR.multiply(blind)) };
}

/**
 * An attestor's step. It recomputes B = r·P and R = r·G from the account id it saw itself, and refuses
 * anything else: an attestor that evaluated any B it is handed would be an oracle for everyone's
 * nullifiers (blind a guessed account, ask t attestors), and B is what ties the claim to the account.
 */
export function evaluateNullifierShare(share: KeyShare, subject: NullifierSubject, request: NullifierBlinding, random?: RandomSource): ShareEvaluation {
  if (!Scalars.isValid(request.blind) || Scalars.is0(request.blind)) throw new NullifierError("the blind is not a non-zero scalar");
  const blinded = nullifierElement(subject).multiply(request.blind);
  if (hexOf(blinded) !== request.blinded.toLowerCase()) throw new NullifierError("the blinded element is not this account's under this blind");
  if (hexOf(GENERATOR.multiply(request.blind)) !== request.blindCommitment.toLowerCase()) {
    throw new NullifierError("the blind's commitment R is not r·G");
  }
  const evaluation = blinded.multiply(share.secret);
  const commitment = GENERATOR.multiply(share.secret);
  const proof = generateProof(share.secret, GENERATOR, commitment, [blinded], [evaluation], randomScalar(random));
  return { index: share.index, evaluation: hexOf(evaluation), proof: bytesToHex(proof) };
}

/** Σ λ_i·Z_i over the given indices: k·B when they are t or more honest evaluations. */
function combine(shares: readonly { index: number; evaluation: Element }[]): Element {
  const lambdas = lagrangeCoefficients(shares.map((s) => s.index));
  return linearCombination(
    shares.map((s) => s.evaluation),
    lambdas,
  );
}

/**
 * The prover's last step: keeps t evaluations whose proofs hold (a lying attestor's is dropped, never
 * published), combines them, unblinds N = r⁻¹·Z and proves it. Throws when fewer than t hold.
 */
export function finishNullifier(blinding: NullifierBlinding, evaluations: readonly ShareEvaluation[], keys: NullifierKeys, random?: RandomSource): PublishedNullifier {
  const blinded = elementOf(blinding.blinded);
  const blindCommitment = elementOf(blinding.blindCommitment);
  if (blinded === undefined || blindCommitment === undefined) throw new NullifierError("the blinding is not two elements");
  const good = new Map<number, { share: ShareEvaluation; evaluation: Element }>();
  for (const share of evaluations) {
    const commitment = keys.commitments.get(share.index);
    const evaluation = elementOf(share.evaluation);
    const proof = proofOf(share.proof);
    if (commitment === undefined || evaluation === undefined || proof === undefined || good.has(share.index)) continue;
    if (verifyProof(GENERATOR, commitment, [blinded], [evaluation], proof)) good.set(share.index, { share, evaluation });
  }
  if (good.size < keys.threshold) throw new NullifierError(`${good.size} attestors answered with a valid share, ${keys.threshold} are needed`);
  const chosen = [...good.entries()].sort(([a], [b]) => a - b).slice(0, keys.threshold).map(([index, v]) => ({ index, ...v }));
  const combined = combine(chosen);
  const nullifier = combined.multiply(Scalars.inv(blinding.blind));
  const unblindingProof = generateProof(blinding.blind, GENERATOR, blindCommitment, [nullifier], [combined], randomScalar(random));
  return {
    nullifier: hexOf(nullifier),
    blinded: blinding.blinded.toLowerCase() as Hex,
    blindCommitment: blinding.blindCommitment.toLowerCase() as Hex,
    unblindingProof: bytesToHex(unblindingProof),
    shares: chosen.map((c) => c.share),
  };
}

const refuse = (reason: NullifierRefusalReason, message: string, index?: number): NullifierVerdict =>
  index === undefined ? { ok: false, reason, message } : { ok: false, reason, message, index };

/**
 * The dapp's judgement of a claim's nullifier against the registered key set: deterministic, no
 * randomness, no P. Checks, in order: every encoding (elements canonical and never the identity, proofs
 * 64 bytes), one share per index, every index registered, at least t shares, every share's DLEQ against
 * its commitment, then that N unblinds Σ λ_i·Z_i under the same r as R = r·G. B and R themselves are
 * vouched for by the attestors' signatures over them (docs/nullifiers.md), not here.
 */
export function verifyNullifier(published: PublishedNullifier, keys: NullifierKeys): NullifierVerdict {
  const nullifier = elementOf(published.nullifier);
  const blinded = elementOf(published.blinded);
  const blindCommitment = elementOf(published.blindCommitment);
  const unblindingProof = proofOf(published.unblindingProof);
  if (nullifier === undefined) return refuse("malformed", "the nullifier is not the encoding of an element other than the identity");
  if (blinded === undefined) return refuse("malformed", "the blinded element B is not the encoding of an element other than the identity");
  if (blindCommitment === undefined) return refuse("malformed", "the blind's commitment R is not the encoding of an element other than the identity");
  if (unblindingProof === undefined) return refuse("malformed", "the unblinding proof is not 64 bytes of hex");
  if (published.shares.length > MAX_PUBLISHED_SHARES) return refuse("malformed", `more than ${MAX_PUBLISHED_SHARES} shares`);

  const shares: { index: number; evaluation: Element; proof: Uint8Array }[] = [];
  for (const share of published.shares) {
    if (!Number.isInteger(share.index) || share.index < 1 || share.index > MAX_SHARE_INDEX) {
      return refuse("malformed", `a share's index is an integer from 1 to ${MAX_SHARE_INDEX}`);
    }
    const evaluation = elementOf(share.evaluation);
    const proof = proofOf(share.proof);
    if (evaluation === undefined) return refuse("malformed", `share ${share.index}'s evaluation is not the encoding of an element other than the identity`, share.index);
    if (proof === undefined) return refuse("malformed", `share ${share.index}'s proof is not 64 bytes of hex`, share.index);
    shares.push({ index: share.index, evaluation, proof });
  }
  const seen = new Set<number>();
  for (const { index } of shares) {
    if (seen.has(index)) return refuse("duplicate_share", `share ${index} is given twice`, index);
    seen.add(index);
  }
  for (const { index } of shares) {
    if (!keys.commitments.has(index)) return refuse("unregistered_share", `no commitment is registered for share ${index}`, index);
  }
  if (shares.length < keys.threshold) return refuse("too_few_shares", `${shares.length} shares, ${keys.threshold} are needed`);
  for (const { index, evaluation, proof } of shares) {
    const commitment = keys.commitments.get(index) as Element;
    if (!verifyProof(GENERATOR, commitment, [blinded], [evaluation], proof)) {
      return refuse("wrong_share_proof", `share ${index}'s proof does not show its registered key on this blinded element`, index);
    }
  }
  const combined = combine(shares);
  if (!verifyProof(GENERATOR, blindCommitment, [nullifier], [combined], unblindingProof)) {
    return refuse("wrong_unblinding", "the nullifier is not the combined evaluation unblinded by the blind committed in R");
  }
  return { ok: true, nullifier: hexOf(nullifier) };
}

/**
 * The dapp's judgement of a key set at registration: well formed, and consistent. Consistency matters for
 * uniqueness: commitments off one polynomial would let a prover pick the t attestors whose shares give
 * a second nullifier for the same account. The first t commitments (by index) fix the polynomial in the
 * exponent; K and every other commitment must be its value at 0 and at their index.
 */
export function checkKeySet(json: unknown): KeySetVerdict {
  const parsed = keySetSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: "malformed", message: `the key set is not well formed: ${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}` };
  }
  const { threshold, commitments } = parsed.data;
  const groupKey = elementOf(parsed.data.groupKey);
  if (groupKey === undefined) return { ok: false, reason: "malformed", message: "the group key is not the encoding of an element other than the identity" };
  const byIndex = new Map<number, Element>();
  for (const { index, commitment } of commitments) {
    const element = elementOf(commitment);
    if (element === undefined) return { ok: false, reason: "malformed", message: `commitment ${index} is not the encoding of an element other than the identity` };
    if (byIndex.has(index)) return { ok: false, reason: "malformed", message: `commitment ${index} is given twice` };
    byIndex.set(index, element);
  }
  if (threshold > byIndex.size) return { ok: false, reason: "malformed", message: `a threshold of ${threshold} needs at least ${threshold} commitments` };
  const basis = [...byIndex.keys()].sort((a, b) => a - b).slice(0, threshold);
  const basisElements = basis.map((i) => byIndex.get(i) as Element);
  const valueAt = (x: number): Element => linearCombination(basisElements, lagrangeCoefficients(basis, BigInt(x)));
  if (!valueAt(0).equals(groupKey)) return { ok: false, reason: "inconsistent_commitments", message: "the commitments do not interpolate to the group key" };
  for (const [index, element] of byIndex) {
    if (!basis.includes(index) && !valueAt(index).equals(element)) {
      return { ok: false, reason: "inconsistent_commitments", message: `commitment ${index} is not on the polynomial the others lie on` };
    }
  }
  return { ok: true, keys: { threshold, groupKey, commitments: byIndex } };
}

/** The JSON form of checked keys: what the dealer writes as commitments.json, and a share file quotes. */
export function keySetJson(keys: NullifierKeys): NullifierKeySetJson {
  return {
    version: 1,
    suite: SUITE_ID,
    threshold: keys.threshold,
    groupKey: hexOf(keys.groupKey),
    commitments: [...keys.commitments.entries()].sort(([a], [b]) => a - b).map(([index, element]) => ({ index, commitment: hexOf(element) })),
  };
}
