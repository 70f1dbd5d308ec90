/**
 * Deterministic bench data shared by the seeder, the straight feed (bench/direct-node.ts), the chain feed
 * and the in-process floor: owner addresses, the bench schema, and `create_attestation` inputs shaped
 * like the ones the api produces for a claim (one bucket field, 61 bytes of sealed data).
 */
import type { Address, Hex } from "viem";
import type { InputParams } from "../common/wire.ts";
import { schemaIdOf, type SchemaContent } from "../common/ids.ts";
import { DEFAULTS } from "../devnode/config.ts";

/** The dapp's permanent admin in every bench stack (hardhat account #0); admins hold the attestor role. */
export const BENCH_ADMIN = DEFAULTS.adminAddress.toLowerCase() as Address;

/**
 * Seeded rows take input indexes from here up, so inputs that really arrive (from index 0, through the
 * chain or the straight feed) never collide with them, and the dapp's `last_input_index` stays unset.
 */
export const SEED_INDEX_BASE = 1_000_000_000_000;

/**
 * Sealed size of the api's claim plaintext `["EUR",512.5]` in a sealed box (issue 37): ephemeral key 32,
 * the plaintext 13, the tag 16. (116 before: the named object, 44 bytes, and a 24-byte nonce.)
 */
export const SEALED_BYTES = 61;

export const BENCH_SCHEMA: SchemaContent & { name: string; description: string } = {
  provider: "http",
  flowType: "balance",
  domain: "bench.example",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 86400,
  name: "bench.example/balance",
  description: "Benchmark schema",
};
export const BENCH_SCHEMA_ID: Hex = schemaIdOf(BENCH_SCHEMA);

const LABELS = ["low", "mid", "high"] as const;

/** A 32-bit mix (murmur3's finalizer): cheap, deterministic, spreads consecutive inputs over the key space. */
function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Owner number `k` as 20 address bytes that look random (so the owner index sees random inserts). */
export function ownerBytes(k: number, salt = 0): Buffer {
  const out = Buffer.allocUnsafe(20);
  for (let word = 0; word < 5; word++) out.writeUInt32BE(mix32(k * 5 + word + salt * 0x9e3779b1 + 1), word * 4);
  return out;
}

export function ownerAddress(k: number, salt = 0): Address {
  return `0x${ownerBytes(k, salt).toString("hex")}`;
}

/** The owner the scale figures list: 100 attestations spread evenly through every store. */
export const TARGET_OWNER = ownerAddress(0, 0xbeef);
export const TARGET_OWNER_COUNT = 100;
/** Average attestations per regular owner: the inspect figures list such owners. */
export const ATTESTATIONS_PER_OWNER = 10;

/** Pseudo-random sealed bytes for input `i` (content is opaque to the dapp; only the size matters). */
export function sealedBytes(i: number): Buffer {
  const out = Buffer.alloc(Math.ceil(SEALED_BYTES / 4) * 4);
  let state = mix32(i + 0x51ed);
  for (let at = 0; at < out.length; at += 4) {
    state = mix32(state + at);
    out.writeUInt32BE(state, at);
  }
  return out.subarray(0, SEALED_BYTES);
}

export function bucketLabel(i: number): (typeof LABELS)[number] {
  return LABELS[i % LABELS.length] as (typeof LABELS)[number];
}

/** The params of the `i`-th bench attestation for `owner` (the straight and chain feeds send these). */
export function attestationParams(i: number, owner: Address): InputParams["create_attestation"] {
  return {
    schema_id: BENCH_SCHEMA_ID,
    owner,
    provider: BENCH_SCHEMA.provider,
    encrypted_data: `0x${sealedBytes(i).toString("hex")}`,
    bucket_values: { "data.balance": bucketLabel(i) },
  };
}

/** Owners of fed inputs: a different salt from the seeded owners, ~10 inputs each. */
export function fedOwner(i: number): Address {
  return ownerAddress(Math.floor(i / ATTESTATIONS_PER_OWNER), 7);
}
