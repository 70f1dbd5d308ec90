/**
 * The publisher's side of the chain: what the registry and the gate already hold (so nothing is sent for
 * it), the batch calls (`recordMany`, `revokeMany`) with their gas, and transactions signed here and kept
 * before they are broadcast, so that a restart can send the same bytes again instead of a second one.
 */
import { createPublicClient, defineChain, encodeFunctionData, http, keccak256, type Abi, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { messageOf } from "../../common/errors.ts";
import { AttestationContracts } from "../onchain.ts";
import { attestationFields, revocationFields, type NoticeAttestation, type NoticeRevocation } from "../../common/notice-fields.ts";
import type { OutputValidityProof } from "../../common/wire.ts";
import type { ItemKind, PublishItem, Target } from "./store.ts";

/** A proof as the node serves it: v1's {validity, context}, v2's {outputIndex, outputHashesSiblings}. */
export type StoredProof = { validity: OutputValidityProof; context: Hex } | { outputIndex: number; outputHashesSiblings: Hex[] };

export interface PublisherChainOptions {
  rpcUrl: string;
  chainId: number;
  rollups: "v1" | "v2";
  privateKey: Hex;
  contracts: Record<Target, Address>;
}

export interface SignedTx {
  hash: Hex;
  raw: Hex;
  nonce: number;
  gasLimit: number;
}

/** A proof as the contracts take it (viem: integers as bigint). */
function proofArgument(proof: StoredProof): unknown {
  if ("outputIndex" in proof) return { outputIndex: BigInt(proof.outputIndex), outputHashesSiblings: proof.outputHashesSiblings };
  return {
    validity: { ...proof.validity, inputIndexWithinEpoch: BigInt(proof.validity.inputIndexWithinEpoch), outputIndexWithinInput: BigInt(proof.validity.outputIndexWithinInput) },
    context: proof.context,
  };
}

export class PublisherChain {
  readonly account: PrivateKeyAccount;
  readonly client: PublicClient<Transport, Chain>;
  private readonly chain: Chain;
  private readonly abis: Record<Target, Abi>;
  /** What the registry and the gate hold, read from the chain. */
  private readonly held: AttestationContracts;
  private nonce: number | undefined;

  constructor(private readonly options: PublisherChainOptions) {
    this.account = privateKeyToAccount(options.privateKey);
    this.chain = defineChain({ id: options.chainId, name: `chain ${options.chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [options.rpcUrl] } } });
    this.client = createPublicClient({ chain: this.chain, transport: http(options.rpcUrl, { timeout: 10_000 }) });
    const names = stackContracts(options.rollups);
    this.abis = { registry: contractArtifact(names.registry).abi, gate: contractArtifact(names.gate).abi };
    this.held = new AttestationContracts(this.client, options.rollups, options.contracts);
  }

  /** Whether `target` already holds what `item` brings (or, for the gate, something newer of the same owner and schema). */
  async holds(target: Target, item: PublishItem): Promise<boolean> {
    const held = this.held;
    if (item.kind === "revocation") return (await (target === "registry" ? held.registryRevokedAt(item.uid) : held.gateRevokedAt(item.uid))) !== null;
    if (target === "registry") return held.registryHolds(item.uid);
    const a = attestationFields(item.notice);
    const current = await held.gateHeld(a.owner, a.schemaId);
    if (current === undefined) return false;
    // The gate keeps the newest per owner and schema: an older one than it holds would be skipped.
    return current.claimId === item.uid.toLowerCase() || current.order >= this.orderOf(item);
  }

  /** Where the attestation stands in the rollup's history as the gate orders it: v1 its input, v2 its output. */
  private orderOf(item: PublishItem): bigint {
    const proof = JSON.parse(item.proof ?? "null") as StoredProof | null;
    if (proof !== null && "outputIndex" in proof) return BigInt(proof.outputIndex);
    return BigInt(item.inputIndex);
  }

  /** The calldata of `recordMany` or `revokeMany` for these items (each with its proof). */
  batchCall(target: Target, kind: ItemKind, items: readonly PublishItem[]): Hex {
    const proofs = items.map((i) => proofArgument(JSON.parse(i.proof as string) as StoredProof));
    const fields: (NoticeAttestation | NoticeRevocation)[] = items.map((i) => (kind === "attestation" ? attestationFields(i.notice) : revocationFields(i.notice)));
    return encodeFunctionData({ abi: this.abis[target], functionName: kind === "attestation" ? "recordMany" : "revokeMany", args: [fields, proofs] });
  }

  async estimate(target: Target, data: Hex): Promise<number> {
    return Number(await this.client.estimateGas({ account: this.account, to: this.options.contracts[target], data }));
  }

  /** Signs the call at the wallet's next nonce (learned from the chain once, then counted here). */
  async sign(target: Target, data: Hex, gasLimit: number): Promise<SignedTx> {
    this.nonce ??= await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
    const fees = await this.client.estimateFeesPerGas();
    // Signed by the local key itself: nothing to ask the node but the nonce and the fees.
    const raw = await this.account.signTransaction({
      type: "eip1559",
      chainId: this.options.chainId,
      to: this.options.contracts[target],
      data,
      gas: BigInt(gasLimit),
      nonce: this.nonce,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const signed = { hash: keccak256(raw), raw, nonce: this.nonce, gasLimit };
    this.nonce += 1;
    return signed;
  }

  /** Broadcasts signed bytes; the same bytes again (after a restart) are the same transaction. */
  async broadcast(raw: Hex): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (error) {
      // Sent before (the node has it or mined it): that is what a resend is for.
      if (!/already known|known transaction|nonce too low|already imported/i.test(messageOf(error))) throw error;
    }
  }

  /** The receipt's outcome and gas, or undefined while the transaction is not mined. */
  async outcome(hash: Hex): Promise<{ success: boolean; gasUsed: number } | undefined> {
    try {
      const receipt = await this.client.getTransactionReceipt({ hash });
      return { success: receipt.status === "success", gasUsed: Number(receipt.gasUsed) };
    } catch (error) {
      if (error instanceof Error && error.name === "TransactionReceiptNotFoundError") return undefined;
      throw error;
    }
  }

  /** Whether the node holds the transaction (pending or mined). */
  async known(hash: Hex): Promise<boolean> {
    try {
      await this.client.getTransaction({ hash });
      return true;
    } catch (error) {
      if (error instanceof Error && error.name === "TransactionNotFoundError") return false;
      throw error;
    }
  }

  /** Forgets the counted nonce: after a failure the chain's own count is the truth. */
  resetNonce(): void {
    this.nonce = undefined;
  }
}
