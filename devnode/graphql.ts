/**
 * The reader's GraphQL API, with the names of the Cartesi Rollups Node v1 schema so real clients work:
 * `input(index)`, `inputs`, `notices`, `reports`, `vouchers` and the single-output look-ups, with Relay-style
 * connections (`totalCount`, `edges { node cursor }`, `pageInfo`). Proofs are not produced (always null).
 * A cursor is the entry's position in the full list, as a decimal string: lists only grow at the end,
 * so a cursor stays valid.
 */
import { createRequire } from "node:module";
import type * as GraphQL from "graphql";
import type { Address, Hex } from "viem";
import type { DevnodeStore, InputFilter, InputRecord, OutputKind, OutputRecord } from "./store.ts";

// graphql-http reaches graphql through Node's own resolution, which picks graphql 16's CommonJS build (it
// has no "exports" map). Load it the same way: a bundler-style resolver (vitest's) would otherwise pick the
// ESM build, and two copies of graphql reject each other's schema objects.
const { buildSchema, GraphQLError } = createRequire(import.meta.url)("graphql") as typeof GraphQL;

const SDL = /* GraphQL */ `
  "64-bit integers (block numbers, timestamps), as JSON numbers like the v1 node."
  scalar BigInt

  enum CompletionStatus {
    UNPROCESSED
    ACCEPTED
    REJECTED
    EXCEPTION
    MACHINE_HALTED
    CYCLE_LIMIT_EXCEEDED
    TIME_LIMIT_EXCEEDED
    PAYLOAD_LENGTH_LIMIT_EXCEEDED
  }

  type PageInfo {
    startCursor: String
    endCursor: String
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
  }

  input InputFilter {
    indexLowerThan: Int
    indexGreaterThan: Int
  }

  "Request submitted to the application to advance its state"
  type Input {
    index: Int!
    status: CompletionStatus!
    "Block timestamp in seconds"
    timestamp: BigInt!
    msgSender: String!
    blockNumber: BigInt!
    payload: String!
    notice(index: Int!): Notice!
    notices(first: Int, last: Int, after: String, before: String): NoticeConnection!
    report(index: Int!): Report!
    reports(first: Int, last: Int, after: String, before: String): ReportConnection!
    voucher(index: Int!): Voucher!
    vouchers(first: Int, last: Int, after: String, before: String): VoucherConnection!
  }

  type OutputValidityProof {
    inputIndexWithinEpoch: Int!
    outputIndexWithinInput: Int!
    outputHashesRootHash: String!
    vouchersEpochRootHash: String!
    noticesEpochRootHash: String!
    machineStateHash: String!
    outputHashInOutputHashesSiblings: [String!]!
    outputHashesInEpochSiblings: [String!]!
  }

  type Proof {
    validity: OutputValidityProof!
    context: String!
  }

  type Notice {
    index: Int!
    input: Input!
    payload: String!
    proof: Proof
  }

  type Report {
    index: Int!
    input: Input!
    payload: String!
  }

  type Voucher {
    index: Int!
    input: Input!
    destination: String!
    payload: String!
    proof: Proof
  }

  type InputEdge {
    node: Input!
    cursor: String!
  }
  type InputConnection {
    totalCount: Int!
    edges: [InputEdge!]!
    pageInfo: PageInfo!
  }
  type NoticeEdge {
    node: Notice!
    cursor: String!
  }
  type NoticeConnection {
    totalCount: Int!
    edges: [NoticeEdge!]!
    pageInfo: PageInfo!
  }
  type ReportEdge {
    node: Report!
    cursor: String!
  }
  type ReportConnection {
    totalCount: Int!
    edges: [ReportEdge!]!
    pageInfo: PageInfo!
  }
  type VoucherEdge {
    node: Voucher!
    cursor: String!
  }
  type VoucherConnection {
    totalCount: Int!
    edges: [VoucherEdge!]!
    pageInfo: PageInfo!
  }

  type Query {
    input(index: Int!): Input!
    inputs(first: Int, last: Int, after: String, before: String, where: InputFilter): InputConnection!
    notice(noticeIndex: Int!, inputIndex: Int!): Notice!
    notices(first: Int, last: Int, after: String, before: String): NoticeConnection!
    report(reportIndex: Int!, inputIndex: Int!): Report!
    reports(first: Int, last: Int, after: String, before: String): ReportConnection!
    voucher(voucherIndex: Int!, inputIndex: Int!): Voucher!
    vouchers(first: Int, last: Int, after: String, before: String): VoucherConnection!
  }
`;

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

interface Connection<T> {
  totalCount: number;
  edges: { node: T; cursor: string }[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
}

function parseCursor(cursor: string, name: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(cursor)) throw new GraphQLError(`invalid cursor in ${name}: ${cursor}`);
  return Number(cursor);
}

/** The slice [start, end) of a list of `total` entries that Relay's first/after/last/before select. */
export function pageWindow(total: number, args: ConnectionArgs): { start: number; end: number } {
  let start = 0;
  let end = total;
  if (args.after != null) start = Math.min(total, parseCursor(args.after, "after") + 1);
  if (args.before != null) end = Math.max(start, Math.min(end, parseCursor(args.before, "before")));
  if (args.first != null) {
    if (args.first < 0) throw new GraphQLError("first must not be negative");
    end = Math.min(end, start + args.first);
  }
  if (args.last != null) {
    if (args.last < 0) throw new GraphQLError("last must not be negative");
    start = Math.max(start, end - args.last);
  }
  return { start, end };
}

function connection<R, T>(
  total: number,
  args: ConnectionArgs,
  fetch: (offset: number, limit: number) => R[],
  wrap: (record: R) => T,
): Connection<T> {
  const { start, end } = pageWindow(total, args);
  const records = end > start ? fetch(start, end - start) : [];
  const edges = records.map((record, i) => ({ node: wrap(record), cursor: String(start + i) }));
  return {
    totalCount: total,
    edges,
    pageInfo: {
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
      hasNextPage: start + edges.length < total,
      hasPreviousPage: start > 0,
    },
  };
}

class OutputNode {
  constructor(
    private readonly store: DevnodeStore,
    private readonly record: OutputRecord,
  ) {}
  get index(): number {
    return this.record.index;
  }
  get payload(): Hex {
    return this.record.payload;
  }
  get destination(): Address | null {
    return this.record.destination;
  }
  get proof(): null {
    return null;
  }
  input(): InputNode {
    return inputNode(this.store, this.record.inputIndex);
  }
}

const OUTPUT_NAMES: Record<OutputKind, string> = { notice: "notice", report: "report", voucher: "voucher" };

function outputNode(store: DevnodeStore, kind: OutputKind, inputIndex: number, index: number): OutputNode {
  const record = store.getOutput(kind, inputIndex, index);
  if (record === undefined) throw new GraphQLError(`${OUTPUT_NAMES[kind]} not found: input ${inputIndex}, index ${index}`);
  return new OutputNode(store, record);
}

class InputNode {
  constructor(
    private readonly store: DevnodeStore,
    private readonly record: InputRecord,
  ) {}
  get index(): number {
    return this.record.index;
  }
  get status(): string {
    return this.record.status;
  }
  get timestamp(): number {
    return this.record.timestamp;
  }
  get msgSender(): Address {
    return this.record.msgSender;
  }
  get blockNumber(): number {
    return this.record.blockNumber;
  }
  get payload(): Hex {
    return this.record.payload;
  }
  notice(args: { index: number }): OutputNode {
    return outputNode(this.store, "notice", this.record.index, args.index);
  }
  report(args: { index: number }): OutputNode {
    return outputNode(this.store, "report", this.record.index, args.index);
  }
  voucher(args: { index: number }): OutputNode {
    return outputNode(this.store, "voucher", this.record.index, args.index);
  }
  notices(args: ConnectionArgs): Connection<OutputNode> {
    return this.outputs("notice", args);
  }
  reports(args: ConnectionArgs): Connection<OutputNode> {
    return this.outputs("report", args);
  }
  vouchers(args: ConnectionArgs): Connection<OutputNode> {
    return this.outputs("voucher", args);
  }
  private outputs(kind: OutputKind, args: ConnectionArgs): Connection<OutputNode> {
    const { store, record } = this;
    return connection(
      store.countOutputs(kind, record.index),
      args,
      (offset, limit) => store.pageOutputs(kind, offset, limit, record.index),
      (output) => new OutputNode(store, output),
    );
  }
}

function inputNode(store: DevnodeStore, index: number): InputNode {
  const record = store.getInput(index);
  if (record === undefined) throw new GraphQLError(`input not found: ${index}`);
  return new InputNode(store, record);
}

export interface GraphqlApi {
  schema: GraphQL.GraphQLSchema;
  rootValue: Record<string, unknown>;
}

export function createGraphqlApi(store: DevnodeStore): GraphqlApi {
  const outputs = (kind: OutputKind, args: ConnectionArgs): Connection<OutputNode> =>
    connection(
      store.countOutputs(kind),
      args,
      (offset, limit) => store.pageOutputs(kind, offset, limit),
      (output) => new OutputNode(store, output),
    );
  const rootValue = {
    input: (args: { index: number }) => inputNode(store, args.index),
    inputs: (args: ConnectionArgs & { where?: InputFilter | null }) => {
      const where = args.where ?? undefined;
      return connection(
        store.countInputs(where),
        args,
        (offset, limit) => store.pageInputs(offset, limit, where),
        (record) => new InputNode(store, record),
      );
    },
    notice: (args: { noticeIndex: number; inputIndex: number }) =>
      outputNode(store, "notice", args.inputIndex, args.noticeIndex),
    report: (args: { reportIndex: number; inputIndex: number }) =>
      outputNode(store, "report", args.inputIndex, args.reportIndex),
    voucher: (args: { voucherIndex: number; inputIndex: number }) =>
      outputNode(store, "voucher", args.inputIndex, args.voucherIndex),
    notices: (args: ConnectionArgs) => outputs("notice", args),
    reports: (args: ConnectionArgs) => outputs("report", args),
    vouchers: (args: ConnectionArgs) => outputs("voucher", args),
  };
  return { schema: buildSchema(SDL), rootValue };
}
