/**
 * The suite (common/oprf-ristretto255.ts) against RFC 9497's own test vectors, Appendix A.1.2
 * (ristretto255-SHA512, VOPRF mode): DeriveKeyPair, HashToGroup through Blind, BlindEvaluate, the DLEQ
 * proof byte for byte (so HashToScalar, the composites and the challenge transcript), and Finalize's
 * output. Then what a verifier must refuse.
 */
import { concatBytes } from "@noble/curves/abstract/utils";
import { sha512 } from "@noble/hashes/sha2";
import { describe, expect, it } from "vitest";
import {
  CONTEXT_STRING,
  decodeElement,
  decodeScalar,
  deriveKeyPair,
  encodeElement,
  generateProof,
  GENERATOR,
  HASH_TO_GROUP_DST,
  HASH_TO_SCALAR_DST,
  hashToGroup,
  lagrangeCoefficients,
  lengthPrefixed,
  Scalars,
  verifyProof,
  type Element,
} from "./oprf-ristretto255.ts";

const bytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, "hex"));
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const scalar = (h: string): bigint => decodeScalar(bytes(h)) as bigint;

/** RFC 9497 A.1.2: the VOPRF mode's key, from Seed and KeyInfo. */
const KEY = {
  seed: "a3".repeat(32),
  keyInfo: "74657374206b6579",
  skSm: "e6f73f344b79b379f1a0dd37e07ff62e38d9f71345ce62ae3a9bc60b04ccd909",
  pkSm: "c803e2cc6b05fc15064549b5920659ca4a77b2cca6f04f6b357009335476ad4e",
};
const BLIND_1 = "64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706";
const NONCE_1 = "222a5e897cf59db8145db8d16e597e8facb80ae7d4e26d9881aa6f61d645fc0e";
const OUT_00 = "b58cfbe118e0cb94d79b5fd6a6dafb98764dff49c14e1770b566e42402da1a7da4d8527693914139caee5bd03903af43a491351d23b430948dd50cde10d32b3c";
const OUT_5A = "8a9a2f3c7f085b65933594309041fc1898d42d0858e59f90814ae90571a6df60356f4610bf816f27afdd84f47719e480906d27ecd994985890e5f539e7ea74b6";

/** A.1.2's three VOPRF vectors: two of batch size 1, one of batch size 2 (one proof for both pairs). */
const VECTORS = [
  {
    name: "Test Vector 1, Batch Size 1",
    inputs: ["00"],
    blinds: [BLIND_1],
    blinded: ["863f330cc1a1259ed5a5998a23acfd37fb4351a793a5b3c090b642ddc439b945"],
    evaluated: ["aa8fa048764d5623868679402ff6108d2521884fa138cd7f9c7669a9a014267e"],
    proof: "ddef93772692e535d1a53903db24367355cc2cc78de93b3be5a8ffcc6985dd066d4346421d17bf5117a2a1ff0fcb2a759f58a539dfbe857a40bce4cf49ec600d",
    nonce: NONCE_1,
    outputs: [OUT_00],
  },
  {
    name: "Test Vector 2, Batch Size 1",
    inputs: ["5a".repeat(17)],
    blinds: [BLIND_1],
    blinded: ["cc0b2a350101881d8a4cba4c80241d74fb7dcbfde4a61fde2f91443c2bf9ef0c"],
    evaluated: ["60a59a57208d48aca71e9e850d22674b611f752bed48b36f7a91b372bd7ad468"],
    proof: "401a0da6264f8cf45bb2f5264bc31e109155600babb3cd4e5af7d181a2c9dc0a67154fabf031fd936051dec80b0b6ae29c9503493dde7393b722eafdf5a50b02",
    nonce: NONCE_1,
    outputs: [OUT_5A],
  },
  {
    name: "Test Vector 3, Batch Size 2",
    inputs: ["00", "5a".repeat(17)],
    blinds: [BLIND_1, NONCE_1],
    blinded: ["863f330cc1a1259ed5a5998a23acfd37fb4351a793a5b3c090b642ddc439b945", "90a0145ea9da29254c3a56be4fe185465ebb3bf2a1801f7124bbbadac751e654"],
    evaluated: ["aa8fa048764d5623868679402ff6108d2521884fa138cd7f9c7669a9a014267e", "cc5ac221950a49ceaa73c8db41b82c20372a4c8d63e5dded2db920b7eee36a2a"],
    proof: "cc203910175d786927eeb44ea847328047892ddf8590e723c37205cb74600b0a5ab5337c8eb4ceae0494c2cf89529dcf94572ed267473d567aeed6ab873dee08",
    nonce: "419c4f4f5052c53c45f3da494d2b67b220d02118e0857cdbcf037f9ea84bbe0c",
    outputs: [OUT_00, OUT_5A],
  },
];

describe("RFC 9497 ristretto255-SHA512, VOPRF mode", () => {
  it("names the suite's context string and DSTs as section 3.1 and 4.1 build them", () => {
    expect(Buffer.from(CONTEXT_STRING).toString("latin1")).toBe("OPRFV1-\x01-ristretto255-SHA512");
    expect(Buffer.from(HASH_TO_GROUP_DST).toString("latin1")).toBe("HashToGroup-OPRFV1-\x01-ristretto255-SHA512");
    expect(Buffer.from(HASH_TO_SCALAR_DST).toString("latin1")).toBe("HashToScalar-OPRFV1-\x01-ristretto255-SHA512");
  });

  it("derives A.1.2's key pair from its seed and info (DeriveKeyPair, HashToScalar under its own DST)", () => {
    const { secretKey, publicKey } = deriveKeyPair(bytes(KEY.seed), bytes(KEY.keyInfo));
    expect(hex(Scalars.toBytes(secretKey))).toBe(KEY.skSm);
    expect(hex(encodeElement(publicKey))).toBe(KEY.pkSm);
  });

  it.each(VECTORS)("$name: blinded, evaluated, proven and finalized as published", (v) => {
    const sk = scalar(KEY.skSm);
    const pk = decodeElement(bytes(KEY.pkSm)) as Element;
    const blinded = v.inputs.map((input, i) => hashToGroup(bytes(input)).multiply(scalar(v.blinds[i] as string)));
    expect(blinded.map((b) => hex(encodeElement(b)))).toEqual(v.blinded);
    const evaluated = blinded.map((b) => b.multiply(sk));
    expect(evaluated.map((e) => hex(encodeElement(e)))).toEqual(v.evaluated);

    const proof = generateProof(sk, GENERATOR, pk, blinded, evaluated, scalar(v.nonce));
    expect(hex(proof)).toBe(v.proof);
    expect(verifyProof(GENERATOR, pk, blinded, evaluated, proof)).toBe(true);

    // Finalize: Hash(len || input || len || unblinded || "Finalize"), the unblinded element being blind⁻¹·evaluated.
    const outputs = v.inputs.map((input, i) => {
      const unblinded = (evaluated[i] as Element).multiply(Scalars.inv(scalar(v.blinds[i] as string)));
      return hex(sha512(concatBytes(lengthPrefixed(bytes(input)), lengthPrefixed(encodeElement(unblinded)), new TextEncoder().encode("Finalize"))));
    });
    expect(outputs).toEqual(v.outputs);
  });

  it("refuses the vector's proof for any other statement, and any altered proof", () => {
    const v = VECTORS[0] as (typeof VECTORS)[number];
    const pk = decodeElement(bytes(KEY.pkSm)) as Element;
    const blinded = [decodeElement(bytes(v.blinded[0] as string)) as Element];
    const evaluated = [decodeElement(bytes(v.evaluated[0] as string)) as Element];
    const proof = bytes(v.proof);
    const other = [decodeElement(bytes((VECTORS[1] as (typeof VECTORS)[number]).evaluated[0] as string)) as Element];
    expect(verifyProof(GENERATOR, pk, blinded, other, proof)).toBe(false);
    expect(verifyProof(GENERATOR, GENERATOR, blinded, evaluated, proof)).toBe(false);
    for (const position of [0, 31, 32, 63]) {
      const altered = proof.slice();
      altered[position] = (altered[position] as number) ^ 1;
      expect(verifyProof(GENERATOR, pk, blinded, evaluated, altered)).toBe(false);
    }
    expect(verifyProof(GENERATOR, pk, blinded, evaluated, proof.subarray(0, 63))).toBe(false);
    // A scalar at or above the group's order is no scalar (DeserializeScalar): s + order is refused, not reduced.
    const s = Scalars.fromBytes(proof.subarray(32));
    const unreduced = concatBytes(proof.subarray(0, 32), Scalars.toBytes(s + Scalars.ORDER));
    expect(verifyProof(GENERATOR, pk, blinded, evaluated, unreduced)).toBe(false);
  });
});

describe("elements and scalars on the wire", () => {
  it("refuses the identity, a non-canonical encoding and a wrong length", () => {
    expect(decodeElement(new Uint8Array(32))).toBeUndefined();
    expect(decodeElement(new Uint8Array(32).fill(0xff))).toBeUndefined();
    expect(decodeElement(bytes(KEY.pkSm).subarray(0, 31))).toBeUndefined();
    expect(decodeElement(bytes(KEY.pkSm))).toBeDefined();
    expect(decodeScalar(Scalars.toBytes(Scalars.ORDER - 1n))).toBe(Scalars.ORDER - 1n);
    expect(decodeScalar(new Uint8Array(32).fill(0xff))).toBeUndefined();
  });

  it("Lagrange coefficients at 0 recombine a line's values, and refuse a repeated index", () => {
    // f(x) = 5 + 7x: f(1) = 12, f(3) = 26; λ_1 = 3/2, λ_3 = -1/2.
    const [l1, l3] = lagrangeCoefficients([1, 3]) as [bigint, bigint];
    expect(Scalars.add(Scalars.mul(l1, 12n), Scalars.mul(l3, 26n))).toBe(5n);
    expect(lagrangeCoefficients([1, 3], 2n).reduce((acc, l, i) => Scalars.add(acc, Scalars.mul(l, i === 0 ? 12n : 26n)), 0n)).toBe(19n);
    expect(() => lagrangeCoefficients([2, 2])).toThrow(/distinct/);
  });
});
