/**
 * A Cartesi Rollups v2 node's reader (ROLLUPS=v2): its JSON-RPC (`POST <node>/rpc`, the 2.2.0 line's
 * methods and shapes, docs/rollups-v2.md). Verdicts come from `cartesi_getInput` and
 * `cartesi_listReports`, the notice feed from `cartesi_listOutputs` filtered to notices, proofs from the
 * outputs' `output_hashes_siblings`. Only standard fields are read, so any 2.2.0-line node works.
 */
import { type Address, type Hex } from "viem";
import type { CompletionStatus } from "../../common/wire.ts";
import type { LatestClaim } from "./chain-reader.ts";
import { networkMessage } from "./inspect.ts";
import { NodeQueryError, NodeUnavailableError, type InputOrigin, type InputVerdict, type NodeReader, type NoticePage, type V2ProvedNotice } from "./node-reader.ts";

/** `Notice(bytes)`'s selector: the output type a notice is listed under. */
const NOTICE_TYPE = "0xc258d6e5";
/** The node's largest page: every output or report of one input fits in it. */
const MAX_PAGE = 10_000;
/** The node's answer to an unknown item (the 2.2.0 line; later nodes use -31001). */
const NOT_FOUND_CODES = new Set([-32001, -31001, -31002]);

interface RpcInput {
  status: string;
  block_number: Hex;
  decoded_data?: { block_timestamp: Hex; payload: Hex; sender: Address } | null;
  transaction_hash?: Hex | null;
}

interface RpcOutput {
  index: Hex;
  input_index: Hex;
  raw_data: Hex;
  decoded_data?: { type: string; payload?: Hex } | null;
  output_hashes_siblings: Hex[] | null;
}

interface RpcEpoch {
  last_block: Hex;
  input_index_lower_bound: Hex;
  input_index_upper_bound: Hex;
  outputs_merkle_root: Hex | null;
  claim_transaction_hash: Hex | null;
}

interface RpcList<T> {
  data: T[];
  pagination: { total_count: number; limit: number; offset: number };
}

const hex = (n: number): Hex => `0x${n.toString(16)}`;

export class JsonRpcReader implements NodeReader {
  readonly url: string;
  private nextId = 1;

  constructor(
    nodeUrl: string,
    private readonly application: Address,
    private readonly timeoutMs = 5_000,
  ) {
    this.url = `${nodeUrl}/rpc`;
  }

  private async call<T>(method: string, params: Record<string, unknown>, timeoutMs = this.timeoutMs): Promise<T> {
    let body: { result?: T; error?: { code: number; message: string } };
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", method, params: { application: this.application, ...params }, id: this.nextId++ }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      body = (await response.json()) as typeof body;
    } catch (error) {
      throw new NodeUnavailableError(networkMessage(error));
    }
    if (body.error !== undefined) {
      // Not found is a state (not read from the chain yet); anything else is the node refusing us.
      if (NOT_FOUND_CODES.has(body.error.code)) throw new NodeQueryError(`${method}: ${body.error.message}`);
      throw new NodeUnavailableError(`${method}: ${body.error.message} (${body.error.code})`);
    }
    return body.result as T;
  }

  private async input(index: number, maxMs?: number): Promise<RpcInput> {
    const { data } = await this.call<{ data: RpcInput }>("cartesi_getInput", { input_index: hex(index) }, bounded(this.timeoutMs, maxMs));
    return data;
  }

  async inputVerdict(index: number, maxMs?: number): Promise<InputVerdict> {
    const input = await this.input(index, maxMs);
    if (input.status === "NONE") return { status: "UNPROCESSED", reports: [] };
    const reports = await this.call<RpcList<{ raw_data: Hex }>>("cartesi_listReports", { input_index: hex(index), limit: MAX_PAGE }, bounded(this.timeoutMs, maxMs));
    return { status: input.status as CompletionStatus, reports: reports.data.map((r) => r.raw_data) };
  }

  /** The cursor is the number of notices read so far: a v2 node numbers outputs for good. */
  async noticesAfter(cursor: string | null, first = 100): Promise<NoticePage> {
    const offset = cursor === null ? 0 : Number(cursor);
    const page = await this.call<RpcList<RpcOutput>>("cartesi_listOutputs", { output_type: NOTICE_TYPE, offset, limit: first });
    const notices = page.data.map((output, i) => ({
      cursor: String(offset + i + 1),
      index: Number(output.index),
      inputIndex: Number(output.input_index),
      payload: output.decoded_data?.payload ?? "0x",
    }));
    const end = offset + notices.length;
    return { notices, endCursor: String(end), hasNextPage: end < page.pagination.total_count };
  }

  async inputPayload(index: number): Promise<Hex> {
    const input = await this.input(index);
    if (input.decoded_data == null) throw new NodeQueryError(`input ${index} has no decoded payload`);
    return input.decoded_data.payload;
  }

  /** Who sent an input, in which block and transaction, at what time. */
  async inputOrigin(index: number): Promise<InputOrigin> {
    const input = await this.input(index);
    if (input.decoded_data == null) throw new NodeQueryError(`input ${index} has no decoded data`);
    return {
      sender: input.decoded_data.sender,
      blockNumber: Number(input.block_number),
      timestamp: Number(input.decoded_data.block_timestamp),
      txid: input.transaction_hash ?? null,
    };
  }

  async inputBlock(index: number): Promise<number> {
    return Number((await this.input(index)).block_number);
  }

  async recentInputTimes(limit: number, maxMs?: number): Promise<number[]> {
    const page = await this.call<RpcList<RpcInput>>("cartesi_listInputs", { descending: true, limit }, bounded(this.timeoutMs, maxMs));
    return page.data
      .map((input) => Number(input.decoded_data?.block_timestamp ?? Number.NaN))
      .filter((t) => Number.isFinite(t))
      .reverse();
  }

  /**
   * The application's latest accepted claim as the node reports it (`cartesi_getLastAcceptedEpochIndex`,
   * then the epoch): its outputs root, its inputs, and the block of the claim's transaction (`blockOf`),
   * or the epoch's last block when the node names no transaction. Null before any claim.
   */
  async latestClaim(blockOf: (tx: Hex) => Promise<number>): Promise<LatestClaim | null> {
    let epochIndex: Hex;
    try {
      epochIndex = (await this.call<{ data: Hex }>("cartesi_getLastAcceptedEpochIndex", {})).data;
    } catch (error) {
      if (error instanceof NodeQueryError) return null;
      throw error;
    }
    const { data: epoch } = await this.call<{ data: RpcEpoch }>("cartesi_getEpoch", { epoch_index: epochIndex });
    if (epoch.outputs_merkle_root === null) return null;
    const tx = epoch.claim_transaction_hash;
    const named = tx !== null && /^0x0*[1-9a-f]/.test(tx);
    return {
      epochHash: epoch.outputs_merkle_root,
      firstIndex: Number(epoch.input_index_lower_bound),
      lastIndex: Number(epoch.input_index_upper_bound) - 1,
      blockNumber: named ? await blockOf(tx) : Number(epoch.last_block),
    };
  }

  /** An input's notices as v2 outputs, each with its siblings once its epoch is claimed. */
  async noticesWithProofs(inputIndex: number): Promise<V2ProvedNotice[]> {
    const page = await this.call<RpcList<RpcOutput>>("cartesi_listOutputs", { input_index: hex(inputIndex), output_type: NOTICE_TYPE, limit: MAX_PAGE });
    return page.data.map((output) => ({
      index: Number(output.index),
      payload: output.decoded_data?.payload ?? "0x",
      output: output.raw_data,
      siblings: output.output_hashes_siblings,
    }));
  }
}

function bounded(timeoutMs: number, maxMs: number | undefined): number {
  return Math.max(1, Math.min(timeoutMs, maxMs ?? timeoutMs));
}
