/**
 * What the indexer reads of the node, through the node's public interfaces only (v1 GraphQL, v2 JSON-RPC),
 * so it follows Cartesi's own node as well as the devnode: the notices in order, an input's origin and
 * payload, and an input's notices with whether their epoch is claimed. The transaction of a v1 input, which
 * the v1 reader does not name, comes from the chain's InputBox log.
 */
import { createPublicClient, http, type Address, type Hex, type PublicClient } from "viem";
import { inputTransaction } from "../rollup/chain-reader.ts";
import { GraphqlReader } from "../rollup/graphql.ts";
import { JsonRpcReader } from "../rollup/jsonrpc.ts";
import { NodeQueryError, type InputOrigin, type NoticePage } from "../rollup/node-reader.ts";

export interface IndexSource {
  /** Where the node answers, for logs. */
  readonly url: string;
  noticesAfter(cursor: string | null, first: number): Promise<NoticePage>;
  inputOrigin(index: number): Promise<InputOrigin>;
  inputPayload(index: number): Promise<Hex>;
  /** An input's notices' payloads in order and whether their epoch is claimed; null when the node has no such input. */
  inputNotices(index: number): Promise<{ payloads: Hex[]; proven: boolean } | null>;
  /** The transaction that added an input, from the chain ("" when no chain is configured or it has no such log). */
  transactionOf(index: number, blockNumber: number): Promise<string>;
}

export interface SourceConfig {
  rollups: "v1" | "v2";
  /** The node's base URL (its `/graphql` on v1, `/rpc` on v2). */
  nodeUrl: string;
  graphqlUrl: string;
  dappAddress: Address;
  inputBoxAddress: Address;
  /** The chain's JSON-RPC, for v1 transaction hashes; undefined leaves them "". */
  rpcUrl: string | undefined;
  timeoutMs: number;
}

/** A missing input is a state of the node (replaced, or not there yet), not a failure to reach it. */
async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof NodeQueryError) return null;
    throw error;
  }
}

/** An input's notices and whether every one is provable (v1: a proof; v2: siblings); null for no such input. */
function noticesOf<N extends { payload: Hex }>(
  reader: { inputOrigin(index: number): Promise<unknown>; noticesWithProofs(index: number): Promise<N[]> },
  index: number,
  provable: (notice: N) => boolean,
): Promise<{ payloads: Hex[]; proven: boolean } | null> {
  return orNull(async () => {
    // Asked first: a node without the input says so here, rather than with an empty list.
    await reader.inputOrigin(index);
    const notices = await reader.noticesWithProofs(index);
    return { payloads: notices.map((n) => n.payload), proven: notices.length > 0 && notices.every(provable) };
  });
}

export function indexSource(config: SourceConfig): IndexSource {
  const chain: PublicClient | undefined = config.rpcUrl === undefined ? undefined : createPublicClient({ transport: http(config.rpcUrl, { timeout: config.timeoutMs }) });
  const transactionOf = async (index: number, blockNumber: number): Promise<string> => {
    if (chain === undefined) return "";
    return (await inputTransaction(chain, config.inputBoxAddress, config.dappAddress, index, blockNumber, config.rollups)) ?? "";
  };
  if (config.rollups === "v2") {
    const reader = new JsonRpcReader(config.nodeUrl, config.dappAddress, config.timeoutMs);
    return {
      url: reader.url,
      noticesAfter: (cursor, first) => reader.noticesAfter(cursor, first),
      inputOrigin: (index) => reader.inputOrigin(index),
      inputPayload: (index) => reader.inputPayload(index),
      transactionOf,
      inputNotices: (index) => noticesOf(reader, index, (n) => n.siblings !== null),
    };
  }
  const reader = new GraphqlReader(config.graphqlUrl, config.timeoutMs);
  return {
    url: reader.url,
    noticesAfter: (cursor, first) => reader.noticesAfter(cursor, first),
    inputOrigin: (index) => reader.inputOrigin(index),
    inputPayload: (index) => reader.inputPayload(index),
    transactionOf,
    inputNotices: (index) => noticesOf(reader, index, (n) => n.proof !== null),
  };
}
