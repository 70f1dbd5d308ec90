/**
 * The compiled artifacts committed in common/contracts/ (what npm start, `npm run deploy-contracts`, the
 * publisher and the api deploy and call) are exactly what contracts/*.sol compile to today: a source
 * changed without `npm run contracts:build` fails here, naming the contract.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compiledContract } from "../../contracts/compile.ts";
import { artifactFile, contractArtifact, DEPLOYED_CONTRACTS, serializeArtifact, stackContracts } from "../../common/contracts.ts";

describe("the shipped contract artifacts", () => {
  it.each(DEPLOYED_CONTRACTS)("%s is what its source compiles to (npm run contracts:build)", { timeout: 300_000 }, (name) => {
    const { abi, bytecode } = compiledContract(name);
    expect(readFileSync(artifactFile(name), "utf8")).toBe(serializeArtifact({ contractName: name, abi, bytecode }));
  });

  it("each Rollups version's registry reads the artifact of its own version; the gate, a face of the store, is one for both", () => {
    expect(stackContracts("v1")).toEqual({ registry: "AttestationRegistryV1", gate: "AttestationGate" });
    expect(stackContracts("v2")).toEqual({ registry: "AttestationRegistryV2", gate: "AttestationGate" });
    const functions = (name: (typeof DEPLOYED_CONTRACTS)[number]) => contractArtifact(name).abi.flatMap((item) => (item.type === "function" ? [item.name] : []));
    for (const name of DEPLOYED_CONTRACTS) {
      const artifact = contractArtifact(name);
      expect(artifact.contractName).toBe(name);
      expect(artifact.bytecode).toMatch(/^0x(?:[0-9a-f]{2})+$/);
    }
    // Only the store is written to; the gate answers the store's gate face and nothing else.
    for (const name of ["AttestationRegistryV1", "AttestationRegistryV2"] as const) expect(functions(name)).toEqual(expect.arrayContaining(["record", "recordMany", "checkAttestation", "getAttestation", "hasBucket"]));
    expect(functions("AttestationGate").sort()).toEqual(["attestationOf", "hasBucket", "hasBucketByAttestors", "hasFreshBucket", "isFresh", "revokedAt", "store"]);
  });
});
