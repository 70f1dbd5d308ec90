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
import { addressParam, invalid, notFound, pageOf, paramsOf, parseIndex, POSITIONS, rangeOf, RPC_ERRORS, RpcError, selectorsOf, statusesOf, type Params } from "./rpc-params.ts";
import { DEVNODE_V2_VERSION } from "./rpc-version.ts";

export { DEVNODE_V2_VERSION } from "./rpc-version.ts";

export interface RpcContext {
  store: V2Store;
  epochs: V2EpochManager;
  model: RollupModel;
  applicationName: string;
  chainId: number;
}

const quantity = (value: number | bigint): Hex => numberToHex(value);

/** A list as the node answers it: `{data, pagination}`. */
function list<T>(page: Page, result: { items: T[]; total: number }, shape: (item: T) => unknown): unknown {
  return { data: result.items.map(shape), pagination: { total_count: result.total, limit: page.limit, offset: page.offset } };
}

/** Every method served: the dispatch below answers each, and `rpc.discover` lists exactly these. */
export const SERVED_METHODS: readonly string[] = ["rpc.discover", ...Object.keys(METHOD_DOCS)];

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
