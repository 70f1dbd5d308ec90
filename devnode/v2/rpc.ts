/**
 * The v2 node's read interface, JSON-RPC 2.0 at `POST /rpc`, in the shapes of Cartesi Rollups Node 2.x
 * for the 2.2.0 contracts (the ones @cartesi/rpc 2.0.0-alpha.20 and @cartesi/viem 2.0.0-alpha.29 read):
 * every number a lower-case hex quantity, addresses checksummed, lists as `{data, pagination}`, an unknown
 * item as error -32001, bad parameters as -32602. docs/devnode.md lists the methods and what a devnode
 * leaves empty (no machine hash, no PRT).
 */
import { decodeFunctionData, encodeFunctionData, getAddress, numberToHex, type Address, type Hex } from "viem";
import type { CompletionStatus } from "../../common/wire.ts";
import type { RollupModel } from "../model.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Abi } from "./contracts.ts";
import type { V2Epoch, V2EpochManager } from "./epochs.ts";
import type { Page, RangeFilter, V2Input, V2Output, V2Report, V2Store } from "./record.ts";

/** What the node answers `cartesi_getNodeVersion` with. */
export const DEVNODE_V2_VERSION = "2.0.0-devnode";

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

const invalid = (message = "Invalid parameters"): RpcError => new RpcError(-32602, message);
const notFound = (what: string): RpcError => new RpcError(-32001, `${what} not found`);

type Params = Record<string, unknown>;

/** Positional parameters map onto the node's parameter structs in field order. */
const POSITIONS: Record<string, readonly string[]> = {
  cartesi_listApplications: ["limit", "offset", "descending"],
  cartesi_getApplication: ["application"],
  cartesi_listEpochs: ["application", "status", "limit", "offset", "descending"],
  cartesi_getEpoch: ["application", "epoch_index"],
  cartesi_getLastAcceptedEpochIndex: ["application"],
  cartesi_listInputs: ["application", "epoch_index", "sender", "limit", "offset", "descending"],
  cartesi_getInput: ["application", "input_index"],
  cartesi_getProcessedInputCount: ["application"],
  cartesi_listOutputs: ["application", "epoch_index", "input_index", "output_type", "voucher_address", "limit", "offset", "descending"],
  cartesi_getOutput: ["application", "output_index"],
  cartesi_listReports: ["application", "epoch_index", "input_index", "limit", "offset", "descending"],
  cartesi_getReport: ["application", "report_index"],
};

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

/** `"0x"` + 8 hex digits (or 8 without the prefix): the 4-byte selector of an output type. */
function selectorOf(params: Params): string | undefined {
  const value = params["output_type"];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !/^(0x)?[0-9a-fA-F]{8}$/.test(value)) throw invalid("invalid output_type: expected a 4-byte hex selector");
  return value.replace(/^0x/, "");
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
    const params = paramsOf(method, rawParams);
    switch (method) {
      case "rpc.discover":
        return this.discover();
      case "cartesi_getChainId":
        return { data: quantity(this.ctx.chainId) };
      case "cartesi_getNodeVersion":
        return { data: DEVNODE_V2_VERSION };
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
        const status = params["status"];
        if (status !== undefined && status !== null && typeof status !== "string") throw invalid("invalid status: expected an epoch status");
        let epochs = this.ctx.epochs.epochs();
        if (typeof status === "string") epochs = epochs.filter((e) => e.status === status);
        if (page.descending) epochs.reverse();
        return list(page, { items: epochs.slice(page.offset, page.offset + page.limit), total: epochs.length }, (e) => this.epoch(e));
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
        return list(page, this.ctx.store.listInputs(filter, page), (input) => this.input(input));
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
      case "cartesi_listOutputs": {
        this.app(params);
        const page = pageOf(params);
        const filter = {
          ...this.rangeFilter(params),
          ...optional("selector", selectorOf(params)),
          ...optional("destination", addressParam(params, "voucher_address")),
        };
        return list(page, this.ctx.store.listOutputs(filter, page), (output) => this.output(output));
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
        return list(page, this.ctx.store.listReports(this.rangeFilter(params), page), (report) => this.report(report));
      }
      case "cartesi_getReport": {
        this.app(params);
        const report = this.ctx.store.getReport(parseIndex(params, "report_index", true));
        if (report === undefined) throw notFound("Report");
        return { data: this.report(report) };
      }
      // An Authority application has no tournaments: the PRT methods answer as for an application without any.
      case "cartesi_listTournaments":
      case "cartesi_listCommitments":
      case "cartesi_listMatches":
      case "cartesi_listMatchAdvances": {
        this.app(params);
        const page = pageOf(params);
        return list(page, { items: [], total: 0 }, (x) => x);
      }
      case "cartesi_getTournament":
      case "cartesi_getCommitment":
      case "cartesi_getMatch":
      case "cartesi_getMatchAdvanced":
        this.app(params);
        throw notFound(method.slice("cartesi_get".length).replace("Advanced", " advance"));
      default:
        throw new RpcError(-32601, "Method not found");
    }
  }

  /** The application a request names, by name or address; anything else is an error. */
  private app(params: Params): void {
    const id = params["application"];
    if (typeof id !== "string" || !(/^[a-z0-9_-]{3,}$/.test(id) || /^0x[0-9a-fA-F]{40}$/.test(id))) {
      throw invalid("Invalid application identifier: invalid application name");
    }
    if (!this.names(id)) throw notFound("Application");
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
    const claimed = store.claimOf(epochIndex) !== undefined ? store.epochInputs(epochIndex) : null;
    const siblings = claimed === null ? null : store.siblingsAt(output.index, store.outputsBefore(claimed.upper));
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
    return {
      openrpc: "1.3.2",
      info: { title: "Cartesi Rollups Node JSON-RPC (devnode)", version: DEVNODE_V2_VERSION },
      methods: [...Object.keys(POSITIONS), "cartesi_getChainId", "cartesi_getNodeVersion"].map((name) => ({
        name,
        params: (POSITIONS[name] ?? []).map((param) => ({ name: param, schema: {} })),
        result: { name: "result", schema: {} },
      })),
    };
  }
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
