/**
 * EAS's GraphQL, as its indexer answers it (Prisma's generated API over its `Attestation` and `Schema`
 * models), over the index of the rollup's notices (docs/graphql.md): the queries, arguments and field names
 * EAS's documentation and applications use, for what exists here. Built with graphql-js, the reference
 * implementation; this file holds the schema and the limits a query must keep to before anything is read.
 */
import { buildSchema, GraphQLError, Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from "graphql";

/** Most items a list answers (`take`): more is refused before any read. */
export const MAX_TAKE = 100;
/** Most rows `skip` passes over: past it, `cursor` pages at the same cost wherever it starts. */
export const MAX_SKIP = 10_000;
/** Deepest selection a query may make. */
export const MAX_DEPTH = 5;
/** Most root fields (aliases included) one query may ask. */
export const MAX_ROOT_FIELDS = 10;
/** Most rows one query may ask for, lists inside lists multiplied (a `take` given by a variable counts as MAX_TAKE). */
export const MAX_ROWS = 10_000;

const STRING_FILTER = `equals: String, in: [String!], notIn: [String!], lt: String, lte: String, gt: String, gte: String, contains: String, startsWith: String, endsWith: String`;
const INT_FILTER = `equals: Int, in: [Int!], notIn: [Int!], lt: Int, lte: Int, gt: Int, gte: Int`;
const ATTESTATION_SCALARS = ["id", "data", "decodedDataJson", "recipient", "attester", "time", "timeCreated", "expirationTime", "revocationTime", "refUID", "revocable", "revoked", "txid", "schemaId", "ipfsHash", "isOffchain", "proven", "inputIndex"];
const SCHEMA_SCALARS = ["id", "schema", "creator", "resolver", "revocable", "index", "txid", "time", "name", "provider"];
const INT_FIELDS = new Set(["time", "timeCreated", "expirationTime", "revocationTime", "inputIndex"]);
const BOOL_FIELDS = new Set(["revocable", "revoked", "isOffchain", "proven"]);
const scalarType = (f: string): string => (INT_FIELDS.has(f) ? "Int" : BOOL_FIELDS.has(f) ? "Boolean" : "String");
const filterType = (f: string): string => (INT_FIELDS.has(f) ? "IntFilter" : BOOL_FIELDS.has(f) ? "BoolFilter" : "StringFilter");

export const SDL = /* GraphQL */ `
  enum SortOrder { asc desc }
  enum QueryMode { default insensitive }
  enum AttestationScalarFieldEnum { ${ATTESTATION_SCALARS.join(" ")} }
  enum SchemaScalarFieldEnum { ${SCHEMA_SCALARS.join(" ")} }

  input StringFilter { ${STRING_FILTER}, mode: QueryMode, not: NestedStringFilter }
  input NestedStringFilter { ${STRING_FILTER}, not: NestedStringFilter }
  input IntFilter { ${INT_FILTER}, not: NestedIntFilter }
  input NestedIntFilter { ${INT_FILTER}, not: NestedIntFilter }
  input BoolFilter { equals: Boolean, not: NestedBoolFilter }
  input NestedBoolFilter { equals: Boolean, not: NestedBoolFilter }

  "EAS's where clause for attestations: every field, AND/OR/NOT, and the schema's fields through schema: { is }."
  input AttestationWhereInput {
    AND: [AttestationWhereInput!]
    OR: [AttestationWhereInput!]
    NOT: [AttestationWhereInput!]
    ${ATTESTATION_SCALARS.map((f) => `${f}: ${filterType(f)}`).join("\n    ")}
    schema: SchemaRelationFilter
  }
  input SchemaRelationFilter { is: SchemaWhereInput, isNot: SchemaWhereInput }
  input AttestationListRelationFilter { every: AttestationWhereInput, some: AttestationWhereInput, none: AttestationWhereInput }
  input AttestationWhereUniqueInput { id: String }
  input AttestationOrderByWithRelationInput {
    ${ATTESTATION_SCALARS.map((f) => `${f}: SortOrder`).join("\n    ")}
    schema: SchemaOrderByWithRelationInput
  }
  input AttestationOrderByRelationAggregateInput { _count: SortOrder }
  input AttestationCountOrderByAggregateInput { ${ATTESTATION_SCALARS.map((f) => `${f}: SortOrder`).join(", ")} }
  input AttestationOrderByWithAggregationInput {
    ${ATTESTATION_SCALARS.map((f) => `${f}: SortOrder`).join("\n    ")}
    _count: AttestationCountOrderByAggregateInput
  }

  input SchemaWhereInput {
    AND: [SchemaWhereInput!]
    OR: [SchemaWhereInput!]
    NOT: [SchemaWhereInput!]
    ${SCHEMA_SCALARS.map((f) => `${f}: ${filterType(f)}`).join("\n    ")}
    attestations: AttestationListRelationFilter
  }
  input SchemaWhereUniqueInput { id: String }
  input SchemaOrderByWithRelationInput {
    ${SCHEMA_SCALARS.map((f) => `${f}: SortOrder`).join("\n    ")}
    attestations: AttestationOrderByRelationAggregateInput
  }

  """
  An attestation as EAS's indexer names its fields. data is the registry's DATA_SCHEMA (the bucket, never the
  value). proven and inputIndex are this index's own: whether its epoch is claimed, and its input.
  """
  type Attestation {
    ${ATTESTATION_SCALARS.map((f) => `${f}: ${scalarType(f)}!`).join("\n    ")}
    schema: Schema!
  }

  "A schema: its id, EAS's schema string of the data its attestations carry, who registered it where; name and provider are the rollup's."
  type Schema {
    ${SCHEMA_SCALARS.map((f) => `${f}: ${scalarType(f)}!`).join("\n    ")}
    description: String!
    proven: Boolean!
    attestations(where: AttestationWhereInput, orderBy: [AttestationOrderByWithRelationInput!], cursor: AttestationWhereUniqueInput, take: Int, skip: Int, distinct: [AttestationScalarFieldEnum!]): [Attestation!]!
    schemaNames: [SchemaName!]!
    _count: SchemaCount!
  }
  type SchemaCount { attestations: Int!, schemaNames: Int! }
  "EAS's schema names: here the name the schema was registered with, by its creator."
  type SchemaName { id: String!, schemaId: String!, attesterAddress: String!, name: String!, time: Int!, isCreator: Boolean! }

  type AttestationCountAggregate { ${ATTESTATION_SCALARS.map((f) => `${f}: Int!`).join(", ")}, _all: Int! }
  type AttestationMinMaxAggregate { ${ATTESTATION_SCALARS.map((f) => `${f}: ${scalarType(f)}`).join(", ")} }
  type AttestationSumAvgAggregate { ${[...INT_FIELDS].map((f) => `${f}: Float`).join(", ")} }
  type AggregateAttestation {
    _count: AttestationCountAggregate
    _min: AttestationMinMaxAggregate
    _max: AttestationMinMaxAggregate
    _avg: AttestationSumAvgAggregate
    _sum: AttestationSumAvgAggregate
  }
  type AttestationGroupBy {
    ${ATTESTATION_SCALARS.map((f) => `${f}: ${scalarType(f)}`).join("\n    ")}
    _count: AttestationCountAggregate
  }
  type SchemaCountAggregate { ${SCHEMA_SCALARS.map((f) => `${f}: Int!`).join(", ")}, _all: Int! }
  type AggregateSchema { _count: SchemaCountAggregate }

  type Query {
    attestation(where: AttestationWhereUniqueInput!): Attestation
    "The attestation, or an error when there is none (Prisma's findUniqueOrThrow)."
    getAttestation(where: AttestationWhereUniqueInput!): Attestation
    findFirstAttestation(where: AttestationWhereInput, orderBy: [AttestationOrderByWithRelationInput!], cursor: AttestationWhereUniqueInput, take: Int, skip: Int, distinct: [AttestationScalarFieldEnum!]): Attestation
    findFirstAttestationOrThrow(where: AttestationWhereInput, orderBy: [AttestationOrderByWithRelationInput!], cursor: AttestationWhereUniqueInput, take: Int, skip: Int, distinct: [AttestationScalarFieldEnum!]): Attestation
    attestations(where: AttestationWhereInput, orderBy: [AttestationOrderByWithRelationInput!], cursor: AttestationWhereUniqueInput, take: Int, skip: Int, distinct: [AttestationScalarFieldEnum!]): [Attestation!]!
    aggregateAttestation(where: AttestationWhereInput): AggregateAttestation!
    groupByAttestation(where: AttestationWhereInput, orderBy: [AttestationOrderByWithAggregationInput!], by: [AttestationScalarFieldEnum!]!, take: Int, skip: Int): [AttestationGroupBy!]!
    schema(where: SchemaWhereUniqueInput!): Schema
    getSchema(where: SchemaWhereUniqueInput!): Schema
    findFirstSchema(where: SchemaWhereInput, orderBy: [SchemaOrderByWithRelationInput!], cursor: SchemaWhereUniqueInput, take: Int, skip: Int): Schema
    findFirstSchemaOrThrow(where: SchemaWhereInput, orderBy: [SchemaOrderByWithRelationInput!], cursor: SchemaWhereUniqueInput, take: Int, skip: Int): Schema
    schemata(where: SchemaWhereInput, orderBy: [SchemaOrderByWithRelationInput!], cursor: SchemaWhereUniqueInput, take: Int, skip: Int): [Schema!]!
    aggregateSchema(where: SchemaWhereInput): AggregateSchema!
  }
`;

/** The list fields: each multiplies the rows of what it holds by its `take`. */
const LIST_FIELDS = new Set(["attestations", "schemata", "groupByAttestation"]);

export const schema = buildSchema(SDL);

function depthOf(selections: SelectionSetNode | undefined, context: ValidationContext, seen: Set<string>): number {
  if (selections === undefined) return 0;
  let deepest = 0;
  for (const node of selections.selections) {
    if (node.kind === Kind.FIELD) deepest = Math.max(deepest, 1 + depthOf(node.selectionSet, context, seen));
    else if (node.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depthOf(node.selectionSet, context, seen));
    else if (!seen.has(node.name.value)) {
      // A fragment counts where it is spread; one spread twice in a path is a cycle the spec's rules refuse.
      const fragment = context.getFragment(node.name.value);
      deepest = Math.max(deepest, depthOf(fragment?.selectionSet, context, new Set([...seen, node.name.value])));
    }
  }
  return deepest;
}

/** Rows a selection may ask for: lists multiply by their take (a variable's counts as MAX_TAKE). */
function rowsOf(selections: SelectionSetNode | undefined, context: ValidationContext, seen: Set<string>): number {
  if (selections === undefined) return 1;
  let rows = 1;
  for (const node of selections.selections) {
    if (node.kind === Kind.FIELD) {
      let take = 1;
      if (LIST_FIELDS.has(node.name.value)) {
        const arg = node.arguments?.find((a) => a.name.value === "take");
        take = arg?.value.kind === Kind.INT ? Math.abs(Number(arg.value.value)) : MAX_TAKE;
      }
      rows += take * rowsOf(node.selectionSet, context, seen);
    } else if (node.kind === Kind.INLINE_FRAGMENT) rows += rowsOf(node.selectionSet, context, seen);
    else if (!seen.has(node.name.value)) rows += rowsOf(context.getFragment(node.name.value)?.selectionSet, context, new Set([...seen, node.name.value]));
  }
  return rows;
}

/**
 * Refuses a query deeper than MAX_DEPTH, with more than MAX_ROOT_FIELDS root fields, asking more than
 * MAX_ROWS rows, or with a literal `take` above MAX_TAKE or `skip` above MAX_SKIP.
 */
export const limitsRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(node) {
    const depth = depthOf(node.selectionSet, context, new Set());
    if (depth > MAX_DEPTH) context.reportError(new GraphQLError(`the query is ${depth} levels deep; at most ${MAX_DEPTH} are answered`, { nodes: [node] }));
    const roots = node.selectionSet.selections.length;
    if (roots > MAX_ROOT_FIELDS) context.reportError(new GraphQLError(`the query asks ${roots} root fields; at most ${MAX_ROOT_FIELDS} are answered in one query`, { nodes: [node] }));
    const rows = rowsOf(node.selectionSet, context, new Set()) - 1;
    if (rows > MAX_ROWS) context.reportError(new GraphQLError(`the query may answer ${rows} rows (lists inside lists multiply); at most ${MAX_ROWS}`, { nodes: [node] }));
  },
  Field(node: FieldNode) {
    for (const arg of node.arguments ?? []) {
      if (arg.name.value !== "take" && arg.name.value !== "skip") continue;
      // A literal is checked here; a variable is checked when the query runs (resolve.ts), also before any read.
      const max = arg.name.value === "take" ? MAX_TAKE : MAX_SKIP;
      if (arg.value.kind === Kind.INT && (Number(arg.value.value) < 0 || Number(arg.value.value) > max)) {
        context.reportError(new GraphQLError(`${arg.name.value}: ${arg.value.value} is out of range (0..${max})`, { nodes: [arg] }));
      }
    }
  },
});
