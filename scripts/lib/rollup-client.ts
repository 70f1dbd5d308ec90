/**
 * A small client of the rollup from the outside, as a user sees it: send an input to the InputBox from a
 * hardhat account, wait for its verdict through the node's reader (GraphQL on v1, JSON-RPC on v2), and
 * run inspect queries. Used by `npm run input|inspect|replay` and by the end-to-end tests.
 */
import { decodeBatchNotice, isBatchNotice } from "../../common/attestation-batch.ts";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  parseEventLogs,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type WalletClient,
} from "viem";
import { hardhatAccount } from "../../devnode/hardhat-keys.ts";
import { isHex, hexToUtf8, utf8ToHex } from "../../common/hex.ts";
import type { CompletionStatus, InspectEnvelope } from "../../common/wire.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { decodeEvmAdvance, v2InputAddedEvent } from "../../devnode/v2/inputs.ts";

export type { CompletionStatus };

export interface RollupEndpoints {
  rpcUrl: string;
  /** Base URL of the node's query interface (`/inspect`, `/graphql` below it). */
  nodeUrl: string;
  inputBoxAddress: Address;
  dappAddress: Address;
  /** The node's kind: v1 (GraphQL, GET inspect) or v2 (JSON-RPC, POST /inspect/<application>). Default v1. */
  rollups?: "v1" | "v2";
}

/**
 * Who sends an input: a hardhat account number, an address (impersonated on a hardhat chain), or a wallet
 * of one's own (`npm run prove -- --key`: the owner sends its attestation itself).
 */
export type Sender = number | Address | LocalAccount;

export interface SentInput {
  index: number;
  txHash: Hex;
  blockNumber: bigint;
  sender: Address;
}

export interface InputVerdict {
  index: number;
  status: CompletionStatus;
  msgSender: Address;
  blockNumber: number;
  timestamp: number;
  payload: Hex;
  notices: Hex[];
  reports: Hex[];
  vouchers: { destination: Address; payload: Hex }[];
}

export class GraphqlError extends Error {
  override readonly name = "GraphqlError";
}

/** A JSON-RPC error from a v2 node (-31001, or -32001 on older nodes: not found yet). */
export class RpcCallError extends Error {
  override readonly name = "RpcCallError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface V2RpcInput {
  status: string;
  block_number: Hex;
  decoded_data?: { sender: Address; block_timestamp: Hex; payload: Hex };
}

interface V2RpcOutput {
  decoded_data?: { type: string; payload: Hex; destination?: Address };
}

/**
 * The pauses between a verdict's polls: 5 ms, doubling up to 50. A node takes a few tens of ms to run an
 * input; polling every 50 ms from the start added half a poll to every input a test or a replay sends and
 * waits for (issue 51), and polling every 5 ms for a long one would load the node for nothing.
 */
class PollPauses {
  private ms = 5;
  next(): number {
    const now = this.ms;
    this.ms = Math.min(this.ms * 2, 50);
    return now;
  }
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Hex of the UTF-8 JSON of `input`, or `input` itself when it already is hex. */
export function encodePayload(input: unknown): Hex {
  if (typeof input === "string" && isHex(input)) return input;
  return utf8ToHex(typeof input === "string" ? input : JSON.stringify(input));
}

/** A payload as the reader wants to see it: parsed JSON when it is JSON text, else text, else hex. */
export function decodePayload(payload: Hex): unknown {
  // The dapp's binary batch notice, read back (its integers as decimal strings, for JSON).
  if (isBatchNotice(payload)) {
    try {
      return { batch_notice: JSON.parse(JSON.stringify(decodeBatchNotice(payload), (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v))) as unknown };
    } catch {
      return payload;
    }
  }
  let text: string;
  try {
    text = hexToUtf8(payload);
  } catch {
    return payload;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const VERDICT_QUERY = `query Verdict($index: Int!) {
  input(index: $index) {
    index status msgSender blockNumber timestamp payload
    notices { edges { node { payload } } }
    reports { edges { node { payload } } }
    vouchers { edges { node { destination payload } } }
  }
}`;

interface VerdictData {
  input: {
    index: number;
    status: CompletionStatus;
    msgSender: Address;
    /** v1 BigInt: a decimal string. */
    blockNumber: string;
    timestamp: string;
    payload: Hex;
    notices: { edges: { node: { payload: Hex } }[] };
    reports: { edges: { node: { payload: Hex } }[] };
    vouchers: { edges: { node: { destination: Address; payload: Hex } }[] };
  };
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * How long an estimate of the fees is used. viem's estimate leaves the base fee 20% of room, and an EIP-1559
 * base fee rises at most 12.5% a block: a second is at most one block on Ethereum, and on the local chain,
 * which mines a block per input far under its target, the base fee only falls.
 */
const FEES_FRESH_MS = 1_000;

export class RollupClient {
  readonly publicClient: PublicClient;
  private readonly accounts = new Map<number, Account>();
  /**
   * One wallet client per sender, kept: viem learns once per client that the chain has no
   * eth_fillTransaction (hardhat), where a new client per input asked again each time.
   */
  private readonly wallets = new Map<string, WalletClient>();
  /** One send at a time per sender: an automining hardhat chain refuses a nonce ahead of the next one. */
  private readonly sending = new Map<string, Promise<unknown>>();
  /** The chain's id, asked once: a signed transaction needs it, and viem asked for it before every one. */
  private chain: Promise<Chain> | undefined;
  /** The fees, asked at most once a second (FEES_FRESH_MS) instead of two more calls before every input. */
  private fees: { at: number; value: Promise<Fees> } | undefined;

  constructor(readonly endpoints: RollupEndpoints) {
    this.publicClient = createPublicClient({ transport: http(endpoints.rpcUrl) });
  }

  /** Hardhat account `n` (from the well-known test mnemonic). */
  account(n: number): Account {
    let account = this.accounts.get(n);
    if (account === undefined) {
      account = hardhatAccount(n);
      this.accounts.set(n, account);
    }
    return account;
  }

  /**
   * Sends `addInput(dapp, payload)` and waits for it to be mined; `input` is hex or JSON-encoded.
   * Concurrent calls from the same sender are sent one after the other, in call order.
   */
  addInput(input: unknown, sender: Sender = 0): Promise<SentInput> {
    const key = (typeof sender === "object" ? sender.address : String(sender)).toLowerCase();
    const previous = this.sending.get(key) ?? Promise.resolve();
    const next = previous.then(
      () => this.sendNow(input, sender),
      () => this.sendNow(input, sender),
    );
    this.sending.set(key, next);
    return next;
  }

  private wallet(key: string, account?: Account): WalletClient {
    let wallet = this.wallets.get(key);
    if (wallet === undefined) {
      wallet = createWalletClient({ transport: http(this.endpoints.rpcUrl), ...(account === undefined ? {} : { account }) });
      this.wallets.set(key, wallet);
    }
    return wallet;
  }

  private chainOf(): Promise<Chain> {
    this.chain ??= this.publicClient.getChainId().then(
      (id) => defineChain({ id, name: `chain ${id}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [this.endpoints.rpcUrl] } } }),
      (error: unknown) => {
        this.chain = undefined;
        throw error;
      },
    );
    return this.chain;
  }

  private feesNow(): Promise<Fees> {
    const now = Date.now();
    if (this.fees === undefined || now - this.fees.at >= FEES_FRESH_MS) {
      const value = this.publicClient.estimateFeesPerGas().then(({ maxFeePerGas, maxPriorityFeePerGas }) => ({ maxFeePerGas, maxPriorityFeePerGas }));
      const fees = { at: now, value };
      this.fees = fees;
      value.catch(() => {
        if (this.fees === fees) this.fees = undefined;
      });
    }
    return this.fees.value;
  }

  private async sendNow(input: unknown, sender: Sender): Promise<SentInput> {
    const call = {
      ...(await this.feesNow()),
      address: this.endpoints.inputBoxAddress,
      abi: inputBoxAbi,
      functionName: "addInput",
      args: [this.endpoints.dappAddress, encodePayload(input)],
    } as const;
    let hash: Hex;
    if (typeof sender === "number" || typeof sender === "object") {
      const account = typeof sender === "number" ? this.account(sender) : sender;
      hash = await this.wallet(account.address.toLowerCase(), account).writeContract({ ...call, chain: await this.chainOf(), account });
    } else {
      // Any address can send on a hardhat chain: impersonate it (the devnode does the same on re-submission).
      const test = createTestClient({ mode: "hardhat", transport: http(this.endpoints.rpcUrl) });
      await test.impersonateAccount({ address: sender });
      await test.setBalance({ address: sender, value: 10n ** 18n });
      // The node signs for it: no chain given, so viem does not ask for the chain's id to compare.
      hash = await this.wallet(sender.toLowerCase()).writeContract({ ...call, chain: null, account: sender });
    }
    const receipt = await this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error(`addInput transaction ${hash} reverted`);
    if (this.endpoints.rollups === "v2") {
      const [event] = parseEventLogs({ abi: [v2InputAddedEvent], logs: receipt.logs });
      if (event === undefined) throw await this.noInputAdded(hash);
      const { metadata } = decodeEvmAdvance(event.args.input);
      return { index: Number(event.args.index), txHash: hash, blockNumber: receipt.blockNumber, sender: metadata.msg_sender };
    }
    const [event] = parseEventLogs({ abi: inputBoxAbi, eventName: "InputAdded", logs: receipt.logs });
    if (event === undefined) throw await this.noInputAdded(hash);
    return { index: Number(event.args.inputIndex), txHash: hash, blockNumber: receipt.blockNumber, sender: event.args.sender };
  }

  /**
   * A transaction that added no input: most often the scripts and the stack disagree on the Rollups
   * version (a v1 InputBox address on a v2 chain holds no code, and a call to it succeeds doing nothing).
   */
  private async noInputAdded(hash: Hex): Promise<Error> {
    const { inputBoxAddress, rpcUrl, rollups } = this.endpoints;
    const code = await this.publicClient.getCode({ address: inputBoxAddress });
    if (code === undefined || code === "0x") {
      const hint = rollups === "v1" ? "a Rollups v2 stack (npm start -- --rollups v2)? Run the scripts with ROLLUPS=v2" : "a Rollups v1 stack? Leave ROLLUPS unset";
      return new Error(`no InputBox at ${inputBoxAddress} on ${rpcUrl} (ROLLUPS=${rollups}): transaction ${hash} added nothing. Is it ${hint}, or set INPUTBOX_ADDRESS`);
    }
    return new Error(`no InputAdded event in transaction ${hash}: the contract at ${inputBoxAddress} is not a Rollups ${rollups} InputBox (set ROLLUPS or INPUTBOX_ADDRESS)`);
  }

  /** One JSON-RPC call to a v2 node; a JSON-RPC error throws with its code in the message. */
  async rpc<T>(method: string, params: Record<string, unknown>): Promise<T> {
    const response = await fetch(`${this.endpoints.nodeUrl}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    });
    if (response.status !== 200) throw new Error(`${method} answered HTTP ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error !== undefined) throw new RpcCallError(body.error.code, `${method}: ${body.error.message} (${body.error.code})`);
    return body.result as T;
  }

  /** A v2 node's verdict on input `index` once processed, in the v1 shape; undefined while it is not. */
  private async v2Verdict(index: number): Promise<InputVerdict | undefined> {
    const application = this.endpoints.dappAddress;
    const at = { application, input_index: `0x${index.toString(16)}` };
    const { data: input } = await this.rpc<{ data: V2RpcInput }>("cartesi_getInput", at);
    if (input.status === "NONE") return undefined;
    // Every output and report of one input fits in the node's largest page.
    const page = { ...at, limit: 10_000 };
    const outputs = (await this.rpc<{ data: V2RpcOutput[] }>("cartesi_listOutputs", page)).data;
    const reports = (await this.rpc<{ data: { raw_data: Hex }[] }>("cartesi_listReports", page)).data;
    const decoded = input.decoded_data;
    return {
      index,
      status: (input.status === "NONE" ? "UNPROCESSED" : input.status) as CompletionStatus,
      msgSender: decoded?.sender ?? ("0x" as Address),
      blockNumber: Number(input.block_number),
      timestamp: Number(decoded?.block_timestamp ?? "0x0"),
      payload: decoded?.payload ?? "0x",
      notices: outputs.flatMap((o) => (o.decoded_data?.type === "Notice" ? [o.decoded_data.payload] : [])),
      reports: reports.map((r) => r.raw_data),
      vouchers: outputs.flatMap((o) => (o.decoded_data?.type === "Voucher" && o.decoded_data.destination !== undefined ? [{ destination: o.decoded_data.destination, payload: o.decoded_data.payload }] : [])),
    };
  }

  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const response = await fetch(`${this.endpoints.nodeUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T | null; errors?: { message: string }[] };
    if (body.errors !== undefined && body.errors.length > 0) {
      throw new GraphqlError(body.errors.map((e) => e.message).join("; "));
    }
    if (body.data === undefined || body.data === null) throw new GraphqlError(`no data (HTTP ${response.status})`);
    return body.data;
  }

  /** Polls GraphQL until input `index` has left UNPROCESSED. */
  async waitForVerdict(index: number, timeoutMs = 30_000): Promise<InputVerdict> {
    const deadline = Date.now() + timeoutMs;
    const pauses = new PollPauses();
    let last = "not seen by the node yet";
    for (;;) {
      if (this.endpoints.rollups === "v2") {
        try {
          const verdict = await this.v2Verdict(index);
          if (verdict !== undefined) return verdict;
          last = "NONE";
        } catch (error) {
          if (!(error instanceof RpcCallError)) throw error;
          last = error.message;
        }
        if (Date.now() > deadline) throw new Error(`input ${index} has no verdict after ${timeoutMs} ms (${last})`);
        await pause(pauses.next());
        continue;
      }
      try {
        const { input } = await this.graphql<VerdictData>(VERDICT_QUERY, { index });
        if (input.status !== "UNPROCESSED") {
          return {
            index: input.index,
            status: input.status,
            msgSender: input.msgSender,
            blockNumber: Number(input.blockNumber),
            timestamp: Number(input.timestamp),
            payload: input.payload,
            notices: input.notices.edges.map((e) => e.node.payload),
            reports: input.reports.edges.map((e) => e.node.payload),
            vouchers: input.vouchers.edges.map((e) => e.node),
          };
        }
        last = "UNPROCESSED";
      } catch (error) {
        if (!(error instanceof GraphqlError)) throw error;
        last = error.message;
      }
      if (Date.now() > deadline) throw new Error(`input ${index} has no verdict after ${timeoutMs} ms (${last})`);
      await pause(pauses.next());
    }
  }

  /** Sends an input and waits for its verdict. */
  async send(input: unknown, sender: Sender = 0, timeoutMs?: number): Promise<InputVerdict & { txHash: Hex }> {
    const sent = await this.addInput(input, sender);
    return { ...(await this.waitForVerdict(sent.index, timeoutMs)), txHash: sent.txHash };
  }

  /**
   * Runs an inspect query: GET with the percent-encoded JSON in the path (the specification's form), or
   * POST with the raw JSON body. A non-200 answer throws with the node's message.
   */
  async inspect(query: unknown, method: "GET" | "POST" = "GET"): Promise<InspectEnvelope> {
    const text = typeof query === "string" ? query : JSON.stringify(query);
    if (this.endpoints.rollups === "v2") return this.inspectV2(text);
    const base = `${this.endpoints.nodeUrl}/inspect`;
    const response =
      method === "GET"
        ? await fetch(`${base}/${encodeURIComponent(text)}`)
        : await fetch(base, { method: "POST", body: text, headers: { "content-type": "application/json" } });
    if (response.status !== 200) throw new Error(`inspect answered HTTP ${response.status}: ${await response.text()}`);
    return (await response.json()) as InspectEnvelope;
  }

  /** A v2 inspect (`POST /inspect/<application>`, the query as the body), answered in the v1 envelope. */
  private async inspectV2(text: string): Promise<InspectEnvelope> {
    const response = await fetch(`${this.endpoints.nodeUrl}/inspect/${this.endpoints.dappAddress}`, { method: "POST", body: text });
    if (response.status !== 200) throw new Error(`inspect answered HTTP ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { status: string; exception_data?: Hex; error?: string; reports: { payload: Hex }[] | null; processed_input_count: number };
    const accepted = body.status === "Accepted";
    return {
      status: accepted ? "Accepted" : body.status === "Rejected" ? "Rejected" : "Exception",
      exception_payload: accepted ? null : (body.exception_data ?? null),
      reports: body.reports ?? [],
      processed_input_count: body.processed_input_count,
    };
  }
}
