// SPDX-License-Identifier: AGPL-3.0-only
/**
 * The Stwo prover of zk-symmetric-crypto 5.x, shaped as the 3.x operator that attestor-core 4.0.3 calls.
 * attestor-core 4.0.3 knows only snarkjs and gnark, whose circuit files are not on the npm registry; Stwo
 * ships its prover and verifier as WASM inside the package. The two versions differ in one detail: 3.x
 * hands the operator one `{nonce, counter}`, 5.x a list of them.
 */
import { createRequire } from "node:module";
import { makeStwoZkOperator } from "zk-symmetric-crypto-stwo/stwo";

const require = createRequire(import.meta.url);

export const ALGORITHMS = ["chacha20", "aes-128-ctr", "aes-256-ctr"] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

interface LegacySignals {
  nonce: Uint8Array;
  counter: number;
  [key: string]: unknown;
}

/** The operator interface attestor-core 4.0.3 uses (zk-symmetric-crypto 3.x). */
export interface LegacyZkOperator {
  generateWitness(input: LegacySignals): Promise<Uint8Array> | Uint8Array;
  groth16Prove(witness: Uint8Array, logger?: unknown): Promise<{ proof: Uint8Array | string }>;
  groth16Verify(signals: LegacySignals, proof: Uint8Array | string, logger?: unknown): Promise<boolean>;
  release?(): void;
}

type StwoOperator = ReturnType<typeof makeStwoZkOperator>;
type StwoWitnessInput = Parameters<StwoOperator["generateWitness"]>[0];
type StwoSignals = Parameters<StwoOperator["groth16Verify"]>[0];
type StwoProof = Parameters<StwoOperator["groth16Verify"]>[1];

function withNonceList<T extends LegacySignals>(signals: T): T & { noncesAndCounters: { nonce: Uint8Array; counter: number }[] } {
  return { ...signals, noncesAndCounters: [{ nonce: signals.nonce, counter: signals.counter }] };
}

export function stwoOperators(): Record<Algorithm, LegacyZkOperator> {
  const entries = ALGORITHMS.map((algorithm) => {
    // Stwo's circuits are inside its WASM: it never calls the file fetcher the interface asks for.
    const inner = makeStwoZkOperator({ algorithm, fetcher: { fetch: () => Promise.reject(new Error("Stwo reads no files")) } });
    const operator: LegacyZkOperator = {
      generateWitness: (input) => inner.generateWitness(withNonceList(input) as unknown as StwoWitnessInput),
      groth16Prove: (witness) => inner.groth16Prove(witness),
      groth16Verify: (signals, proof, logger) =>
        inner.groth16Verify(withNonceList(signals) as unknown as StwoSignals, proof as StwoProof, logger as never),
      release: () => inner.release?.(),
    };
    return [algorithm, operator] as const;
  });
  return Object.fromEntries(entries) as Record<Algorithm, LegacyZkOperator>;
}

/**
 * Makes attestor-core's default engine ("snarkjs", the one its wire format names) prove and verify with
 * Stwo: its operator cache is filled from `makeSnarkJsZKOperator`, read once when its zk module loads, so
 * this must run before attestor-core is first required.
 */
export function useStwoAsDefaultEngine(operators: Record<Algorithm, LegacyZkOperator>): void {
  const path = require.resolve("@reclaimprotocol/zk-symmetric-crypto");
  const real = require(path) as Record<string, unknown>;
  const cached = require.cache[path];
  if (cached === undefined) throw new Error("zk-symmetric-crypto did not load");
  cached.exports = { ...real, makeSnarkJsZKOperator: ({ algorithm }: { algorithm: Algorithm }) => operators[algorithm] };
}
