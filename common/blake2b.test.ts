/** BLAKE2b against RFC 7693's vector and Python's hashlib (digest_size 24, what the sealed box's nonce uses), and node's BLAKE2b-512. */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { blake2b } from "./blake2b.ts";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

describe("blake2b", () => {
  it.each([
    // hashlib.blake2b(data, digest_size=24).hexdigest()
    ["", "ab3b5331a7135ed50d0f182d026e60abdb3646fd51bcf8a3"],
    ["616263", "56a17e38cc371a46b12c32f18e0c61de2a84e9c2555b114e"],
    [Buffer.from(Array.from({ length: 64 }, (_, i) => i)).toString("hex"), "aa054507b4916837a6d2b35b1ce7c525facdb7868ed55a8a"],
    [Buffer.from(Array.from({ length: 200 }, (_, i) => i)).toString("hex"), "e9183c766451ac26ddd03b280b4b6000802b4b7230c78bb3"],
  ])("BLAKE2b-192 of %s", (input, digest) => {
    expect(hex(blake2b(Buffer.from(input, "hex"), 24))).toBe(digest);
  });

  it("is RFC 7693's BLAKE2b-512 of 'abc'", () => {
    expect(hex(blake2b(Buffer.from("abc"), 64))).toBe(
      "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
    );
  });

  it("agrees with node's BLAKE2b-512 at every block boundary", () => {
    for (const length of [0, 1, 127, 128, 129, 255, 256, 257, 1000]) {
      const data = randomBytes(length);
      expect(hex(blake2b(data, 64)), `${length} bytes`).toBe(createHash("blake2b512").update(data).digest("hex"));
    }
  });

  it("refuses an output length outside 1..64", () => {
    expect(() => blake2b(new Uint8Array(0), 0)).toThrow(RangeError);
    expect(() => blake2b(new Uint8Array(0), 65)).toThrow(RangeError);
  });
});
