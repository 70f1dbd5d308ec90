/**
 * Attestation ids of the seeded rows: `inputIdOf("create_attestation", SEED_INDEX_BASE + i)`, which is a
 * keccak256 in pure JavaScript (~40 µs here). A million of them would dominate seeding, so they are
 * computed once on two worker threads and kept in a cache file under the results folder; every id taken
 * from the cache is the same function's output (`idsOf` re-checks a sample against `inputIdOf`).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { inputIdOf } from "../common/ids.ts";
import { SEED_INDEX_BASE } from "./inputs.ts";

const ID_BYTES = 32;

/**
 * Worker body, plain JavaScript (workers do not inherit tsx): abi.encode(string "create_attestation",
 * uint256 index) laid out by hand (offset 0x40, the index, the string's length and padded bytes), hashed
 * with viem's keccak256, the same function inputIdOf ends in.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { keccak256 } = require(workerData.viem);
const kind = Buffer.from("create_attestation", "utf8");
const encoded = new Uint8Array(128);
encoded[31] = 0x40;
encoded[95] = kind.length;
encoded.set(kind, 96);
const view = new DataView(encoded.buffer);
const out = new Uint8Array(${ID_BYTES} * (workerData.end - workerData.start));
for (let i = workerData.start; i < workerData.end; i++) {
  const index = BigInt(workerData.base + i);
  view.setBigUint64(56, index);
  out.set(keccak256(encoded, "bytes"), (i - workerData.start) * ${ID_BYTES});
}
parentPort.postMessage(out, [out.buffer]);
`;

function computeRange(start: number, end: number): Promise<Buffer> {
  const viem = createRequire(import.meta.url).resolve("viem");
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { start, end, base: SEED_INDEX_BASE, viem } });
    worker.once("message", (bytes: Uint8Array) => resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`id worker exited with code ${code}`));
    });
  });
}

async function compute(start: number, end: number): Promise<Buffer> {
  const threads = Math.max(1, Math.min(availableParallelism(), 4));
  const chunk = Math.ceil((end - start) / threads);
  const parts: Promise<Buffer>[] = [];
  for (let from = start; from < end; from += chunk) parts.push(computeRange(from, Math.min(end, from + chunk)));
  return Buffer.concat(await Promise.all(parts));
}

/** The first `count` seeded ids, 32 bytes each, from the cache file (extended when it holds fewer). */
export async function idsOf(count: number, cacheDir: string): Promise<Buffer> {
  const file = join(cacheDir, `attestation-ids-${SEED_INDEX_BASE}.bin`);
  mkdirSync(dirname(file), { recursive: true });
  let cached = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
  cached = cached.subarray(0, cached.length - (cached.length % ID_BYTES));
  const have = cached.length / ID_BYTES;
  if (have < count) {
    const more = await compute(have, count);
    const fd = openSync(file, "a");
    writeSync(fd, more);
    closeSync(fd);
    cached = Buffer.concat([cached, more]);
  }
  // A stale or corrupted cache must not pass for real ids: check a spread sample against inputIdOf.
  for (const i of [0, Math.floor(count / 2), count - 1]) {
    const expected = inputIdOf("create_attestation", SEED_INDEX_BASE + i).slice(2);
    if (cached.subarray(i * ID_BYTES, (i + 1) * ID_BYTES).toString("hex") !== expected) {
      throw new Error(`${file} does not hold inputIdOf(${SEED_INDEX_BASE + i}); delete it and run again`);
    }
  }
  return cached.subarray(0, count * ID_BYTES);
}
