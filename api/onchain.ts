/**
 * What the registry and the gate the stack deploys (contracts/, docs/eas.md) hold of an attestation, read
 * from the chain: one reader for the api's `GET /attestation/{id}/onchain` and the publisher's check of
 * what a target already holds before it sends a batch.
 */
import { zeroHash, type Abi, type Address, type Hex, type PublicClient } from "viem";
import { contractArtifact, stackContracts } from "../common/contracts.ts";

export interface GateRecord {
  /** The claim the gate holds for the owner and schema (zero: none). */
  claimId: Hex;
  /** Where it stands in the rollup's history: the index of its input. */
  order: bigint;
  attestorCount: number;
}

export class AttestationContracts {
  private readonly abis: { registry: Abi; gate: Abi };

  constructor(
    private readonly client: Pick<PublicClient, "readContract">,
    rollups: "v1" | "v2",
    readonly addresses: { registry: Address; gate: Address },
  ) {
    const names = stackContracts(rollups);
    this.abis = { registry: contractArtifact(names.registry).abi, gate: contractArtifact(names.gate).abi };
  }

  /** Whether the registry holds the batch notice of input `inputIndex` (what the publisher skips). */
  async batchRecorded(inputIndex: number): Promise<boolean> {
    return (await this.read("registry", "isBatchRecorded", [BigInt(inputIndex)])) as boolean;
  }

  /** Whether the registry holds `uid` (EAS's `getAttestation` answers a zero uid for one it does not). */
  async registryHolds(uid: Hex): Promise<boolean> {
    const stored = (await this.read("registry", "getAttestation", [uid])) as { uid: Hex };
    return stored.uid.toLowerCase() === uid.toLowerCase();
  }

  /** IEAS.isAttestationValid: recorded, not revoked, not expired at the chain's latest block. */
  async registryValid(uid: Hex): Promise<boolean> {
    return (await this.read("registry", "isAttestationValid", [uid])) as boolean;
  }

  /** When the registry recorded `uid`'s revocation as the rollup dated it (Unix seconds), or null. */
  async registryRevokedAt(uid: Hex): Promise<number | null> {
    return whenOf((await this.read("registry", "revocationOf", [uid])) as bigint);
  }

  /** What the gate holds for an owner and schema, or undefined when nothing. */
  async gateHeld(owner: Address | string, schemaId: Hex | string): Promise<GateRecord | undefined> {
    const held = (await this.read("gate", "attestationOf", [owner, schemaId])) as { claimId: Hex; order: bigint; attestorCount: number | bigint };
    return held.claimId === zeroHash ? undefined : { claimId: held.claimId.toLowerCase() as Hex, order: held.order, attestorCount: Number(held.attestorCount) };
  }

  /** When the gate recorded `uid`'s revocation, or null. */
  async gateRevokedAt(uid: Hex): Promise<number | null> {
    return whenOf((await this.read("gate", "revokedAt", [uid])) as bigint);
  }

  private read(target: "registry" | "gate", functionName: string, args: readonly unknown[]): Promise<unknown> {
    return this.client.readContract({ address: this.addresses[target], abi: this.abis[target], functionName, args });
  }
}

function whenOf(t: bigint): number | null {
  return t === 0n ? null : Number(t);
}
