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

  it("each Rollups version's registry and gate read the artifact of their own version", () => {
    expect(stackContracts("v1")).toEqual({ registry: "AttestationRegistryV1", gate: "AttestationGate" });
    expect(stackContracts("v2")).toEqual({ registry: "AttestationRegistryV2", gate: "AttestationGateV2" });
    for (const name of DEPLOYED_CONTRACTS) {
      const artifact = contractArtifact(name);
      expect(artifact.contractName).toBe(name);
      expect(artifact.bytecode).toMatch(/^0x(?:[0-9a-f]{2})+$/);
      expect(artifact.abi.some((item) => item.type === "function" && item.name === "recordMany")).toBe(true);
    }
  });
});
