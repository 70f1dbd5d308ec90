/**
 * The v2 node's read interface, JSON-RPC 2.0 at `POST /rpc`: the newest node's methods (its dispatch
 * table, and no other) and error codes (an unknown item -31001, an unknown application -31002, bad
 * parameters -32602), answering lists as `{data, pagination}` and the objects of rpc-objects.ts, which
 * both client generations decode. docs/rollups-v2.md lists the methods and what a devnode leaves empty
 * (no machine hash, no PRT, no withdrawals).
 */
import type { Page, RangeFilter } from "./record.ts";
import { discoverDocument, METHOD_DOCS } from "./rpc-discover.ts";
import { applicationObject, epochIndexOfInput, epochObject, inputObject, outputObject, proofOf, quantity, reportObject, type RpcContext } from "./rpc-objects.ts";
import { addressParam, invalid, isApplicationId, notFound, pageOf, paramsOf, parseIndex, POSITIONS, rangeOf, RPC_ERRORS, RpcError, selectorsOf, statusesOf, type Params } from "./rpc-params.ts";

import { DEVNODE_V2_VERSION } from "./rpc-version.ts";

export { DEVNODE_V2_VERSION } from "./rpc-version.ts";

/** A list as the node answers it: `{data, pagination}`. */
function list<T>(page: Page, result: { items: T[]; total: number }, shape: (item: T) => unknown): unknown {
  return { data: result.items.map(shape), pagination: { total_count: result.total, limit: page.limit, offset: page.offset } };
}

/** Every method served: the dispatch below answers each, and `rpc.discover` lists exactly these. */
export const SERVED_METHODS: readonly string[] = ["rpc.discover", ...Object.keys(METHOD_DOCS)];

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
        const all = [applicationObject(this.ctx)];
        const items = (page.descending ? all.reverse() : all).slice(page.offset, page.offset + page.limit);
        return { data: items, pagination: { total_count: all.length, limit: page.limit, offset: page.offset } };
      }
      case "cartesi_getApplication":
        this.app(params);
        return { data: applicationObject(this.ctx) };
      case "cartesi_listEpochs": {
        this.app(params);
        const page = pageOf(params);
        const statuses = statusesOf(params["status"]);
        const range = rangeOf(params);
        let epochs = this.ctx.epochs.epochs().filter((e) => e.index >= range.from && e.index <= range.to);
        if (statuses !== undefined) epochs = epochs.filter((e) => statuses.includes(e.status));
        if (page.descending) epochs.reverse();
        return list(page, { items: epochs.slice(page.offset, page.offset + page.limit), total: epochs.length }, epochObject);
      }
      case "cartesi_getEpochByVirtualIndex": {
        this.app(params);
        const virtual = parseIndex(params, "virtual_index", true);
        const epoch = this.ctx.epochs.epochs().find((e) => e.virtualIndex === virtual);
        if (epoch === undefined) throw notFound("Epoch");
        return { data: epochObject(epoch) };
      }
      case "cartesi_getEpoch": {
        this.app(params);
        const [epoch] = this.ctx.epochs.epochs(parseIndex(params, "epoch_index", true));
        if (epoch === undefined) throw notFound("Epoch");
        return { data: epochObject(epoch) };
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
        return list(page, this.inRange(this.ctx.store.listInputs(filter, ALL), params, page, (i) => i.index), (input) => inputObject(this.ctx, input));
      }
      case "cartesi_getInput": {
        this.app(params);
        const input = this.ctx.store.v2Input(parseIndex(params, "input_index", true));
        if (input === undefined) throw notFound("Input");
        return { data: inputObject(this.ctx, input) };
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
        const executable = vouchers.filter((o) => proofOf(this.ctx, o, epochIndexOfInput(this.ctx, this.ctx.store.getInput(o.inputIndex))) !== null);
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
        return list(page, this.inRange({ items: all }, params, page, (o) => o.index), (output) => outputObject(this.ctx, output));
      }
      case "cartesi_getOutput": {
        this.app(params);
        const output = this.ctx.store.getV2Output(parseIndex(params, "output_index", true));
        if (output === undefined) throw notFound("Output");
        return { data: outputObject(this.ctx, output) };
      }
      case "cartesi_listReports": {
        this.app(params);
        const page = pageOf(params);
        return list(page, this.inRange(this.ctx.store.listReports(this.rangeFilter(params), ALL), params, page, (r) => r.index), (report) => reportObject(this.ctx, report));
      }
      case "cartesi_getReport": {
        this.app(params);
        const report = this.ctx.store.getReport(parseIndex(params, "report_index", true));
        if (report === undefined) throw notFound("Report");
        return { data: reportObject(this.ctx, report) };
      }
      // An Authority application has no tournaments and no withdrawals: those methods answer as for an
      // application without any.
      case "cartesi_listWithdrawals":
      case "cartesi_listTournaments":
      case "cartesi_listCommitments":
      case "cartesi_listMatches":
      case "cartesi_listMatchAdvances": {
        this.app(params);
        const page = pageOf(params);
        return list(page, { items: [], total: 0 }, (x) => x);
      }
      case "cartesi_getWithdrawal":
      case "cartesi_getTournament":
      case "cartesi_getCommitment":
      case "cartesi_getMatch":
      case "cartesi_getMatchAdvance":
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

  /** The application a request names, by name or address; anything else is an error. */
  private app(params: Params): void {
    const id = params["application"];
    if (typeof id !== "string" || !isApplicationId(id)) {
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
};

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
