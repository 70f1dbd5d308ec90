/**
 * The contracts the stack deploys beside its application (the IEAS-shaped registry and the gate, for either
 * Rollups version), as compiled artifacts committed in common/contracts/ (`npm run contracts:build` writes
 * them from contracts/*.sol): whoever deploys or calls them (npm start, `npm run deploy-contracts`, the
 * publisher, the api) needs no compiler.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

export const DEPLOYED_CONTRACTS = ["AttestationRegistryV1", "AttestationRegistryV2", "AttestationGate"] as const;
export type DeployedContract = (typeof DEPLOYED_CONTRACTS)[number];

export interface ContractArtifact {
  contractName: DeployedContract;
  abi: Abi;
  bytecode: Hex;
}

/**
 * The registry (the attestation store, with the proof check of a Rollups version) and the gate (the store's
 * gate face at an address of its own, the same for both versions: it reads the store and checks nothing).
 */
export function stackContracts(rollups: "v1" | "v2"): { registry: DeployedContract; gate: DeployedContract } {
  return { registry: rollups === "v2" ? "AttestationRegistryV2" : "AttestationRegistryV1", gate: "AttestationGate" };
}

export function artifactFile(name: DeployedContract): string {
  return fileURLToPath(new URL(`./contracts/${name}.json`, import.meta.url));
}

const loaded = new Map<DeployedContract, ContractArtifact>();

export function contractArtifact(name: DeployedContract): ContractArtifact {
  let artifact = loaded.get(name);
  if (artifact === undefined) {
    artifact = JSON.parse(readFileSync(artifactFile(name), "utf8")) as ContractArtifact;
    loaded.set(name, artifact);
  }
  return artifact;
}

/** The artifact file's text: one stable form, so a rebuild of the same sources changes nothing. */
export function serializeArtifact(artifact: ContractArtifact): string {
  return `${JSON.stringify(artifact, null, 1)}\n`;
}
