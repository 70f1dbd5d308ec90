/**
 * The v2 JSON-RPC's requests as the node reads them (internal/jsonrpc in cartesi/rollups-node): its error
 * codes, positional parameters mapped onto its parameter structs, and each kind of parameter parsed with
 * the node's rules and messages (indices as hex quantities, pages, addresses, epoch statuses, output
 * types, index ranges). The methods themselves are in rpc.ts; the framing of requests and batches in
 * node-server.ts.
 */
import type { Address } from "viem";
import { isAddress } from "../../common/address.ts";
import type { Page } from "./record.ts";
import { EPOCH_STATUSES, METHOD_DOCS } from "./rpc-discover.ts";

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

export const invalid = (message = "Invalid parameters"): RpcError => new RpcError(RPC_ERRORS.invalidParams, message);
export const notFound = (what: string): RpcError => new RpcError(RPC_ERRORS.resourceNotFound, `${what} not found`);

export type Params = Record<string, unknown>;

/** Positional parameters map onto the node's parameter structs in field order. */
export const POSITIONS: Record<string, readonly string[]> = Object.fromEntries(Object.entries(METHOD_DOCS).map(([name, doc]) => [name, doc.params.map((p) => p.name)]));

/** The `limit` a list request asks for, as the node counts it against a batch's budget (0 or none: 50). */
export function listLimitOf(method: string, rawParams: unknown): number {
  if (!method.startsWith("cartesi_list")) return 0;
  let limit: unknown;
  if (Array.isArray(rawParams)) limit = rawParams[(POSITIONS[method] ?? []).indexOf("limit")];
  else if (rawParams !== null && typeof rawParams === "object") limit = (rawParams as Params).limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) return 50;
  return Math.min(limit, 10_000);
}

export function paramsOf(method: string, raw: unknown): Params {
  if (raw === undefined || raw === null) return {};
  if (Array.isArray(raw)) {
    const names = POSITIONS[method] ?? [];
    if (raw.length > names.length) throw invalid();
    return Object.fromEntries(raw.map((value: unknown, i) => [names[i] as string, value]));
  }
  if (typeof raw === "object") return raw as Params;
  throw invalid();
}

export function parseIndex(params: Params, name: string, required: true): number;
export function parseIndex(params: Params, name: string, required: false): number | undefined;
export function parseIndex(params: Params, name: string, required: boolean): number | undefined {
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

export function pageOf(params: Params): Page {
  const { limit, offset, descending } = params;
  if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit))) throw invalid("invalid limit: expected a number");
  if (offset !== undefined && (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0)) throw invalid("invalid offset: expected a number");
  if (descending !== undefined && typeof descending !== "boolean") throw invalid("invalid descending: expected a boolean");
  // The node's rule: none or <= 0 is 50, more than 10,000 is 10,000; the answer says which limit applied.
  const effective = limit === undefined || limit <= 0 ? 50 : Math.min(limit, 10_000);
  return { limit: effective, offset: offset ?? 0, descending: descending ?? false };
}

/** An application's name (3+ of a-z 0-9 _ -) or address: what names the application in a request or a route. */
export function isApplicationId(id: string): boolean {
  return /^[a-z0-9_-]{3,}$/.test(id) || isAddress(id);
}

export function addressParam(params: Params, name: string): Address | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (!isAddress(value)) throw invalid(`invalid ${name}: expected an address`);
  return value;
}

/** `status`: one epoch status or a non-empty list of them. */
export function statusesOf(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw invalid("Invalid epoch status: expected at least one status");
  for (const status of list) {
    if (typeof status !== "string" || !(EPOCH_STATUSES as readonly string[]).includes(status)) throw invalid(`Invalid epoch status: invalid value '${String(status)}' for EpochStatus enum`);
  }
  return list as string[];
}

/** `output_type`: one selector or a non-empty list of them, without the 0x. */
export function selectorsOf(params: Params): string[] | undefined {
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
export function rangeOf(params: Params): { from: number; to: number } {
  const from = parseIndex(params, "from", false) ?? 0;
  const to = parseIndex(params, "to", false) ?? Number.MAX_SAFE_INTEGER;
  if (from > to) throw invalid("invalid index range: from must be less than or equal to to");
  return { from, to };
}
