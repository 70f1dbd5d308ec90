/**
 * The write path: `InputBox.addInput(dapp, hex(JSON {type, params}))` from the api's wallet. Sends are
 * serialized through one queue that owns the wallet's next nonce, so concurrent requests never collide;
 * waiting for receipts happens outside the queue. Chain failures become the api's detailed codes.
 */
import inputBoxArtifact from "@cartesi/rollups/export/artifacts/contracts/inputs/InputBox.sol/InputBox.json" with { type: "json" };
import {
  BaseError,
  bytesToHex,
  createPublicClient,
  defineChain,
  encodeFunctionData,
  http,
  hexToBytes,
  HttpRequestError,
  InsufficientFundsError,
  NonceTooLowError,
  parseAbi,
  parseEventLogs,
  serializeTransaction,
  TimeoutError,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionSerializableEIP1559,
  type Transport,
} from "viem";
import { privateKeyToAccount, sign, type PrivateKeyAccount } from "viem/accounts";
import { nativeKeccak } from "../../common/native-keccak.ts";
import { messageOf } from "../../common/errors.ts";
import { ApiError } from "../errors.ts";

/** Only gives the artifact's ABI its static type; the ABI itself comes from the @cartesi/rollups v1 artifact. */
const inputBoxAbiShape = parseAbi([
  "function addInput(address _dapp, bytes _input) returns (bytes32)",
  "event InputAdded(address indexed dapp, uint256 indexed inputIndex, address sender, bytes input)",
]);
const INPUT_BOX_ABI = inputBoxArtifact.abi as unknown as typeof inputBoxAbiShape;
/** The v2 InputBox: the same `addInput` (same selector), another event (`input` is the EvmAdvance it built). */
const V2_INPUT_ADDED = parseAbi(["event InputAdded(address indexed appContract, uint256 indexed index, bytes input)"]);

export interface SubmitterOptions {
  rpcUrl: string;
  chainId: number;
  /** Which InputBox event names the input's index. Default v1. */
  rollups?: "v1" | "v2";
  privateKey: Hex;
  inputBoxAddress: Address;
  dappAddress: Address;
  /** Per-RPC-call timeout. */
  rpcTimeoutMs?: number;
  /** Told each mined transaction's gas and whether it succeeded (the api's metrics). */
  onReceipt?: (gasUsed: bigint, succeeded: boolean) => void;
}

/**
 * How long the fees of the last block are used for the next transactions. A busy api sends tens of
 * transactions a second; asking for fees before each one was two of its six round trips to the chain.
 * maxFeePerGas is twice the base fee (below), which covers five full blocks of rise, so a second-old
 * figure never prices a transaction out; a failed send drops it all the same.
 */
const FEES_TTL_MS = 1_000;

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface SubmittedInput {
  inputIndex: number;
  txHash: Hex;
}

export class InputSubmitter {
  readonly chain: Chain;
  readonly publicClient: PublicClient<Transport, Chain>;
  private readonly account: PrivateKeyAccount;
  /** The tail of the send queue: each send starts after the previous one settled. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Next nonce by our own count; forgotten after any failed send. */
  private nextNonce: number | undefined;
  private fees: { at: number; value: Promise<Fees> } | undefined;

  constructor(private readonly options: SubmitterOptions) {
    this.chain = defineChain({
      id: options.chainId,
      name: `chain-${options.chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [options.rpcUrl] } },
      // The usual wallet margin (ethers' too): room for the base fee to rise while fees are reused.
      fees: { baseFeeMultiplier: 2 },
    });
    // No transport retries: a dead RPC must surface as RPC_UNAVAILABLE quickly, not after backoff.
    const transport = http(options.rpcUrl, { retryCount: 0, timeout: options.rpcTimeoutMs ?? 10_000 });
    this.account = privateKeyToAccount(options.privateKey);
    this.publicClient = createPublicClient({ chain: this.chain, transport });
  }

  get wallet(): Address {
    return this.account.address;
  }

  get rpcUrl(): string {
    return this.options.rpcUrl;
  }

  /** Sends an encoded input (hex of its JSON) and waits for its receipt; returns the index the InputBox gave it. */
  async submitPayload(payload: Hex): Promise<SubmittedInput> {
    const txHash = await this.enqueueSend(payload);
    let receipt;
    try {
      receipt = await this.publicClient.waitForTransactionReceipt({ hash: txHash, timeout: 60_000 });
    } catch (error) {
      throw await classifyChainError(error, this.context(undefined));
    }
    this.options.onReceipt?.(receipt.gasUsed, receipt.status === "success");
    if (receipt.status !== "success") {
      throw new ApiError("INPUT_TX_FAILED", "The input transaction reverted", {
        reason: `transaction ${txHash} reverted`,
        wallet: this.wallet,
      });
    }
    const added = this.inputIndexOf(receipt.logs);
    if (added === undefined) {
      throw new ApiError("INPUT_TX_FAILED", "The transaction emitted no InputAdded event", {
        reason: `no InputAdded event for ${this.options.dappAddress} in ${txHash}`,
        wallet: this.wallet,
      });
    }
    return { inputIndex: added, txHash };
  }

  /** The index the InputBox gave our input, from the receipt's `InputAdded` (v1 or v2 as configured). */
  private inputIndexOf(logs: Parameters<typeof parseEventLogs>[0]["logs"]): number | undefined {
    const { inputBoxAddress, dappAddress } = this.options;
    const fromBox = (address: Address): boolean => address.toLowerCase() === inputBoxAddress.toLowerCase();
    if (this.options.rollups === "v2") {
      const log = parseEventLogs({ abi: V2_INPUT_ADDED, logs }).find((l) => fromBox(l.address) && l.args.appContract.toLowerCase() === dappAddress.toLowerCase());
      return log === undefined ? undefined : Number(log.args.index);
    }
    const log = parseEventLogs({ abi: INPUT_BOX_ABI, logs, eventName: "InputAdded" }).find((l) => fromBox(l.address) && l.args.dapp.toLowerCase() === dappAddress.toLowerCase());
    return log === undefined ? undefined : Number(log.args.inputIndex);
  }

  private enqueueSend(payload: Hex): Promise<Hex> {
    const send = this.queue.then(() => this.sendNow(payload));
    // The queue continues whether this send succeeded or not.
    this.queue = send.catch(() => undefined);
    return send;
  }

  /**
   * One transaction: nonce by our own count (the chain's pending count at start and after any failure),
   * fees of the last second, the gas the chain estimates, signed here and sent raw: three round trips to
   * the chain where viem's writeContract made five. A stale count (another sender used this wallet's
   * nonce) is NONCE_TOO_LOW from the node: counted again from the chain and sent once more, which is safe
   * because a nonce that was too low carried nothing of ours.
   */
  private async sendNow(payload: Hex): Promise<Hex> {
    const data = encodeFunctionData({ abi: INPUT_BOX_ABI, functionName: "addInput", args: [this.options.dappAddress, payload] });
    for (let attempt = 1; ; attempt++) {
      const counted = this.nextNonce !== undefined;
      let nonce: number | undefined;
      try {
        nonce = this.nextNonce ?? (await this.publicClient.getTransactionCount({ address: this.wallet, blockTag: "pending" }));
        const [fees, gas] = await Promise.all([
          this.currentFees(),
          this.publicClient.estimateGas({ account: this.account, to: this.options.inputBoxAddress, data }),
        ]);
        const serializedTransaction = await this.sign({
          type: "eip1559",
          chainId: this.options.chainId,
          to: this.options.inputBoxAddress,
          data,
          gas,
          nonce,
          ...fees,
        });
        const hash = await this.publicClient.sendRawTransaction({ serializedTransaction });
        this.nextNonce = nonce + 1;
        return hash;
      } catch (error) {
        this.nextNonce = undefined;
        this.fees = undefined;
        const mapped = await classifyChainError(error, this.context(nonce));
        if (!(counted && attempt === 1 && mapped.code === "NONCE_TOO_LOW")) throw mapped;
      }
    }
  }

  /**
   * What `account.signTransaction` does, with the transaction's hash taken natively: viem's pure-JS
   * keccak of an 11 KB batch took ~1 ms of the api's one thread per transaction.
   */
  private async sign(transaction: TransactionSerializableEIP1559): Promise<Hex> {
    const unsigned = serializeTransaction(transaction);
    const hash = bytesToHex(nativeKeccak(hexToBytes(unsigned)));
    const signature = await sign({ hash, privateKey: this.options.privateKey });
    return serializeTransaction(transaction, signature);
  }

  /** The fees for the next transaction, asked of the chain at most once a second (FEES_TTL_MS). */
  private currentFees(): Promise<Fees> {
    if (this.fees === undefined || Date.now() - this.fees.at > FEES_TTL_MS) {
      const value = this.publicClient.estimateFeesPerGas({ type: "eip1559" });
      this.fees = { at: Date.now(), value };
    }
    return this.fees.value;
  }

  private context(nonce: number | undefined): ChainErrorContext {
    return { wallet: this.wallet, rpcUrl: this.options.rpcUrl, publicClient: this.publicClient, nonce };
  }
}

export interface ChainErrorContext {
  wallet: Address;
  rpcUrl: string;
  publicClient: PublicClient<Transport, Chain>;
  /** The nonce the failed transaction used, when it got that far. */
  nonce: number | undefined;
}

/**
 * Maps a viem failure to a detailed code. viem's typed errors are checked first (BaseError.walk); node
 * messages differ (geth: "nonce too low", hardhat: "Nonce too low. Expected nonce to be N but got M"),
 * so the message text is checked too.
 */
export async function classifyChainError(error: unknown, context: ChainErrorContext): Promise<ApiError> {
  const { wallet, rpcUrl, publicClient, nonce } = context;
  const text = errorText(error);
  const walks = (match: (e: unknown) => boolean) => error instanceof BaseError && error.walk(match) !== null;
  const funds =
    walks((e) => e instanceof InsufficientFundsError) ||
    /insufficient funds|doesn't have enough funds|exceeds transaction sender account balance/i.test(text);
  const nonceLow = walks((e) => e instanceof NonceTooLowError) || /nonce too low/i.test(text);
  const transport = walks((e) => e instanceof HttpRequestError || e instanceof TimeoutError);
  if (!funds && !nonceLow && (transport || /ECONNREFUSED|fetch failed|socket hang up/i.test(text))) {
    return new ApiError("RPC_UNAVAILABLE", "The blockchain RPC endpoint is not responding", { url: rpcUrl });
  }
  if (funds) {
    const balance = await publicClient.getBalance({ address: wallet }).catch(() => undefined);
    const upfront = /upfront cost is:?\s*(\d+)/i.exec(text)?.[1];
    const required = upfront ?? (await estimateCost(publicClient));
    return new ApiError("INSUFFICIENT_FUNDS", "The api's wallet cannot pay for gas", {
      wallet,
      balance: balance === undefined ? "unknown" : balance.toString(),
      required,
    });
  }
  if (nonceLow) {
    const stated = /expected nonce to be (\d+) but got (\d+)/i.exec(text);
    const expected =
      stated?.[1] !== undefined
        ? Number(stated[1])
        : await publicClient.getTransactionCount({ address: wallet, blockTag: "pending" }).catch(() => -1);
    const received = stated?.[2] !== undefined ? Number(stated[2]) : (nonce ?? -1);
    return new ApiError("NONCE_TOO_LOW", "The transaction nonce was already used", { expected, received });
  }
  const reason = error instanceof BaseError ? error.shortMessage : messageOf(error);
  return new ApiError("INPUT_TX_FAILED", "Submitting the input transaction failed", { reason, wallet });
}

async function estimateCost(publicClient: PublicClient<Transport, Chain>): Promise<string> {
  try {
    const gasPrice = await publicClient.getGasPrice();
    // addInput of a small payload stays well under this: an order of magnitude, not a quote.
    return (gasPrice * 200_000n).toString();
  } catch {
    return "unknown";
  }
}

function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    if (current instanceof BaseError) parts.push(current.shortMessage, current.details ?? "");
    if (current instanceof Error) {
      parts.push(current.message);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.join("\n");
}
