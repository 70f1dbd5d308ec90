/**
 * Ids and addresses are stored as BLOBs (half the bytes of their hex text). Only the dapp's database
 * boundary converts (back with common/hex.ts `bytesToHex`); everything above it speaks lower-case 0x hex.
 */
export function hexToBuffer(value: string): Buffer {
  return Buffer.from(value.slice(2), "hex");
}

const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;

/** A 32-byte id as a key, or `undefined` when the text cannot be one (so a lookup simply finds nothing). */
export function idKey(value: string): Buffer | undefined {
  return BYTES32_RE.test(value) ? hexToBuffer(value) : undefined;
}
