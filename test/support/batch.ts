/**
 * Batch notices (common/attestation-batch.ts) read back from a stack's node with their proofs, as the
 * registry takes them (`record(notice, proof)`), and the registry's calls: what the contract suites and the
 * on-chain bench share.
 */
import type { Address, Hex } from "viem";
import { isBatchNotice } from "../../common/attestation-batch.ts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { proofArgument, type StoredProof } from "../../api/publisher/chain.ts";
import { GraphqlReader } from "../../api/rollup/graphql.ts";
import { JsonRpcReader } from "../../api/rollup/jsonrpc.ts";
import type { TestStack } from "./stack.ts";

export interface ProvenBatch {
  inputIndex: number;
  notice: Hex;
  /** The proof as the registry of the stack's version takes it. */
  proof: unknown;
}

/** The batch notice of input `inputIndex` and its proof; undefined while its epoch is not claimed (or it has none). */
export async function provenBatch(stack: Pick<TestStack, "urls" | "rollups" | "addresses">, inputIndex: number): Promise<ProvenBatch | undefined> {
  let found: { payload: Hex; proof: StoredProof | null } | undefined;
  if (stack.rollups === "v2") {
    const notices = await new JsonRpcReader(stack.urls.node, stack.addresses.dapp).noticesWithProofs(inputIndex);
    const n = notices.find((x) => isBatchNotice(x.payload));
    found = n === undefined ? undefined : { payload: n.payload, proof: n.siblings === null ? null : { outputIndex: n.index, outputHashesSiblings: n.siblings } };
  } else {
    const notices = await new GraphqlReader(`${stack.urls.node}/graphql`).noticesWithProofs(inputIndex);
    const n = notices.find((x) => isBatchNotice(x.payload));
    found = n === undefined ? undefined : { payload: n.payload, proof: n.proof === null ? null : { validity: n.proof.validity, context: n.proof.context } };
  }
  if (found?.proof == null) return undefined;
  return { inputIndex, notice: found.payload, proof: proofArgument(found.proof) };
}

/** Closes the node's epoch now (the devnode's own route). */
export async function closeEpoch(stack: Pick<TestStack, "urls">): Promise<void> {
  const response = await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
  if (!response.ok) throw new Error(`closing the epoch: HTTP ${response.status}`);
}

/** The batch notices of these inputs with their proofs, waiting for their epoch's claim. */
export async function provenBatches(stack: Pick<TestStack, "urls" | "rollups" | "addresses">, inputs: readonly number[], timeoutMs = 60_000): Promise<ProvenBatch[]> {
  const deadline = Date.now() + timeoutMs;
  const out: ProvenBatch[] = [];
  for (const input of inputs) {
    for (;;) {
      const proven = await provenBatch(stack, input);
      if (proven !== undefined) {
        out.push(proven);
        break;
      }
      if (Date.now() > deadline) throw new Error(`no proven batch notice for input ${input} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return out;
}

/** The registry's ABI and the gate's, for the stack's version. */
export function registryAbi(rollups: "v1" | "v2") {
  return contractArtifact(stackContracts(rollups).registry).abi;
}

export function gateAbi() {
  return contractArtifact("AttestationGate").abi;
}

export type { Address };
