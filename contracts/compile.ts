/**
 * Compiles the project's Solidity (contracts/*.sol) with the `solc` npm package (solc-js: the compiler as
 * WebAssembly, nothing downloaded), resolving imports from contracts/ and node_modules (@cartesi/rollups,
 * @cartesi/util, @openzeppelin/contracts). Loading and running the compiler takes seconds, so the output
 * is cached on disk by the hash of the sources and the compiler version.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

const require = createRequire(import.meta.url);
const CONTRACTS_DIR = dirname(fileURLToPath(import.meta.url));
const CACHE_DIR = resolve(CONTRACTS_DIR, "..", "node_modules", ".cache", "attestation-contracts");

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

interface Solc {
  version(): string;
  compile(input: string, callbacks: { import: (path: string) => { contents: string } | { error: string } }): string;
}

export class CompileError extends Error {
  override readonly name = "CompileError";
}

function readImport(path: string): { contents: string } | { error: string } {
  const local = join(CONTRACTS_DIR, path);
  if (existsSync(local)) return { contents: readFileSync(local, "utf8") };
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `not found: ${path}` };
  }
}

/**
 * The compiler's settings (part of the cache key): the legacy pipeline, optimised for calls rather than
 * deployment. Measured (bench --onchain): the IR pipeline records an attestation for ~800 gas less, but
 * dispatches calls by a linear search over the selectors, which puts a consumer's `isAttestationValid` above
 * EAS's; the legacy pipeline's binary search keeps it below.
 */
const SETTINGS = { optimizer: { enabled: true, runs: 1_000_000 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } };

/** Every contract of contracts/*.sol by name, compiled (or read from the cache). */
export function compileContracts(): Record<string, CompiledContract> {
  const files = readdirSync(CONTRACTS_DIR).filter((f) => f.endsWith(".sol")).sort();
  const sources = Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(CONTRACTS_DIR, f), "utf8") }]));
  const solcVersion = (require("solc/package.json") as { version: string }).version;
  const key = createHash("sha256").update(solcVersion).update(JSON.stringify(SETTINGS)).update(JSON.stringify(sources)).digest("hex").slice(0, 16);
  const cached = join(CACHE_DIR, `${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as Record<string, CompiledContract>;

  const solc = require("solc") as Solc;
  const input = {
    language: "Solidity",
    sources,
    settings: SETTINGS,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: readImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new CompileError(errors.map((e) => e.formattedMessage).join("\n"));
  const compiled: Record<string, CompiledContract> = {};
  for (const file of files) {
    for (const [name, contract] of Object.entries(output.contracts?.[file] ?? {})) {
      compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cached, JSON.stringify(compiled));
  return compiled;
}

export function compiledContract(name: string): CompiledContract {
  const contract = compileContracts()[name];
  if (contract === undefined) throw new CompileError(`no contract ${name} in contracts/`);
  return contract;
}
