/**
 * Sealing of encrypted_data: both layouts (the sealed box claims use since issue 37, and the nonce-carrying
 * box of every seal before it), a round trip through a key holder, and every way opening fails.
 */
import nacl from "tweetnacl";
import { describe, expect, it } from "vitest";
import { hexToBytes } from "../../common/hex.ts";
import { openSealed, sealAnonymous, sealedBoxNonce, SealError, sealForKey } from "../../common/seal.ts";
import { thrown } from "../support/thrown.ts";

function thrownSealError(fn: () => unknown): SealError {
  const error = thrown(fn);
  if (!(error instanceof SealError)) throw new Error(`expected a SealError, got ${String(error)}`);
  return error;
}

const recipient = nacl.box.keyPair();
const recipientBase64 = Buffer.from(recipient.publicKey).toString("base64");
const plaintext = new TextEncoder().encode(JSON.stringify({ balance: 98765.4321, account: "SECRET-ACCOUNT" }));

describe("sealForKey", () => {
  it("round-trips through openSealed with the recipient's secret key", () => {
    const sealed = sealForKey(plaintext, recipientBase64);
    expect(sealed).toMatch(/^0x[0-9a-f]+$/);
    expect(openSealed(sealed, recipient.secretKey)).toEqual(plaintext);
  });

  it("lays out ephemeral public key 32 | nonce 24 | ciphertext (plaintext + 16)", () => {
    const bytes = hexToBytes(sealForKey(plaintext, recipientBase64));
    expect(bytes.length).toBe(32 + 24 + plaintext.length + 16);
    // Any key holder can open it with nacl.box.open alone, given this layout.
    const opened = nacl.box.open(bytes.subarray(56), bytes.subarray(32, 56), bytes.subarray(0, 32), recipient.secretKey);
    expect(opened).toEqual(plaintext);
  });

  it("uses a fresh ephemeral key and nonce every time", () => {
    const a = hexToBytes(sealForKey(plaintext, recipientBase64));
    const b = hexToBytes(sealForKey(plaintext, recipientBase64));
    expect(Buffer.from(a.subarray(0, 32)).equals(Buffer.from(b.subarray(0, 32)))).toBe(false);
    expect(Buffer.from(a.subarray(32, 56)).equals(Buffer.from(b.subarray(32, 56)))).toBe(false);
  });

  it("seals an empty plaintext", () => {
    expect(openSealed(sealForKey(new Uint8Array(0), recipientBase64), recipient.secretKey)).toEqual(new Uint8Array(0));
  });

  it.each([
    ["not base64", "not base64!", "not base64"],
    ["31 bytes", Buffer.alloc(31, 1).toString("base64"), "31 bytes"],
    ["33 bytes", Buffer.alloc(33, 1).toString("base64"), "33 bytes"],
    ["empty", "", "0 bytes"],
  ])("refuses a recipient key that is %s", (_name, key, received) => {
    const error = thrownSealError(() => sealForKey(plaintext, key));
    expect(error.code).toBe("INVALID_KEY_FORMAT");
    expect(error.details).toEqual({ expected: "a base64-encoded 32-byte NaCl public key", received });
  });
});

describe("sealAnonymous (libsodium's crypto_box_seal)", () => {
  it("lays out ephemeral public key 32 | box (plaintext + 16), the nonce BLAKE2b-192(ephemeral pk | recipient pk)", () => {
    const bytes = hexToBytes(sealAnonymous(plaintext, recipientBase64));
    expect(bytes.length).toBe(32 + plaintext.length + 16);
    const ephemeral = bytes.subarray(0, 32);
    const nonce = sealedBoxNonce(ephemeral, recipient.publicKey);
    // crypto_box_seal_open is nacl.box.open with that nonce: any libsodium opens it with the secret key alone.
    expect(nacl.box.open(bytes.subarray(32), nonce, ephemeral, recipient.secretKey)).toEqual(plaintext);
  });

  it("derives the nonce as libsodium does: BLAKE2b-192 of ephemeral pk | recipient pk", () => {
    // python3 -c "import hashlib; print(hashlib.blake2b(bytes(range(1, 33)) + bytes(range(101, 133)), digest_size=24).hexdigest())"
    const ephemeral = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
    const recipientKey = Uint8Array.from({ length: 32 }, (_, i) => i + 101);
    expect(Buffer.from(sealedBoxNonce(ephemeral, recipientKey)).toString("hex")).toBe("5a95f8dafdd6f93edcc2d0c2b30ca2dd3530ba2e98a0f5e5");
  });

  it("round-trips through openSealed, with a fresh ephemeral key every time", () => {
    const a = sealAnonymous(plaintext, recipientBase64);
    const b = sealAnonymous(plaintext, recipientBase64);
    expect(openSealed(a, recipient.secretKey)).toEqual(plaintext);
    expect(a.slice(0, 66)).not.toBe(b.slice(0, 66));
    expect(openSealed(sealAnonymous(new Uint8Array(0), recipientBase64), recipient.secretKey)).toEqual(new Uint8Array(0));
  });

  it("opens the nonce-carrying layout of data sealed before, and each layout only as itself", () => {
    expect(openSealed(sealForKey(plaintext, recipientBase64), recipient.secretKey)).toEqual(plaintext);
    // A sealed box read as if it carried a nonce (and the reverse) fails its tag: only its own layout opens it.
    const box = hexToBytes(sealAnonymous(plaintext, recipientBase64));
    expect(nacl.box.open(box.subarray(56), box.subarray(32, 56), box.subarray(0, 32), recipient.secretKey)).toBeNull();
    const carried = hexToBytes(sealForKey(plaintext, recipientBase64));
    expect(nacl.box.open(carried.subarray(32), sealedBoxNonce(carried.subarray(0, 32), recipient.publicKey), carried.subarray(0, 32), recipient.secretKey)).toBeNull();
  });

  it("opens with tweetnacl where OpenSSL refuses the point (a low-order ephemeral key fails as tampered data)", () => {
    const sealed = `0x${"00".repeat(32)}${Buffer.from(hexToBytes(sealAnonymous(plaintext, recipientBase64)).subarray(32)).toString("hex")}`;
    expect(() => openSealed(sealed, recipient.secretKey)).toThrow("wrong key or tampered data");
  });
});

describe("openSealed", () => {
  const sealed = sealForKey(plaintext, recipientBase64);

  function tampered(index: number): string {
    const bytes = hexToBytes(sealed);
    bytes[index] = (bytes[index] as number) ^ 1;
    return `0x${Buffer.from(bytes).toString("hex")}`;
  }

  it.each([
    ["the wrong secret key", () => openSealed(sealed, nacl.box.keyPair().secretKey), "wrong key or tampered data"],
    ["a tampered ephemeral key", () => openSealed(tampered(0), recipient.secretKey), "wrong key or tampered data"],
    ["a tampered nonce", () => openSealed(tampered(40), recipient.secretKey), "wrong key or tampered data"],
    ["a tampered ciphertext", () => openSealed(tampered(70), recipient.secretKey), "wrong key or tampered data"],
    ["a truncated box", () => openSealed(sealed.slice(0, 2 + 2 * 71), recipient.secretKey), "wrong key or tampered data"],
    ["a box shorter than a sealed box's key and tag", () => openSealed(sealed.slice(0, 2 + 2 * 47), recipient.secretKey), "sealed data is too short"],
    ["text that is not hex", () => openSealed("hello", recipient.secretKey), "sealed data is not 0x-prefixed hex"],
    ["odd-length hex", () => openSealed(`${sealed}0`, recipient.secretKey), "sealed data is not 0x-prefixed hex"],
    ["a short secret key", () => openSealed(sealed, new Uint8Array(31)), "secret key must be 32 bytes"],
  ])("fails with DECRYPTION_FAILED for %s", (_name, open, reason) => {
    const error = thrownSealError(open);
    expect(error.code).toBe("DECRYPTION_FAILED");
    expect(error.details).toEqual({ reason });
    expect(JSON.stringify([error.message, error.details])).not.toMatch(/SECRET|98765/);
  });
});
