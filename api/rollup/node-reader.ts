/**
 * What the api reads from the rollup node besides inspect: an input's verdict, the notices after a cursor
 * (the WebSocket's feed), an input's payload and block, recent input times (health), and an input's
 * notices with their proofs. A v1 node answers through GraphQL (api/rollup/graphql.ts), a v2 node through
 * its JSON-RPC (api/rollup/jsonrpc.ts); ROLLUPS says which.
 */
import type { Address, Hex } from "viem";
import type { CompletionStatus, OutputValidityProof } from "../../common/wire.ts";

export interface InputVerdict {
  status: CompletionStatus;
  reports: Hex[];
}

/** Who sent an input, where and when: what the index keeps of an input beside its notices. */
export interface InputOrigin {
  sender: Address;
  blockNumber: number;
  timestamp: number;
  /** The transaction that added it, when the node says (v2); null where only the chain does (v1). */
  txid: Hex | null;
}

export interface NoticeRecord {
  cursor: string;
  index: number;
  inputIndex: number;
  payload: Hex;
}

export interface NoticePage {
  notices: NoticeRecord[];
  endCursor: string | null;
  hasNextPage: boolean;
}

/** One notice of an input with its v1 proof; `proof` is null while its epoch is not claimed. */
export interface ProvedNotice {
  index: number;
  payload: Hex;
  proof: { validity: OutputValidityProof; context: Hex } | null;
}

/** One notice of an input as a v2 output with its proof for `Application.validateOutput`; null while unclaimed. */
export interface V2ProvedNotice {
  /** The output's index among all the application's outputs (`proof.outputIndex`). */
  index: number;
  payload: Hex;
  /** The output itself: the `Notice(bytes)` call the Application validates. */
  output: Hex;
  siblings: Hex[] | null;
}

export interface NodeReader {
  /** Where the node answers, for error details. */
  readonly url: string;
  /** `maxMs` shortens this one request's timeout (a caller with a deadline of its own passes what is left). */
  inputVerdict(index: number, maxMs?: number): Promise<InputVerdict>;
  noticesAfter(cursor: string | null, first?: number): Promise<NoticePage>;
  inputPayload(index: number): Promise<Hex>;
  inputBlock(index: number): Promise<number>;
  /** Block times (Unix seconds) of the latest `limit` inputs, oldest first. */
  recentInputTimes(limit: number, maxMs?: number): Promise<number[]>;
}

/** The node could not be reached or answered something other than its protocol's data. */
export class NodeUnavailableError extends Error {
  override readonly name = "NodeUnavailableError";
}

/** The node answered with an error (for an input: usually "not found yet"). */
export class NodeQueryError extends Error {
  override readonly name = "NodeQueryError";
}
