/**
 * The publisher's side of the chain: which batches the registry already holds (so nothing is sent for
 * them), the batch call (`recordMany`) with its gas, and transactions signed here and kept before they are
 * broadcast, so that a restart can send the same bytes again instead of a second one.
 */
import { createPublicClient, defineChain, encodeFunctionData, http, keccak256, type Abi, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { messageOf } from "../../common/errors.ts";
import { AttestationContracts } from "../onchain.ts";
import type { OutputValidityProof } from "../../common/wire.ts";
import type { PublishBatch } from "./store.ts";

/** A proof as the node serves it: v1's {validity, context}, v2's {outputIndex, outputHashesSiblings}. */
export type StoredProof = { validity: OutputValidityProof; context: Hex } | { outputIndex: number; outputHashesSiblings: Hex[] };

export interface PublisherChainOptions {
  rpcUrl: string;
  chainId: number;
  rollups: "v1" | "v2";
  privateKey: Hex;
  contracts: { registry: Address; gate: Address };
}

export interface SignedTx {
  hash: Hex;
  raw: Hex;
  nonce: number;
  gasLimit: number;
}

/** A proof as the contracts take it (viem: integers as bigint). */
export function proofArgument(proof: StoredProof): unknown {
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
  private readonly abi: Abi;
  /** What the registry holds, read from the chain. */
  private readonly held: AttestationContracts;
  private nonce: number | undefined;

  constructor(private readonly options: PublisherChainOptions) {
    this.account = privateKeyToAccount(options.privateKey);
    this.chain = defineChain({ id: options.chainId, name: `chain ${options.chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [options.rpcUrl] } } });
    this.client = createPublicClient({ chain: this.chain, transport: http(options.rpcUrl, { timeout: 10_000 }) });
    this.abi = contractArtifact(stackContracts(options.rollups).registry).abi;
    this.held = new AttestationContracts(this.client, options.rollups, options.contracts);
  }

  /** Whether the registry already holds `batch` (someone else may have brought it). */
  holds(batch: PublishBatch): Promise<boolean> {
    return this.held.batchRecorded(batch.inputIndex);
  }

  /** The calldata of `recordMany` for these batches (each with its proof). */
  batchCall(batches: readonly PublishBatch[]): Hex {
    const proofs = batches.map((b) => proofArgument(JSON.parse(b.proof as string) as StoredProof));
    return encodeFunctionData({ abi: this.abi, functionName: "recordMany", args: [batches.map((b) => b.notice), proofs] });
  }

  async estimate(data: Hex): Promise<number> {
    return Number(await this.client.estimateGas({ account: this.account, to: this.options.contracts.registry, data }));
  }

  /** Signs the call at the wallet's next nonce (learned from the chain once, then counted here). */
  async sign(data: Hex, gasLimit: number): Promise<SignedTx> {
    this.nonce ??= await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
    const fees = await this.client.estimateFeesPerGas();
    // Signed by the local key itself: nothing to ask the node but the nonce and the fees.
    const raw = await this.account.signTransaction({
      type: "eip1559",
      chainId: this.options.chainId,
      to: this.options.contracts.registry,
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
