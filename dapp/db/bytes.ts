import type { Address, Hex } from "viem";

/**
 * Ids and addresses are stored as BLOBs (half the bytes of their hex text). Only the dapp's database
 * boundary converts; everything above it speaks lower-case 0x hex.
 */
export function hexToBuffer(value: string): Buffer {
  return Buffer.from(value.slice(2), "hex");
}

export function bufferToHex(value: Uint8Array): Hex {
  return `0x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}`;
}

export function bufferToAddress(value: Uint8Array): Address {
  return bufferToHex(value);
}

const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;

/** A 32-byte id as a key, or `undefined` when the text cannot be one (so a lookup simply finds nothing). */
export function idKey(value: string): Buffer | undefined {
  return BYTES32_RE.test(value) ? hexToBuffer(value) : undefined;
}
