/**
 * The nullifier key's dealer (docs/nullifiers.md, "The dealer"): deals a key k in Shamir shares, t of n,
 * with each share's commitment K_i = k_i·G, and re-shares it to a new set of attestors (one added or
 * removed) keeping k, so every nullifier stays what it was.
 *
 * Dealing is done by one trusted party, which knows k while it runs (a distributed key generation would
 * remove it). Re-sharing needs no one to learn k: each of t old holders deals a sub-sharing of its own
 * share with Feldman commitments (redistributeShare), and each new holder checks what it is sent against
 * the registered commitments and combines it (acceptRedistribution). `reshare` runs both sides in one
 * process, as `npm run nullifier-keys -- reshare` does for an operator who holds t old shares anyway.
 */
import type { Hex } from "viem";
import { z } from "zod";
import { bytesToHex, hexToBytes, isHex } from "./hex.ts";
import {
  checkKeySet,
  keySetJson,
  MAX_PUBLISHED_SHARES,
  MAX_SHARE_INDEX,
  NullifierError,
  type KeyShare,
  type NullifierKeys,
  type NullifierKeySetJson,
} from "./nullifier.ts";
import {
  decodeElement,
  decodeScalar,
  encodeElement,
  encodeScalar,
  GENERATOR,
  lagrangeCoefficients,
  linearCombination,
  randomScalar,
  Scalars,
  SUITE_ID,
  type Element,
  type RandomSource,
} from "./oprf-ristretto255.ts";

export interface DealtKey {
  /** One per attestor, each to be handed to its attestor alone. */
  shares: KeyShare[];
  /** The public side, to register in the rollup. */
  keySet: NullifierKeySetJson;
  keys: NullifierKeys;
}

/** One old holder's sub-sharing of its share: the commitments are public, each sub-share goes to one new holder only. */
export interface SubDealing {
  from: number;
  threshold: number;
  /** a_m·G for the sub-polynomial's coefficients; a_0 is the old share, so the first must equal K_from. */
  coefficientCommitments: Hex[];
  subShares: KeyShare[];
}

/** What one new holder receives from one old holder. */
export interface ReceivedSubShare {
  from: number;
  threshold: number;
  coefficientCommitments: readonly Hex[];
  subShare: bigint;
}

const hexOf = (element: Element): Hex => bytesToHex(encodeElement(element));

/** Attestor indices as the protocol takes them: distinct integers 1..65535, at least t of them. */
export function checkShareIndices(indices: readonly number[], threshold: number): void {
  if (!Number.isInteger(threshold) || threshold < 1) throw new NullifierError(`the threshold is a positive integer, not ${threshold}`);
  if (indices.length > MAX_PUBLISHED_SHARES) throw new NullifierError(`at most ${MAX_PUBLISHED_SHARES} attestors`);
  for (const index of indices) {
    if (!Number.isInteger(index) || index < 1 || index > MAX_SHARE_INDEX) throw new NullifierError(`an attestor index is an integer from 1 to ${MAX_SHARE_INDEX}, not ${index}`);
  }
  if (new Set(indices).size !== indices.length) throw new NullifierError("attestor indices must be distinct");
  if (threshold > indices.length) throw new NullifierError(`a threshold of ${threshold} needs at least ${threshold} attestors, not ${indices.length}`);
}

/** A random polynomial of degree t − 1 with the given constant term. */
function polynomialThrough(constant: bigint, threshold: number, random?: RandomSource): bigint[] {
  return [constant, ...Array.from({ length: threshold - 1 }, () => randomScalar(random))];
}

/** f(x) by Horner's rule, modulo the group's order. */
function evaluatePolynomial(coefficients: readonly bigint[], x: number): bigint {
  const at = Scalars.create(BigInt(x));
  return coefficients.reduceRight((acc, coefficient) => Scalars.add(Scalars.mul(acc, at), coefficient), Scalars.ZERO);
}

/** The public side of a set of shares: K_i = k_i·G and K = k·G, checked as the dapp would check them. */
function keysOf(shares: readonly KeyShare[], threshold: number, groupKey: Element): { keySet: NullifierKeySetJson; keys: NullifierKeys } {
  const keySet: NullifierKeySetJson = {
    version: 1,
    suite: SUITE_ID,
    threshold,
    groupKey: hexOf(groupKey),
    commitments: shares.map((s) => ({ index: s.index, commitment: hexOf(GENERATOR.multiply(s.secret)) })),
  };
  const verdict = checkKeySet(keySet);
  if (!verdict.ok) throw new NullifierError(`the dealt key set does not check: ${verdict.message}`);
  return { keySet, keys: verdict.keys };
}

/**
 * Deals a fresh key (or `secret`, when a test or an import names it) in shares for `indices`, any
 * `threshold` of which recombine it. Nothing of k survives the call but in the shares.
 */
export function dealKey(options: { threshold: number; indices: readonly number[]; secret?: bigint; random?: RandomSource }): DealtKey {
  const { threshold, indices, random } = options;
  checkShareIndices(indices, threshold);
  const secret = options.secret ?? randomScalar(random);
  if (!Scalars.isValid(secret) || Scalars.is0(secret)) throw new NullifierError("the key is a non-zero scalar");
  const coefficients = polynomialThrough(secret, threshold, random);
  const shares = [...indices].sort((a, b) => a - b).map((index) => ({ index, secret: evaluatePolynomial(coefficients, index) }));
  return { shares, ...keysOf(shares, threshold, GENERATOR.multiply(secret)) };
}

/** Σ λ_i·k_i over the shares given: k when they are t or more of one dealing, another value when fewer. */
export function interpolateSecret(shares: readonly KeyShare[]): bigint {
  const lambdas = lagrangeCoefficients(shares.map((s) => s.index));
  return shares.reduce((acc, share, i) => Scalars.add(acc, Scalars.mul(lambdas[i] as bigint, share.secret)), Scalars.ZERO);
}

/** An old holder's part of a re-sharing: a fresh polynomial of the new degree through its own share. */
export function redistributeShare(share: KeyShare, newIndices: readonly number[], newThreshold: number, random?: RandomSource): SubDealing {
  checkShareIndices(newIndices, newThreshold);
  const coefficients = polynomialThrough(share.secret, newThreshold, random);
  return {
    from: share.index,
    threshold: newThreshold,
    coefficientCommitments: coefficients.map((c) => hexOf(GENERATOR.multiply(c))),
    subShares: newIndices.map((index) => ({ index, secret: evaluatePolynomial(coefficients, index) })),
  };
}

/**
 * A new holder's part: checks each sub-share against its dealer's commitments (Feldman: g(j)·G must be
 * Σ j^m·C_m, and C_0 the dealer's registered K_i, so an old holder cannot slip in another share), then
 * combines them with the Lagrange coefficients of the dealers' indices. Every new holder must be given the
 * same set of dealers, or the new shares lie on different polynomials (checkKeySet would refuse them).
 */
export function acceptRedistribution(newIndex: number, received: readonly ReceivedSubShare[], oldKeys: NullifierKeys): KeyShare {
  const dealers = received.map((r) => r.from);
  checkShareIndices(dealers, oldKeys.threshold);
  const newThreshold = received[0]?.threshold ?? 0;
  if (!Number.isInteger(newThreshold) || newThreshold < 1) throw new NullifierError(`the new threshold is a positive integer, not ${newThreshold}`);
  for (const r of received) {
    if (r.threshold !== newThreshold) throw new NullifierError("the old holders dealt for different thresholds");
    const registered = oldKeys.commitments.get(r.from);
    if (registered === undefined) throw new NullifierError(`old holder ${r.from} has no registered commitment`);
    if (r.coefficientCommitments.length !== newThreshold) throw new NullifierError(`old holder ${r.from} committed to ${r.coefficientCommitments.length} coefficients, not ${newThreshold}`);
    const commitments = r.coefficientCommitments.map((c) => (isHex(c) ? decodeElement(hexToBytes(c)) : undefined));
    if (commitments.some((c) => c === undefined)) throw new NullifierError(`old holder ${r.from}'s commitments are not elements`);
    const points = commitments as Element[];
    if (!(points[0] as Element).equals(registered)) throw new NullifierError(`old holder ${r.from} re-shared something other than its registered share`);
    const powers = points.map((_, m) => Scalars.pow(Scalars.create(BigInt(newIndex)), BigInt(m)));
    if (!Scalars.isValid(r.subShare) || !GENERATOR.multiplyUnsafe(r.subShare).equals(linearCombination(points, powers))) {
      throw new NullifierError(`old holder ${r.from}'s sub-share for ${newIndex} does not match its commitments`);
    }
  }
  const lambdas = lagrangeCoefficients(dealers);
  const secret = received.reduce((acc, r, i) => Scalars.add(acc, Scalars.mul(lambdas[i] as bigint, r.subShare)), Scalars.ZERO);
  return { index: newIndex, secret };
}

/**
 * A re-sharing in one process: t of the old shares (each checked against its registered commitment) are
 * redistributed to `newIndices` under `newThreshold`. The group key, hence every nullifier, is unchanged;
 * the old shares become useless together with the new ones, and must be erased by their holders.
 */
export function reshare(options: { shares: readonly KeyShare[]; oldKeys: NullifierKeys; newIndices: readonly number[]; newThreshold: number; random?: RandomSource }): DealtKey {
  const { oldKeys, newIndices, newThreshold, random } = options;
  checkShareIndices(newIndices, newThreshold);
  for (const share of options.shares) {
    const registered = oldKeys.commitments.get(share.index);
    if (registered === undefined) throw new NullifierError(`share ${share.index} is not in the registered key set`);
    if (!GENERATOR.multiply(share.secret).equals(registered)) throw new NullifierError(`share ${share.index} does not match its registered commitment`);
  }
  checkShareIndices(options.shares.map((s) => s.index), oldKeys.threshold);
  const dealers = [...options.shares].sort((a, b) => a.index - b.index).slice(0, oldKeys.threshold);
  const dealings = dealers.map((share) => redistributeShare(share, newIndices, newThreshold, random));
  const shares = [...newIndices]
    .sort((a, b) => a - b)
    .map((index) =>
      acceptRedistribution(
        index,
        dealings.map((d) => ({ ...d, subShare: (d.subShares.find((s) => s.index === index) as KeyShare).secret })),
        oldKeys,
      ),
    );
  return { shares, ...keysOf(shares, newThreshold, oldKeys.groupKey) };
}

/** An attestor's share file: its share, and the public values it checks it against. */
export interface ShareFileJson {
  version: 1;
  suite: typeof SUITE_ID;
  index: number;
  threshold: number;
  /** k_i, 32 bytes little-endian (RFC 9497's SerializeScalar). Secret. */
  secret: Hex;
  commitment: Hex;
  groupKey: Hex;
}

export const shareFileSchema = z.object({
  version: z.literal(1),
  suite: z.literal(SUITE_ID),
  index: z.number().int().min(1).max(MAX_SHARE_INDEX),
  threshold: z.number().int().min(1).max(MAX_PUBLISHED_SHARES),
  secret: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x and 64 hex digits (a scalar)"),
  commitment: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x and 64 hex digits (an element)"),
  groupKey: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x and 64 hex digits (an element)"),
});

export function shareFileOf(share: KeyShare, keys: NullifierKeys): ShareFileJson {
  const json = keySetJson(keys);
  const commitment = json.commitments.find((c) => c.index === share.index);
  if (commitment === undefined) throw new NullifierError(`share ${share.index} is not in the key set`);
  return { version: 1, suite: SUITE_ID, index: share.index, threshold: keys.threshold, secret: bytesToHex(encodeScalar(share.secret)), commitment: commitment.commitment, groupKey: json.groupKey };
}

/** A share read back from its file, refused unless k_i·G is the commitment the file names. */
export function shareFromFile(value: unknown): KeyShare {
  const parsed = shareFileSchema.safeParse(value);
  if (!parsed.success) throw new NullifierError(`not a share file: ${parsed.error.issues[0]?.path.join(".") || "value"}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const secret = decodeScalar(hexToBytes(parsed.data.secret));
  if (secret === undefined || Scalars.is0(secret)) throw new NullifierError(`share ${parsed.data.index}'s secret is not a non-zero scalar`);
  if (hexOf(GENERATOR.multiply(secret)) !== parsed.data.commitment.toLowerCase()) throw new NullifierError(`share ${parsed.data.index}'s secret does not match its commitment`);
  return { index: parsed.data.index, secret };
}
