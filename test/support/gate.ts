/**
 * The example consumer contracts (contracts/) of the stack's Rollups version deployed on its chain, and the
 * fields and proofs they take, read from the notices the rollup emitted.
 */
import { createWalletClient, hexToString, http, type Address, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { attestationFields as fieldsOfAttestation, revocationFields as fieldsOfRevocation, type NoticeAttestation, type NoticeRevocation } from "../../common/notice-fields.ts";
import { isV2Proof, type AttestationProof } from "../../client/index.ts";
import { compiledContract } from "../../contracts/compile.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { contractProof } from "../../devnode/v1/proofs.ts";
import type { TestStack } from "./stack.ts";

/** Account #9: no other test sends from it, so its nonces are its own. */
export function deployerWallet(stack: TestStack) {
  return createWalletClient({ transport: http(stack.urls.rpc), account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 9 }) });
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

/** AttestationGate (v1) or AttestationGateV2, bound to `application`. */
export function deployAttestationGate(stack: TestStack, application: Address) {
  return deployContract(stack, stack.rollups === "v2" ? "AttestationGateV2" : "AttestationGate", [application]);
}

/** AttestationRegistryV1 or AttestationRegistryV2 (the IEAS read surface), bound to `application`. */
export function deployAttestationRegistry(stack: TestStack, application: Address) {
  return deployContract(stack, stack.rollups === "v2" ? "AttestationRegistryV2" : "AttestationRegistryV1", [application]);
}

export type { NoticeAttestation, NoticeRevocation };

/** The fields of an `attestation:created` notice (hex of its JSON), for the contracts' `record`. */
export function attestationFields(notice: Hex): NoticeAttestation {
  return fieldsOfAttestation(hexToString(notice));
}

/** The fields of an `attestation:revoked` notice (hex of its JSON), for the contracts' `revoke`. */
export function revocationFields(notice: Hex): NoticeRevocation {
  return fieldsOfRevocation(hexToString(notice));
}

/** The proof argument of `record`/`revoke`: v1's `Proof` for validateNotice, or v2's `OutputValidityProof`. */
export function noticeProofArgument(found: AttestationProof) {
  return isV2Proof(found)
    ? { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings as Hex[] }
    : contractProof(found.proof.validity, found.proof.context as Hex);
}
