/**
 * The contracts of contracts/ deployed on a stack's chain (the registry of the stack's Rollups version, the
 * gate over it, consumers), and the arguments they take from the api's batch proofs.
 */
import { createWalletClient, http, type Address, type Hex } from "viem";
import { hardhatAccount } from "../../devnode/hardhat-keys.ts";
import type { BatchProof } from "../../client/index.ts";
import { decodeBatchNotice, type BatchNotice } from "../../common/attestation-batch.ts";
import { compiledContract } from "../../contracts/compile.ts";
import { proofArgument } from "../../api/publisher/chain.ts";
import type { TestStack } from "./stack.ts";

/** Account #9: no other test sends from it, so its nonces are its own. */
export function deployerWallet(stack: TestStack) {
  return createWalletClient({ transport: http(stack.urls.rpc), account: hardhatAccount(9) });
}

/** Deploys a contract of contracts/ by name; with its abi, the wallet that deployed it, and a reader. */
export async function deployContract(stack: TestStack, name: string, args: readonly unknown[]) {
  const { abi, bytecode } = compiledContract(name);
  const wallet = deployerWallet(stack);
  const reader = stack.client.publicClient;
  const deployed = await reader.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode, args, chain: null }) });
  if (deployed.status !== "success" || deployed.contractAddress == null) throw new Error(`deploying ${name} failed (transaction ${deployed.transactionHash})`);
  return { address: deployed.contractAddress, abi, wallet, reader };
}

/** AttestationRegistryV1 or AttestationRegistryV2 (the store: IEAS's reads and the gate's face), bound to `application`. */
export function deployAttestationRegistry(stack: TestStack, application: Address) {
  return deployContract(stack, stack.rollups === "v2" ? "AttestationRegistryV2" : "AttestationRegistryV1", [application]);
}

/** AttestationGate: the gate's face of the registry at `registry`, at an address of its own. */
export function deployAttestationGate(stack: TestStack, registry: Address) {
  return deployContract(stack, "AttestationGate", [registry]);
}

/** The proof of a batch notice as the registry of its version takes it: v1's `Proof`, or v2's `OutputValidityProof` (the publisher's conversion). */
export function batchProofArgument(found: BatchProof) {
  return proofArgument("output" in found ? { outputIndex: found.proof.outputIndex, outputHashesSiblings: found.proof.outputHashesSiblings as Hex[] } : { validity: found.proof.validity, context: found.proof.context as Hex });
}

/** `record(notice, proof)`'s arguments for a batch the api served. */
export function recordArgs(found: BatchProof): readonly [Hex, ReturnType<typeof batchProofArgument>] {
  return [found.notice as Hex, batchProofArgument(found)];
}

/** The batch notice the api served, read back. */
export function batchOf(found: BatchProof): BatchNotice {
  return decodeBatchNotice(found.notice as Hex);
}
