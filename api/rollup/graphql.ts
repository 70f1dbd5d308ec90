/**
 * The node's GraphQL reader (Cartesi Rollups Node v1 schema): the verdict of one input, and the notices
 * after a cursor. Only standard v1 fields are used, so any v1 node works (DECISIONS.md section 1).
 */
import type { Address, Hex } from "viem";
import type { CompletionStatus } from "../../common/wire.ts";
import { networkMessage } from "./inspect.ts";
import { NodeQueryError, NodeUnavailableError, type InputOrigin, type InputVerdict, type NodeReader, type NoticePage, type ProvedNotice } from "./node-reader.ts";

export type { InputVerdict, NoticePage, NoticeRecord, ProvedNotice } from "./node-reader.ts";

export type { CompletionStatus };

const NOTICES_WITH_PROOFS = `query InputNotices($index: Int!, $after: String) {
  input(index: $index) {
    notices(first: 100, after: $after) {
      edges { node { index payload proof { context validity {
        inputIndexWithinEpoch outputIndexWithinInput outputHashesRootHash vouchersEpochRootHash noticesEpochRootHash
        machineStateHash outputHashInOutputHashesSiblings outputHashesInEpochSiblings } } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export { NodeQueryError as GraphqlQueryError, NodeUnavailableError as GraphqlUnavailableError };

interface GraphqlResponse<T> {
  data?: T | null;
  errors?: { message: string }[];
}

export class GraphqlReader implements NodeReader {
  constructor(
    readonly url: string,
    private readonly timeoutMs = 5_000,
  ) {}

  private async request<T>(query: string, variables: Record<string, unknown>, timeoutMs = this.timeoutMs): Promise<T> {
    let body: GraphqlResponse<T>;
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      body = (await response.json()) as GraphqlResponse<T>;
    } catch (error) {
      throw new NodeUnavailableError(networkMessage(error));
    }
    if (body.errors !== undefined && body.errors.length > 0) {
      throw new NodeQueryError(body.errors.map((e) => e.message).join("; "));
    }
    if (body.data === undefined || body.data === null) throw new NodeQueryError("no data in the response");
    return body.data;
  }

  /** The block an input was added in (v1 writes it as a BigInt string). */
  async inputBlock(index: number): Promise<number> {
    const data = await this.request<{ input: { blockNumber: string | number } | null }>("query Block($index: Int!) { input(index: $index) { blockNumber } }", { index });
    if (data.input === null) throw new NodeQueryError("input not found");
    return Number(data.input.blockNumber);
  }

  /** Who sent an input, in which block, at what time (v1 has no transaction hash: `txid` is null). */
  async inputOrigin(index: number): Promise<InputOrigin> {
    const data = await this.request<{ input: { msgSender: Address; blockNumber: string | number; timestamp: string | number } | null }>(
      "query Origin($index: Int!) { input(index: $index) { msgSender blockNumber timestamp } }",
      { index },
    );
    if (data.input === null) throw new NodeQueryError("input not found");
    return { sender: data.input.msgSender, blockNumber: Number(data.input.blockNumber), timestamp: Number(data.input.timestamp), txid: null };
  }

  /** An input's payload (hex of its `{type, params}` JSON). */
  async inputPayload(index: number): Promise<Hex> {
    const data = await this.request<{ input: { payload: Hex } | null }>("query Payload($index: Int!) { input(index: $index) { payload } }", { index });
    if (data.input === null) throw new NodeQueryError("input not found");
    return data.input.payload;
  }

  /** Block times (Unix seconds) of the latest `limit` inputs, oldest first (v1 writes them as BigInt strings). */
  async recentInputTimes(limit: number, maxMs: number = this.timeoutMs): Promise<number[]> {
    const data = await this.request<{ inputs: { edges: { node: { timestamp: string | number } }[] } }>(
      "query Recent($last: Int!) { inputs(last: $last) { edges { node { timestamp } } } }",
      { last: limit },
      Math.max(1, Math.min(this.timeoutMs, maxMs)),
    );
    return data.inputs.edges.map((e) => Number(e.node.timestamp)).filter((t) => Number.isFinite(t));
  }

  /** Every notice of an input with its proof (v1 fields only), paged through with the reader's cursors. */
  async noticesWithProofs(inputIndex: number): Promise<ProvedNotice[]> {
    const notices: ProvedNotice[] = [];
    let after: string | null = null;
    for (;;) {
      const data: {
        input: { notices: { edges: { node: ProvedNotice }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
      } = await this.request(NOTICES_WITH_PROOFS, after === null ? { index: inputIndex } : { index: inputIndex, after });
      const page = data.input.notices;
      notices.push(...page.edges.map((e) => e.node));
      if (!page.pageInfo.hasNextPage || page.pageInfo.endCursor === null) return notices;
      after = page.pageInfo.endCursor;
    }
  }

  /** `maxMs` shortens this one request's timeout (a caller with a deadline of its own passes what is left). */
  async inputVerdict(index: number, maxMs: number = this.timeoutMs): Promise<InputVerdict> {
    const data = await this.request<{
      input: { status: CompletionStatus; reports: { edges: { node: { payload: Hex } }[] } } | null;
    }>(
      `query Verdict($index: Int!) { input(index: $index) { status reports { edges { node { payload } } } } }`,
      { index },
      Math.max(1, Math.min(this.timeoutMs, maxMs)),
    );
    if (data.input === null) throw new NodeQueryError("input not found");
    return { status: data.input.status, reports: data.input.reports.edges.map((e) => e.node.payload) };
  }

  async noticesAfter(cursor: string | null, first = 100): Promise<NoticePage> {
    const data = await this.request<{
      notices: {
        edges: { cursor: string; node: { index: number; payload: Hex; input: { index: number } } }[];
        pageInfo: { endCursor: string | null; hasNextPage: boolean };
      };
    }>(
      `query Notices($first: Int, $after: String) {
        notices(first: $first, after: $after) {
          edges { cursor node { index payload input { index } } }
          pageInfo { endCursor hasNextPage }
        }
      }`,
      cursor === null ? { first } : { first, after: cursor },
    );
    const notices = data.notices.edges.map((e) => ({
      cursor: e.cursor,
      index: e.node.index,
      inputIndex: e.node.input.index,
      payload: e.node.payload,
    }));
    const last = notices[notices.length - 1];
    return {
      notices,
      endCursor: data.notices.pageInfo.endCursor ?? last?.cursor ?? cursor,
      hasNextPage: data.notices.pageInfo.hasNextPage,
    };
  }
}
