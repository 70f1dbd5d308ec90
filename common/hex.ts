import type { Hex } from "viem";

const HEX_RE = /^0x(?:[0-9a-fA-F]{2})*$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function isHex(value: string): value is Hex {
  return HEX_RE.test(value);
}

export function bytesToHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
}

/** Decodes `0x`-prefixed hex; throws a TypeError naming the problem when it is not well-formed. */
export function hexToBytes(value: string): Uint8Array {
  if (!isHex(value)) throw new TypeError("not 0x-prefixed hex with an even number of digits");
  return new Uint8Array(Buffer.from(value.slice(2), "hex"));
}

export function utf8ToHex(text: string): Hex {
  return `0x${Buffer.from(text, "utf8").toString("hex")}`;
}

/** Strict: invalid UTF-8 throws a TypeError rather than producing replacement characters. */
export function bytesToUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new TypeError("payload is not valid UTF-8");
  }
}

/** Strict: invalid hex or invalid UTF-8 throws a TypeError rather than producing replacement characters. */
export function hexToUtf8(value: string): string {
  return bytesToUtf8(hexToBytes(value));
}

/** The wire form of every payload in this project: hex of the UTF-8 JSON text. */
export function jsonToHex(value: unknown): Hex {
  return utf8ToHex(JSON.stringify(value));
}
