/**
 * RFC 9497's ristretto255-SHA512 suite in its verifiable mode (VOPRF, 0x01), the pieces the nullifiers
 * (common/nullifier.ts, docs/nullifiers.md) are built from: HashToGroup, HashToScalar, the element and
 * scalar encodings, DeriveKeyPair, and the DLEQ proof of section 2.2. Every group and field operation is
 * @noble/curves' own (RistrettoPoint, its hash-to-group, a prime field of the group's order); this file
 * only lays out the RFC's transcripts, so RFC 9497's published vectors pin it (common/nullifier.test.ts).
 *
 * Whatever verifies here is deterministic (the dapp runs it); only the proving side draws randomness, and
 * it takes the source as a parameter so a test can replay the RFC's.
 */
import { expand_message_xmd } from "@noble/curves/abstract/hash-to-curve";
import { Field } from "@noble/curves/abstract/modular";
import { bytesToNumberLE, concatBytes } from "@noble/curves/abstract/utils";
import { ed25519, hashToRistretto255, RistrettoPoint } from "@noble/curves/ed25519";
import { sha512 } from "@noble/hashes/sha2";
import { randomBytes } from "@noble/hashes/utils";

/** An element of ristretto255, as @noble/curves holds it. */
export type Element = InstanceType<typeof RistrettoPoint>;

/** Where a prover's secret scalars come from: `n` uniformly random bytes. Tests pass a fixed one. */
export type RandomSource = (n: number) => Uint8Array;

export const SUITE_ID = "ristretto255-SHA512";
export const MODE_VOPRF = 0x01;

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

/** RFC 9497 section 3.1, CreateContextString(modeVOPRF, "ristretto255-SHA512"). */
export const CONTEXT_STRING = concatBytes(ascii("OPRFV1-"), Uint8Array.of(MODE_VOPRF), ascii(`-${SUITE_ID}`));
export const HASH_TO_GROUP_DST = concatBytes(ascii("HashToGroup-"), CONTEXT_STRING);
export const HASH_TO_SCALAR_DST = concatBytes(ascii("HashToScalar-"), CONTEXT_STRING);
/** No hyphen after "DeriveKeyPair": the RFC spells it so (section 3.2.1). */
const DERIVE_KEY_PAIR_DST = concatBytes(ascii("DeriveKeyPair"), CONTEXT_STRING);
const SEED_DST = concatBytes(ascii("Seed-"), CONTEXT_STRING);

/** The scalar field: integers modulo the group's order, 32 bytes little-endian as the suite serializes them. */
export const Scalars = Field(ed25519.CURVE.n, undefined, true);
export const GENERATOR: Element = RistrettoPoint.BASE;
export const IDENTITY: Element = RistrettoPoint.ZERO;
export const ELEMENT_BYTES = 32;
export const SCALAR_BYTES = 32;
export const PROOF_BYTES = 2 * SCALAR_BYTES;

/** I2OSP(length, 2) || bytes: every variable-length string in the RFC's transcripts is framed so. */
export function lengthPrefixed(bytes: Uint8Array): Uint8Array {
  if (bytes.length > 0xffff) throw new RangeError(`a framed string holds at most 65535 bytes, not ${bytes.length}`);
  return concatBytes(Uint8Array.of(bytes.length >> 8, bytes.length & 0xff), bytes);
}

/** HashToGroup: hash_to_ristretto255 (RFC 9380) under the suite's DST. */
export function hashToGroup(message: Uint8Array): Element {
  return hashToRistretto255(message, { DST: HASH_TO_GROUP_DST });
}

/** HashToScalar: 64 bytes of expand_message_xmd(SHA-512), read little-endian, reduced modulo the order. */
export function hashToScalar(message: Uint8Array, dst: Uint8Array = HASH_TO_SCALAR_DST): bigint {
  return Scalars.create(bytesToNumberLE(expand_message_xmd(message, dst, 64, sha512)));
}

/** A uniformly random non-zero scalar: 64 random bytes reduced, so the bias is below 2^-250. */
export function randomScalar(random: RandomSource = randomBytes): bigint {
  for (;;) {
    const scalar = Scalars.create(bytesToNumberLE(random(64)));
    if (!Scalars.is0(scalar)) return scalar;
  }
}

export function encodeElement(element: Element): Uint8Array {
  return element.toRawBytes();
}

/**
 * DeserializeElement: the canonical encoding of an element other than the identity, else undefined. The
 * identity is refused as the RFC requires: multiplied by anything it stays itself, so a proof "about" it
 * says nothing (a blind of zero would let a prover name any nullifier).
 */
export function decodeElement(bytes: Uint8Array): Element | undefined {
  if (bytes.length !== ELEMENT_BYTES) return undefined;
  let element: Element;
  try {
    element = RistrettoPoint.fromHex(bytes);
  } catch {
    return undefined;
  }
  return element.equals(IDENTITY) ? undefined : element;
}

export function encodeScalar(scalar: bigint): Uint8Array {
  return Scalars.toBytes(scalar);
}

/** DeserializeScalar: 32 bytes little-endian below the order (so the top three bits are zero), else undefined. */
export function decodeScalar(bytes: Uint8Array): bigint | undefined {
  if (bytes.length !== SCALAR_BYTES) return undefined;
  const scalar = Scalars.fromBytes(bytes);
  return Scalars.isValid(scalar) ? scalar : undefined;
}

/** DeriveKeyPair (section 3.2.1): a key from a secret seed and a public info string. */
export function deriveKeyPair(seed: Uint8Array, info: Uint8Array): { secretKey: bigint; publicKey: Element } {
  const deriveInput = concatBytes(seed, lengthPrefixed(info));
  for (let counter = 0; counter <= 255; counter++) {
    const secretKey = hashToScalar(concatBytes(deriveInput, Uint8Array.of(counter)), DERIVE_KEY_PAIR_DST);
    if (!Scalars.is0(secretKey)) return { secretKey, publicKey: GENERATOR.multiply(secretKey) };
  }
  throw new Error("DeriveKeyPairError: no non-zero key in 256 tries");
}

/**
 * Multiplies a public element by a public scalar. @noble/curves' constant-time `multiply` refuses zero,
 * and the RFC's composites and responses may be zero (with negligible probability, but a verifier must
 * still answer rather than throw), so public values go through `multiplyUnsafe`, which takes any scalar.
 */
function timesPublic(element: Element, scalar: bigint): Element {
  return element.multiplyUnsafe(scalar);
}

/** ComputeComposites (section 2.2.2): one pair (M, Z) standing for every pair (C[i], D[i]). */
function composites(b: Element, c: readonly Element[], d: readonly Element[]): { m: Element; z: Element } {
  const seed = sha512(concatBytes(lengthPrefixed(encodeElement(b)), lengthPrefixed(SEED_DST)));
  let m = IDENTITY;
  let z = IDENTITY;
  c.forEach((ci, i) => {
    const di = d[i] as Element;
    const transcript = concatBytes(
      lengthPrefixed(seed),
      Uint8Array.of(i >> 8, i & 0xff),
      lengthPrefixed(encodeElement(ci)),
      lengthPrefixed(encodeElement(di)),
      ascii("Composite"),
    );
    const weight = hashToScalar(transcript);
    m = timesPublic(ci, weight).add(m);
    z = timesPublic(di, weight).add(z);
  });
  return { m, z };
}

/** The Fiat-Shamir challenge of GenerateProof and VerifyProof. */
function challenge(b: Element, m: Element, z: Element, t2: Element, t3: Element): bigint {
  const transcript = concatBytes(...[b, m, z, t2, t3].map((e) => lengthPrefixed(encodeElement(e))), ascii("Challenge"));
  return hashToScalar(transcript);
}

function checkPairs(c: readonly Element[], d: readonly Element[]): void {
  if (c.length === 0 || c.length !== d.length) throw new RangeError("a DLEQ proof covers one or more pairs (C[i], D[i])");
}

/**
 * GenerateProof (section 2.2.1): proves k·A = B and k·C[i] = D[i] for every i, without k. `nonce` is the
 * proof's random scalar (r in the RFC); it must be fresh and secret, as a reused one gives k away.
 * Answers c || s, 64 bytes.
 */
export function generateProof(k: bigint, a: Element, b: Element, c: readonly Element[], d: readonly Element[], nonce: bigint): Uint8Array {
  checkPairs(c, d);
  // The RFC's ComputeCompositesFast: Z = k·M saves the second sum on the side that knows k.
  const { m } = composites(b, c, d);
  const z = m.equals(IDENTITY) ? IDENTITY : m.multiply(k);
  const t2 = a.multiply(nonce);
  const t3 = m.equals(IDENTITY) ? IDENTITY : m.multiply(nonce);
  const cScalar = challenge(b, m, z, t2, t3);
  const s = Scalars.sub(nonce, Scalars.mul(cScalar, k));
  return concatBytes(encodeScalar(cScalar), encodeScalar(s));
}

/** VerifyProof (section 2.2.2): whether `proof` shows the same k with k·A = B and k·C[i] = D[i]. */
export function verifyProof(a: Element, b: Element, c: readonly Element[], d: readonly Element[], proof: Uint8Array): boolean {
  checkPairs(c, d);
  if (proof.length !== PROOF_BYTES) return false;
  const cScalar = decodeScalar(proof.subarray(0, SCALAR_BYTES));
  const s = decodeScalar(proof.subarray(SCALAR_BYTES));
  if (cScalar === undefined || s === undefined) return false;
  const { m, z } = composites(b, c, d);
  const t2 = timesPublic(a, s).add(timesPublic(b, cScalar));
  const t3 = timesPublic(m, s).add(timesPublic(z, cScalar));
  return Scalars.eql(challenge(b, m, z, t2, t3), cScalar);
}

/**
 * The Lagrange coefficients that carry the values of a polynomial at `indices` to its value at `at`:
 * λ_i = Π_{j≠i} (at − x_j) / (x_i − x_j), modulo the group's order. At 0 they recombine Shamir shares.
 */
export function lagrangeCoefficients(indices: readonly number[], at = 0n): bigint[] {
  const xs = indices.map((i) => Scalars.create(BigInt(i)));
  if (new Set(xs).size !== xs.length) throw new RangeError("Lagrange coefficients need distinct indices");
  return xs.map((xi, i) => {
    let numerator = Scalars.ONE;
    let denominator = Scalars.ONE;
    xs.forEach((xj, j) => {
      if (j === i) return;
      numerator = Scalars.mul(numerator, Scalars.sub(at, xj));
      denominator = Scalars.mul(denominator, Scalars.sub(xi, xj));
    });
    return Scalars.div(numerator, denominator);
  });
}

/** Σ scalars[i]·elements[i], by @noble/curves' multi-scalar multiplication. */
export function linearCombination(elements: readonly Element[], scalars: readonly bigint[]): Element {
  return RistrettoPoint.msm([...elements], [...scalars]);
}
