/**
 * The v2 node's read interface, JSON-RPC 2.0 at `POST /rpc`: the newest node's methods and error codes
 * (an unknown item -31001, an unknown application -31002, bad parameters -32602), with the objects in the
 * shapes the 2.2.0 contracts' clients read (@cartesi/rpc 2.0.0-alpha.20, @cartesi/viem 2.0.0-alpha.29):
 * every number a lower-case hex quantity, addresses checksummed, lists as `{data, pagination}`.
 * docs/rollups-v2.md lists the methods and what a devnode leaves empty (no machine hash, no PRT).
 */
import { decodeFunctionData, encodeFunctionData, getAddress, numberToHex, type Address, type Hex } from "viem";
import type { CompletionStatus } from "../../common/wire.ts";
import type { RollupModel } from "../model.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Abi } from "./contracts.ts";
import type { V2Epoch, V2EpochManager } from "./epochs.ts";
import type { Page, RangeFilter, V2Input, V2Output, V2Report, V2Store } from "./record.ts";
import { discoverDocument, METHOD_DOCS } from "./rpc-discover.ts";
import { DEVNODE_V2_VERSION } from "./rpc-version.ts";

export { DEVNODE_V2_VERSION } from "./rpc-version.ts";

export interface RpcContext {
  store: V2Store;
  epochs: V2EpochManager;
  model: RollupModel;
  applicationName: string;
  chainId: number;
}

/** A JSON-RPC error the method raises; the server puts it in the response. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The node's error codes (internal/jsonrpc in cartesi/rollups-node). */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  invalidBatch: -32040,
  resourceNotFound: -31001,
  applicationNotFound: -31002,
  batchListItemLimit: -31004,
} as const;

const invalid = (message = "Invalid parameters"): RpcError => new RpcError(RPC_ERRORS.invalidParams, message);
const notFound = (what: string): RpcError => new RpcError(RPC_ERRORS.resourceNotFound, `${what} not found`);

type Params = Record<string, unknown>;

/** Every method served: the dispatch below answers each, and `rpc.discover` lists exactly these. */
export const SERVED_METHODS: readonly string[] = ["rpc.discover", ...Object.keys(METHOD_DOCS)];

/** Positional parameters map onto the node's parameter structs in field order. */
const POSITIONS: Record<string, readonly string[]> = Object.fromEntries(Object.entries(METHOD_DOCS).map(([name, doc]) => [name, doc.params.map((p) => p.name)]));

/** The `limit` a list request asks for, as the node counts it against a batch's budget (0 or none: 50). */
export function listLimitOf(method: string, rawParams: unknown): number {
  if (!method.startsWith("cartesi_list")) return 0;
  let limit: unknown;
  if (Array.isArray(rawParams)) limit = rawParams[(POSITIONS[method] ?? []).indexOf("limit")];
  else if (rawParams !== null && typeof rawParams === "object") limit = (rawParams as Params).limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) return 50;
  return Math.min(limit, 10_000);
}

function paramsOf(method: string, raw: unknown): Params {
  if (raw === undefined || raw === null) return {};
  if (Array.isArray(raw)) {
    const names = POSITIONS[method] ?? [];
    if (raw.length > names.length) throw invalid();
    return Object.fromEntries(raw.map((value: unknown, i) => [names[i] as string, value]));
  }
  if (typeof raw === "object") return raw as Params;
  throw invalid();
}

const quantity = (value: number | bigint): Hex => numberToHex(value);

function parseIndex(params: Params, name: string, required: true): number;
function parseIndex(params: Params, name: string, required: false): number | undefined;
function parseIndex(params: Params, name: string, required: boolean): number | undefined {
  const value = params[name];
  if (value === undefined || value === null) {
    if (required) throw invalid(`invalid ${name}: expected hex encoded value`);
    return undefined;
  }
  if (typeof value !== "string" || !/^0[xX][0-9a-fA-F]{1,16}$/.test(value)) throw invalid(`invalid ${name}: expected hex encoded value`);
  const parsed = Number.parseInt(value.slice(2), 16);
  if (!Number.isSafeInteger(parsed)) throw invalid(`invalid ${name}: out of range`);
  return parsed;
}

function pageOf(params: Params): Page {
  const { limit, offset, descending } = params;
  if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit))) throw invalid("invalid limit: expected a number");
  if (offset !== undefined && (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0)) throw invalid("invalid offset: expected a number");
  if (descending !== undefined && typeof descending !== "boolean") throw invalid("invalid descending: expected a boolean");
  // The node's rule: none or <= 0 is 50, more than 10,000 is 10,000; the answer says which limit applied.
  const effective = limit === undefined || limit <= 0 ? 50 : Math.min(limit, 10_000);
  return { limit: effective, offset: offset ?? 0, descending: descending ?? false };
}

function list<T>(page: Page, result: { items: T[]; total: number }, shape: (item: T) => unknown): unknown {
  return { data: result.items.map(shape), pagination: { total_count: result.total, limit: page.limit, offset: page.offset } };
}


function addressParam(params: Params, name: string): Address | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw invalid(`invalid ${name}: expected an address`);
  return value as Address;
}

const STATUS: Record<CompletionStatus, string> = {
  UNPROCESSED: "NONE",
  ACCEPTED: "ACCEPTED",
  REJECTED: "REJECTED",
  EXCEPTION: "EXCEPTION",
  MACHINE_HALTED: "MACHINE_HALTED",
  CYCLE_LIMIT_EXCEEDED: "CYCLE_LIMIT_EXCEEDED",
  TIME_LIMIT_EXCEEDED: "TIME_LIMIT_EXCEEDED",
  PAYLOAD_LENGTH_LIMIT_EXCEEDED: "PAYLOAD_LENGTH_LIMIT_EXCEEDED",
};

/** The devnode keeps no insertion times: a record's time is its block's. */
const timeOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

export class V2Rpc {
  constructor(private readonly ctx: RpcContext) {}

  /** Runs one method; throws RpcError for what the caller must answer with an error. */
  call(method: string, rawParams: unknown): unknown {
    if (!SERVED_METHODS.includes(method)) throw new RpcError(RPC_ERRORS.methodNotFound, "Method not found");
    // Methods without parameters ignore whatever is sent, as the node does.
    const params = POSITIONS[method]?.length === 0 || method === "rpc.discover" ? {} : paramsOf(method, rawParams);
    switch (method) {
      case "rpc.discover":
        return this.discover();
      case "cartesi_getChainId":
        return { data: quantity(this.ctx.chainId) };
      case "cartesi_getNodeVersion":
        return { data: DEVNODE_V2_VERSION };
      case "cartesi_getNodeInfo":
        return { data: { chain_id: quantity(this.ctx.chainId), version: DEVNODE_V2_VERSION, default_block: "LATEST" } };
      case "cartesi_listApplications": {
        const page = pageOf(params);
        const all = [this.application()];
        const items = (page.descending ? all.reverse() : all).slice(page.offset, page.offset + page.limit);
        return { data: items, pagination: { total_count: all.length, limit: page.limit, offset: page.offset } };
      }
      case "cartesi_getApplication":
        this.app(params);
        return { data: this.application() };
      case "cartesi_listEpochs": {
        this.app(params);
        const page = pageOf(params);
        const statuses = statusesOf(params["status"]);
        const range = rangeOf(params);
        let epochs = this.ctx.epochs.epochs().filter((e) => e.index >= range.from && e.index <= range.to);
        if (statuses !== undefined) epochs = epochs.filter((e) => statuses.includes(e.status));
        if (page.descending) epochs.reverse();
        return list(page, { items: epochs.slice(page.offset, page.offset + page.limit), total: epochs.length }, (e) => this.epoch(e));
      }
      case "cartesi_getEpochByVirtualIndex": {
        this.app(params);
        const virtual = parseIndex(params, "virtual_index", true);
        const epoch = this.ctx.epochs.epochs().find((e) => e.virtualIndex === virtual);
        if (epoch === undefined) throw notFound("Epoch");
        return { data: this.epoch(epoch) };
      }
      case "cartesi_getEpoch": {
        this.app(params);
        const [epoch] = this.ctx.epochs.epochs(parseIndex(params, "epoch_index", true));
        if (epoch === undefined) throw notFound("Epoch");
        return { data: this.epoch(epoch) };
      }
      case "cartesi_getLastAcceptedEpochIndex": {
        this.app(params);
        const accepted = this.ctx.epochs.epochs().filter((e) => e.status === "CLAIM_ACCEPTED");
        const last = accepted[accepted.length - 1];
        if (last === undefined) throw notFound("Epoch");
        return { data: quantity(last.index) };
      }
      case "cartesi_listInputs": {
        this.app(params);
        const page = pageOf(params);
        const filter = { ...this.epochFilter(params), ...optional("sender", addressParam(params, "sender")) };
        return list(page, this.inRange(this.ctx.store.listInputs(filter, ALL), params, page, (i) => i.index), (input) => this.input(input));
      }
      case "cartesi_getInput": {
        this.app(params);
        const input = this.ctx.store.v2Input(parseIndex(params, "input_index", true));
        if (input === undefined) throw notFound("Input");
        return { data: this.input(input) };
      }
      case "cartesi_getProcessedInputCount":
        this.app(params);
        return { data: quantity(this.ctx.model.processedInputCount) };
      // A devnode does not follow vouchers executed on chain: none is executed, and every voucher of a
      // claimed epoch can be.
      case "cartesi_getExecutedOutputCount":
        this.app(params);
        return { data: quantity(0) };
      case "cartesi_getPendingExecutableOutputCount": {
        this.app(params);
        const vouchers = VOUCHER_SELECTORS.map((selector) => this.ctx.store.listOutputs({ selector }, ALL).items).flat();
        const executable = vouchers.filter((o) => this.proofOf(o) !== null);
        return { data: quantity(executable.length) };
      }
      case "cartesi_listOutputs": {
        this.app(params);
        const page = pageOf(params);
        const base = { ...this.rangeFilter(params), ...optional("destination", addressParam(params, "voucher_address")) };
        const executed = params["executed"];
        if (executed !== undefined && executed !== null && typeof executed !== "boolean") throw invalid();
        // None is executed on a devnode: `executed: true` lists nothing.
        const selectors = selectorsOf(params);
        const all = executed === true ? [] : (selectors ?? [undefined]).flatMap((selector) => this.ctx.store.listOutputs({ ...base, ...optional("selector", selector) }, ALL).items);
        all.sort((a, b) => a.index - b.index);
        return list(page, this.inRange({ items: all }, params, page, (o) => o.index), (output) => this.output(output));
      }
      case "cartesi_getOutput": {
        this.app(params);
        const output = this.ctx.store.getV2Output(parseIndex(params, "output_index", true));
        if (output === undefined) throw notFound("Output");
        return { data: this.output(output) };
      }
      case "cartesi_listReports": {
        this.app(params);
        const page = pageOf(params);
        return list(page, this.inRange(this.ctx.store.listReports(this.rangeFilter(params), ALL), params, page, (r) => r.index), (report) => this.report(report));
      }
      case "cartesi_getReport": {
        this.app(params);
        const report = this.ctx.store.getReport(parseIndex(params, "report_index", true));
        if (report === undefined) throw notFound("Report");
        return { data: this.report(report) };
      }
      // An Authority application has no tournaments and no withdrawals: those methods answer as for an
      // application without any.
      case "cartesi_listWithdrawals":
      case "cartesi_listTournaments":
      case "cartesi_listCommitments":
      case "cartesi_listMatches":
      case "cartesi_listMatchAdvances":
      case "cartesi_listBondEvents": {
        this.app(params);
        const page = pageOf(params);
        return list(page, { items: [], total: 0 }, (x) => x);
      }
      case "cartesi_getWithdrawal":
      case "cartesi_getTournament":
      case "cartesi_getCommitment":
      case "cartesi_getMatch":
      case "cartesi_getMatchAdvance":
      case "cartesi_getMatchAdvanced":
      case "cartesi_getBondEvent":
        this.app(params);
        throw notFound(NOT_FOUND_NAMES[method] ?? "Item");
      default:
        throw new RpcError(RPC_ERRORS.methodNotFound, "Method not found");
    }
  }

  /** Keeps the items whose index lies in `from`..`to`, then pages them (the store's page is the whole list). */
  private inRange<T>(result: { items: T[] }, params: Params, page: Page, indexOf: (item: T) => number): { items: T[]; total: number } {
    const range = rangeOf(params);
    const kept = result.items.filter((item) => indexOf(item) >= range.from && indexOf(item) <= range.to);
    if (page.descending) kept.reverse();
    return { items: kept.slice(page.offset, page.offset + page.limit), total: kept.length };
  }

  /** An output's proof siblings once its epoch is claimed, else null. */
  private proofOf(output: V2Output): Hex[] | null {
    const { store, epochs } = this.ctx;
    const input = store.getInput(output.inputIndex);
    const epochIndex = input === undefined ? 0 : epochs.epochIndexOfBlock(input.blockNumber);
    const claimed = store.claimOf(epochIndex) !== undefined ? store.epochInputs(epochIndex) : null;
    return claimed === null ? null : store.siblingsAt(output.index, store.outputsBefore(claimed.upper));
  }

  /** The application a request names, by name or address; anything else is an error. */
  private app(params: Params): void {
    const id = params["application"];
    if (typeof id !== "string" || !(/^[a-z0-9_-]{3,}$/.test(id) || /^0x[0-9a-fA-F]{40}$/.test(id))) {
      throw invalid("Invalid application identifier: invalid application name");
    }
    if (!this.names(id)) throw new RpcError(RPC_ERRORS.applicationNotFound, "Application not found");
  }

  /** Whether `id` (a name or an address, any case) is the application this node runs. */
  names(id: string): boolean {
    const state = this.ctx.epochs.applicationState;
    return id === this.ctx.applicationName || id.toLowerCase() === state.application.toLowerCase();
  }

  private epochFilter(params: Params): RangeFilter {
    const epochIndex = parseIndex(params, "epoch_index", false);
    if (epochIndex === undefined) return {};
    // An epoch without inputs holds nothing.
    return { inputs: this.ctx.store.epochInputs(epochIndex) ?? { lower: 0, upper: 0 } };
  }

  private rangeFilter(params: Params): RangeFilter {
    const inputIndex = parseIndex(params, "input_index", false);
    const byEpoch = this.epochFilter(params);
    if (inputIndex === undefined) return byEpoch;
    if (byEpoch.inputs !== undefined && (inputIndex < byEpoch.inputs.lower || inputIndex >= byEpoch.inputs.upper)) {
      return { inputs: { lower: 0, upper: 0 } };
    }
    return { inputIndex };
  }

  private application(): unknown {
    const state = this.ctx.epochs.applicationState;
    const head = quantity(Math.max(0, Number(this.ctx.store.nextBlock() ?? 1n) - 1));
    const at = new Date(0).toISOString();
    const zero = quantity(0);
    return {
      name: this.ctx.applicationName,
      iapplication_address: getAddress(state.application),
      iconsensus_address: getAddress(state.authority),
      iinputbox_address: getAddress(state.inputBox),
      template_hash: DEVNODE_TEMPLATE_HASH,
      epoch_length: quantity(state.epochLength),
      data_availability: inputBoxAvailability(getAddress(state.inputBox)),
      consensus_type: "AUTHORITY",
      state: "ENABLED",
      reason: null,
      iinputbox_block: zero,
      last_epoch_check_block: head,
      last_input_check_block: head,
      last_output_check_block: head,
      last_tournament_check_block: zero,
      processed_inputs: quantity(this.ctx.model.processedInputCount),
      created_at: at,
      updated_at: at,
      // The node's machine limits; a devnode runs the dapp as a process and enforces none of them.
      execution_parameters: {
        snapshot_policy: "NONE",
        advance_inc_cycles: zero,
        advance_max_cycles: zero,
        inspect_inc_cycles: zero,
        inspect_max_cycles: zero,
        advance_inc_deadline: zero,
        advance_max_deadline: zero,
        inspect_inc_deadline: zero,
        inspect_max_deadline: zero,
        load_deadline: zero,
        store_deadline: zero,
        fast_deadline: zero,
        max_concurrent_inspects: 1,
        created_at: at,
        updated_at: at,
      },
    };
  }

  private epoch(e: V2Epoch): unknown {
    const at = timeOf(Math.floor((e.claim?.claimedAt ?? 0) / 1000));
    return {
      index: quantity(e.index),
      first_block: quantity(e.firstBlock),
      last_block: quantity(e.lastBlock),
      input_index_lower_bound: quantity(e.lower),
      input_index_upper_bound: quantity(e.upper),
      machine_hash: null,
      outputs_merkle_root: e.outputsRoot,
      outputs_merkle_proof: null,
      commitment: null,
      commitment_proof: null,
      claim_transaction_hash: e.claim?.claimTx ?? null,
      tournament_address: null,
      status: e.status,
      virtual_index: quantity(e.virtualIndex),
      created_at: at,
      updated_at: at,
    };
  }

  private input(input: V2Input): unknown {
    const state = this.ctx.epochs.applicationState;
    const args = [
      BigInt(this.ctx.chainId),
      getAddress(state.application),
      getAddress(input.msgSender),
      BigInt(input.blockNumber),
      BigInt(input.timestamp),
      BigInt(input.prevRandao),
      BigInt(input.index),
      input.payload,
    ] as const;
    const at = timeOf(input.timestamp);
    return {
      epoch_index: quantity(this.ctx.epochs.epochIndexOfBlock(input.blockNumber)),
      index: quantity(input.index),
      block_number: quantity(input.blockNumber),
      raw_data: encodeFunctionData({ abi: v2Abi("Inputs"), functionName: "EvmAdvance", args }),
      decoded_data: {
        chain_id: quantity(this.ctx.chainId),
        application_contract: args[1],
        sender: args[2],
        block_number: quantity(input.blockNumber),
        block_timestamp: quantity(input.timestamp),
        prev_randao: quantity(BigInt(input.prevRandao)),
        index: quantity(input.index),
        payload: input.payload,
      },
      status: STATUS[input.status],
      machine_hash: null,
      outputs_hash: input.outputsHash,
      transaction_reference: input.txHash,
      created_at: at,
      updated_at: at,
    };
  }

  private output(output: V2Output): unknown {
    const { store, epochs } = this.ctx;
    const input = store.getInput(output.inputIndex);
    const epochIndex = input === undefined ? 0 : epochs.epochIndexOfBlock(input.blockNumber);
    // A proof exists once the epoch's claim is on chain: against the tree as it stood at the epoch's end.
    const siblings = this.proofOf(output);
    const at = timeOf(input?.timestamp ?? 0);
    return {
      epoch_index: quantity(epochIndex),
      input_index: quantity(output.inputIndex),
      index: quantity(output.index),
      raw_data: output.raw,
      ...optional("decoded_data", decodeOutput(output.raw)),
      hash: output.hash,
      output_hashes_siblings: siblings,
      execution_transaction_hash: null,
      created_at: at,
      updated_at: at,
    };
  }

  private report(report: V2Report): unknown {
    const input = this.ctx.store.getInput(report.inputIndex);
    const at = timeOf(input?.timestamp ?? 0);
    return {
      epoch_index: quantity(input === undefined ? 0 : this.ctx.epochs.epochIndexOfBlock(input.blockNumber)),
      input_index: quantity(report.inputIndex),
      index: quantity(report.index),
      raw_data: report.payload,
      created_at: at,
      updated_at: at,
    };
  }

  private discover(): unknown {
    return discoverDocument();
  }

}

/** Every item at once: the range filter and the page are applied over the whole list. */
const ALL: Page = { limit: Number.MAX_SAFE_INTEGER, offset: 0, descending: false };

/** The 4-byte selectors of the voucher outputs (a notice's is 0xc258d6e5). */
const VOUCHER_SELECTORS = ["237a816f", "10321e8b"];

const NOT_FOUND_NAMES: Record<string, string> = {
  cartesi_getWithdrawal: "Withdrawal",
  cartesi_getTournament: "Tournament",
  cartesi_getCommitment: "Commitment",
  cartesi_getMatch: "Match",
  cartesi_getMatchAdvance: "Match advanced",
  cartesi_getMatchAdvanced: "Match advanced",
  cartesi_getBondEvent: "Bond event",
};

const EPOCH_STATUSES = ["OPEN", "CLOSED", "INPUTS_PROCESSED", "CLAIM_COMPUTED", "CLAIM_SUBMITTED", "CLAIM_ACCEPTED", "CLAIM_REJECTED"];

/** `status`: one epoch status or a non-empty list of them. */
function statusesOf(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw invalid("Invalid epoch status: expected at least one status");
  for (const status of list) {
    if (typeof status !== "string" || !EPOCH_STATUSES.includes(status)) throw invalid(`Invalid epoch status: invalid value '${String(status)}' for EpochStatus enum`);
  }
  return list as string[];
}

/** `output_type`: one selector or a non-empty list of them, without the 0x. */
function selectorsOf(params: Params): string[] | undefined {
  const value = params["output_type"];
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw invalid("Invalid output type: expected at least one selector");
  return list.map((selector: unknown) => {
    if (typeof selector !== "string" || !/^(0x)?[0-9a-fA-F]{8}$/.test(selector)) throw invalid("Invalid output type: invalid output type: expected exactly 4 bytes");
    return selector.replace(/^0x/, "").toLowerCase();
  });
}

/** `from` and `to`, inclusive; from after to is refused. */
function rangeOf(params: Params): { from: number; to: number } {
  const from = parseIndex(params, "from", false) ?? 0;
  const to = parseIndex(params, "to", false) ?? Number.MAX_SAFE_INTEGER;
  if (from > to) throw invalid("invalid index range: from must be less than or equal to to");
  return { from, to };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The output's call decoded as the node decodes it; undefined (key left out) when it is none of the three. */
function decodeOutput(raw: Hex): Record<string, unknown> | undefined {
  try {
    const decoded = decodeFunctionData({ abi: v2Abi("Outputs"), data: raw });
    switch (decoded.functionName) {
      case "Notice": {
        const [payload] = decoded.args as readonly [Hex];
        return { type: "Notice", payload };
      }
      case "Voucher": {
        const [destination, value, payload] = decoded.args as readonly [Address, bigint, Hex];
        return { type: "Voucher", destination: getAddress(destination), value: quantity(value), payload };
      }
      case "DelegateCallVoucher": {
        const [destination, payload] = decoded.args as readonly [Address, Hex];
        return { type: "DelegateCallVoucher", destination: getAddress(destination), payload };
      }
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}
