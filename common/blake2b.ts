/**
 * BLAKE2b (RFC 7693), unkeyed, with any output length from 1 to 64 bytes: what libsodium's anonymous
 * sealed box (`crypto_box_seal`) derives its nonce with, `BLAKE2b-192(ephemeral pk | recipient pk)`.
 * Node's OpenSSL offers only BLAKE2b-512, whose output length is part of the parameter block, so a
 * truncated BLAKE2b-512 is not BLAKE2b-192. 64-bit words are kept as (low, high) 32-bit pairs: JavaScript
 * has no 64-bit integers but BigInt, which made one nonce cost ~100 µs.
 */

/** The IV as (low, high) pairs: the SHA-512 IV. */
const IV = new Uint32Array([
  0xf3bcc908, 0x6a09e667, 0x84caa73b, 0xbb67ae85, 0xfe94f82b, 0x3c6ef372, 0x5f1d36f1, 0xa54ff53a,
  0xade682d1, 0x510e527f, 0x2b3e6c1f, 0x9b05688c, 0xfb41bd6b, 0x1f83d9ab, 0x137e2179, 0x5be0cd19,
]);

const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
] as const;

const BLOCK = 128;

/** v[a] += (lo, hi), as 64-bit words at pair offsets. */
function add64(v: Uint32Array, a: number, lo: number, hi: number): void {
  const low = (v[a] as number) + lo;
  v[a + 1] = (v[a + 1] as number) + hi + (low > 0xffffffff ? 1 : 0);
  v[a] = low;
}

/** The mixing function G on words a, b, c, d (pair offsets) with message words x, y (pair offsets). */
function mix(v: Uint32Array, m: Uint32Array, a: number, b: number, c: number, d: number, x: number, y: number): void {
  add64(v, a, v[b] as number, v[b + 1] as number);
  add64(v, a, m[x] as number, m[x + 1] as number);
  let lo = (v[d] as number) ^ (v[a] as number);
  let hi = (v[d + 1] as number) ^ (v[a + 1] as number);
  v[d] = hi; // rotate right 32: swap the halves
  v[d + 1] = lo;
  add64(v, c, v[d] as number, v[d + 1] as number);
  lo = (v[b] as number) ^ (v[c] as number);
  hi = (v[b + 1] as number) ^ (v[c + 1] as number);
  v[b] = (lo >>> 24) | (hi << 8); // rotate right 24
  v[b + 1] = (hi >>> 24) | (lo << 8);
  add64(v, a, v[b] as number, v[b + 1] as number);
  add64(v, a, m[y] as number, m[y + 1] as number);
  lo = (v[d] as number) ^ (v[a] as number);
  hi = (v[d + 1] as number) ^ (v[a + 1] as number);
  v[d] = (lo >>> 16) | (hi << 16); // rotate right 16
  v[d + 1] = (hi >>> 16) | (lo << 16);
  add64(v, c, v[d] as number, v[d + 1] as number);
  lo = (v[b] as number) ^ (v[c] as number);
  hi = (v[b + 1] as number) ^ (v[c + 1] as number);
  v[b] = (hi >>> 31) | (lo << 1); // rotate right 63: left 1
  v[b + 1] = (lo >>> 31) | (hi << 1);
}

function compress(h: Uint32Array, block: Uint8Array, counted: number, last: boolean): void {
  const v = new Uint32Array(32);
  v.set(h, 0);
  v.set(IV, 16);
  v[24] = (v[24] as number) ^ counted >>> 0;
  v[25] = (v[25] as number) ^ Math.floor(counted / 0x100000000);
  if (last) {
    v[28] = ~(v[28] as number);
    v[29] = ~(v[29] as number);
  }
  const m = new Uint32Array(32);
  for (let i = 0; i < 32; i++) {
    const at = i * 4;
    m[i] = (block[at] as number) | ((block[at + 1] as number) << 8) | ((block[at + 2] as number) << 16) | ((block[at + 3] as number) << 24);
  }
  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10] as readonly number[];
    const w = (k: number): number => 2 * (s[k] as number);
    mix(v, m, 0, 8, 16, 24, w(0), w(1));
    mix(v, m, 2, 10, 18, 26, w(2), w(3));
    mix(v, m, 4, 12, 20, 28, w(4), w(5));
    mix(v, m, 6, 14, 22, 30, w(6), w(7));
    mix(v, m, 0, 10, 20, 30, w(8), w(9));
    mix(v, m, 2, 12, 22, 24, w(10), w(11));
    mix(v, m, 4, 14, 16, 26, w(12), w(13));
    mix(v, m, 6, 8, 18, 28, w(14), w(15));
  }
  for (let i = 0; i < 16; i++) h[i] = (h[i] as number) ^ (v[i] as number) ^ (v[i + 16] as number);
}

/** BLAKE2b of `data` with an output of `outputBytes` (1 to 64), no key. */
export function blake2b(data: Uint8Array, outputBytes: number): Uint8Array {
  if (!Number.isInteger(outputBytes) || outputBytes < 1 || outputBytes > 64) throw new RangeError("BLAKE2b outputs 1 to 64 bytes");
  const h = new Uint32Array(IV);
  // Parameter block: digest length, key length 0, fanout 1, depth 1.
  h[0] = (h[0] as number) ^ 0x01010000 ^ outputBytes;
  const block = new Uint8Array(BLOCK);
  let at = 0;
  // Every full block but the last goes through unfinalized; the last (or an empty message's zero block) finalizes.
  while (data.length - at > BLOCK) {
    block.set(data.subarray(at, at + BLOCK));
    at += BLOCK;
    compress(h, block, at, false);
  }
  block.fill(0);
  block.set(data.subarray(at));
  compress(h, block, data.length, true);
  const out = new Uint8Array(outputBytes);
  for (let i = 0; i < outputBytes; i++) out[i] = ((h[i >> 2] as number) >>> (8 * (i & 3))) & 0xff;
  return out;
}
