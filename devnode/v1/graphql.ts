/**
 * The reader's GraphQL API, with the names of the Cartesi Rollups Node v1 schema so real clients work:
 * `input(index)`, `inputs`, `notices`, `reports`, `vouchers` and the single-output look-ups, with Relay-style
 * connections (`totalCount`, `edges { node cursor }`, `pageInfo`), written as the v1 graphql-server writes
 * them (DECISIONS.md section 12): `BigInt` values as JSON strings, bytes as lower-case 0x hex, and a cursor
 * as base64 of the entry's decimal position in the full list (lists only grow at the end, so a cursor
 * stays valid). A notice's or voucher's `proof` is filled once its epoch is claimed, null before.
 */
import { createRequire } from "node:module";
import type * as GraphQL from "graphql";
import type { Address, Hex } from "viem";
import type { OutputProof } from "./epochs.ts";
import type { DevnodeStore, InputFilter, InputRecord, OutputKind, OutputRecord } from "../store.ts";

/** Where proofs come from: the epoch manager; null while an output's epoch is not claimed. */
export interface ProofSource {
  proof(kind: "notice" | "voucher", inputIndex: number, outputIndex: number): OutputProof | null;
}

const NO_PROOFS: ProofSource = { proof: () => null };

// graphql-http reaches graphql through Node's own resolution, which picks graphql 16's CommonJS build (it
// has no "exports" map). Load it the same way: a bundler-style resolver (vitest's) would otherwise pick the
// ESM build, and two copies of graphql reject each other's schema objects.
const { buildSchema, GraphQLError, GraphQLScalarType, Kind } = createRequire(import.meta.url)("graphql") as typeof GraphQL;

/** v1's BigInt: written as a decimal string, read from an integer literal or variable (number or string). */
const BigIntScalar = new GraphQLScalarType({
  name: "BigInt",
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    if (typeof value === "string" && /^-?[0-9]{1,19}$/.test(value)) return Number(value);
    throw new GraphQLError(`BigInt cannot represent ${JSON.stringify(value)}`);
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT) return Number(ast.value);
    throw new GraphQLError("BigInt must be an integer literal");
  },
});

const SDL = /* GraphQL */ `
  "64-bit integers (block numbers, timestamps), as JSON strings like the v1 node writes them."
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

/** v1 cursors: standard base64 of the decimal position ("Mg==" is 2). */
export function encodeCursor(position: number): string {
  return Buffer.from(String(position), "utf8").toString("base64");
}

function parseCursor(cursor: string, name: string): number {
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(cursor) ? Buffer.from(cursor, "base64").toString("utf8") : "";
  if (!/^(0|[1-9][0-9]{0,15})$/.test(decoded) || encodeCursor(Number(decoded)) !== cursor) {
    throw new GraphQLError(`invalid cursor in ${name}: ${cursor} (a v1 cursor is base64 of a position, e.g. "Mg==")`);
  }
  return Number(decoded);
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
  const edges = records.map((record, i) => ({ node: wrap(record), cursor: encodeCursor(start + i) }));
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
    private readonly ctx: Context,
    private readonly record: OutputRecord,
  ) {}
  get index(): number {
    return this.record.index;
  }
  get payload(): Hex {
    return this.record.payload.toLowerCase() as Hex;
  }
  get destination(): Address | null {
    return this.record.destination === null ? null : (this.record.destination.toLowerCase() as Address);
  }
  proof(): OutputProof | null {
    const { kind, inputIndex, index } = this.record;
    return kind === "report" ? null : this.ctx.proofs.proof(kind, inputIndex, index);
  }
  input(): InputNode {
    return inputNode(this.ctx, this.record.inputIndex);
  }
}

interface Context {
  store: DevnodeStore;
  proofs: ProofSource;
}

const OUTPUT_NAMES: Record<OutputKind, string> = { notice: "notice", report: "report", voucher: "voucher" };

function outputNode(ctx: Context, kind: OutputKind, inputIndex: number, index: number): OutputNode {
  const record = ctx.store.getOutput(kind, inputIndex, index);
  if (record === undefined) throw new GraphQLError(`${OUTPUT_NAMES[kind]} not found: input ${inputIndex}, index ${index}`);
  return new OutputNode(ctx, record);
}

class InputNode {
  constructor(
    private readonly ctx: Context,
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
    return this.record.msgSender.toLowerCase() as Address;
  }
  get blockNumber(): number {
    return this.record.blockNumber;
  }
  get payload(): Hex {
    return this.record.payload.toLowerCase() as Hex;
  }
  notice(args: { index: number }): OutputNode {
    return outputNode(this.ctx, "notice", this.record.index, args.index);
  }
  report(args: { index: number }): OutputNode {
    return outputNode(this.ctx, "report", this.record.index, args.index);
  }
  voucher(args: { index: number }): OutputNode {
    return outputNode(this.ctx, "voucher", this.record.index, args.index);
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
    const { ctx, record } = this;
    return connection(
      ctx.store.countOutputs(kind, record.index),
      args,
      (offset, limit) => ctx.store.pageOutputs(kind, offset, limit, record.index),
      (output) => new OutputNode(ctx, output),
    );
  }
}

function inputNode(ctx: Context, index: number): InputNode {
  const record = ctx.store.getInput(index);
  if (record === undefined) throw new GraphQLError(`input not found: ${index}`);
  return new InputNode(ctx, record);
}

export interface GraphqlApi {
  schema: GraphQL.GraphQLSchema;
  rootValue: Record<string, unknown>;
}

export function createGraphqlApi(store: DevnodeStore, proofs: ProofSource = NO_PROOFS): GraphqlApi {
  const ctx: Context = { store, proofs };
  const outputs = (kind: OutputKind, args: ConnectionArgs): Connection<OutputNode> =>
    connection(
      store.countOutputs(kind),
      args,
      (offset, limit) => store.pageOutputs(kind, offset, limit),
      (output) => new OutputNode(ctx, output),
    );
  const rootValue = {
    input: (args: { index: number }) => inputNode(ctx, args.index),
    inputs: (args: ConnectionArgs & { where?: InputFilter | null }) => {
      const where = args.where ?? undefined;
      return connection(
        store.countInputs(where),
        args,
        (offset, limit) => store.pageInputs(offset, limit, where),
        (record) => new InputNode(ctx, record),
      );
    },
    notice: (args: { noticeIndex: number; inputIndex: number }) =>
      outputNode(ctx, "notice", args.inputIndex, args.noticeIndex),
    report: (args: { reportIndex: number; inputIndex: number }) =>
      outputNode(ctx, "report", args.inputIndex, args.reportIndex),
    voucher: (args: { voucherIndex: number; inputIndex: number }) =>
      outputNode(ctx, "voucher", args.inputIndex, args.voucherIndex),
    notices: (args: ConnectionArgs) => outputs("notice", args),
    reports: (args: ConnectionArgs) => outputs("report", args),
    vouchers: (args: ConnectionArgs) => outputs("voucher", args),
  };
  const schema = buildSchema(SDL);
  // buildSchema leaves custom scalars as pass-through: give BigInt the v1 node's string serialization.
  const bigInt = schema.getType("BigInt");
  if (bigInt instanceof GraphQLScalarType) Object.assign(bigInt, { serialize: BigIntScalar.serialize, parseValue: BigIntScalar.parseValue, parseLiteral: BigIntScalar.parseLiteral });
  return { schema, rootValue };
}
