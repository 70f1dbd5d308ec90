/**
 * EAS's GraphQL, as its indexer answers it, over the rollup's state (docs/graphql.md): the queries and the
 * field names EAS's docs and examples use, for what exists here. Built with graphql-js, the reference
 * implementation; this file holds the schema and the limits a query must keep to before anything is read.
 */
import { buildSchema, GraphQLError, Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from "graphql";

/** Most items a list answers (`take`): more is refused before any read. */
export const MAX_TAKE = 100;
/** Deepest selection a query may make. */
export const MAX_DEPTH = 5;
/** Most root fields (aliases included) one query may ask: each is a read of the rollup. */
export const MAX_ROOT_FIELDS = 10;

export const SDL = /* GraphQL */ `
  enum SortOrder { asc desc }

  input StringFilter { equals: String, in: [String!] }
  input BoolFilter { equals: Boolean }

  "EAS's where clause for attestations. recipient (or id) is required: the rollup lists attestations by owner."
  input AttestationWhereInput {
    id: StringFilter
    recipient: StringFilter
    schemaId: StringFilter
    attester: StringFilter
    revoked: BoolFilter
  }
  input AttestationWhereUniqueInput { id: String! }
  input AttestationOrderByWithRelationInput { time: SortOrder }
  input SchemaWhereUniqueInput { id: String! }
  input SchemaWhereInput { id: StringFilter }

  "An attestation as EAS's indexer names its fields; data is the registry's DATA_SCHEMA (the bucket, never the value)."
  type Attestation {
    id: String!
    schemaId: String!
    attester: String!
    recipient: String!
    refUID: String!
    revocable: Boolean!
    revocationTime: Int!
    expirationTime: Int!
    time: Int!
    timeCreated: Int!
    txid: String!
    data: String!
    decodedDataJson: String!
    isOffchain: Boolean!
    revoked: Boolean!
    schema: Schema!
  }

  "A schema: its id, EAS's schema string of the data its attestations carry, and the rollup's own description."
  type Schema {
    id: String!
    schema: String!
    resolver: String!
    revocable: Boolean!
    index: String!
    name: String!
    provider: String!
  }

  type AttestationCount { _all: Int! }
  type AggregateAttestation { _count: AttestationCount! }

  type Query {
    attestation(where: AttestationWhereUniqueInput!): Attestation
    attestations(where: AttestationWhereInput, orderBy: [AttestationOrderByWithRelationInput!], take: Int, skip: Int): [Attestation!]!
    aggregateAttestation(where: AttestationWhereInput): AggregateAttestation!
    schema(where: SchemaWhereUniqueInput!): Schema
    schemata(where: SchemaWhereInput, take: Int, skip: Int): [Schema!]!
  }
`;

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

/** Refuses a query deeper than MAX_DEPTH, with more than MAX_ROOT_FIELDS root fields, or a `take` above MAX_TAKE. */
export const limitsRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(node) {
    const depth = depthOf(node.selectionSet, context, new Set());
    if (depth > MAX_DEPTH) context.reportError(new GraphQLError(`the query is ${depth} levels deep; at most ${MAX_DEPTH} are answered`, { nodes: [node] }));
    const roots = node.selectionSet.selections.length;
    if (roots > MAX_ROOT_FIELDS) context.reportError(new GraphQLError(`the query asks ${roots} root fields; at most ${MAX_ROOT_FIELDS} are answered in one query`, { nodes: [node] }));
  },
  Field(node: FieldNode) {
    for (const arg of node.arguments ?? []) {
      if (arg.name.value !== "take" && arg.name.value !== "skip") continue;
      // A literal is checked here; a variable is checked when the query runs (resolve.ts), also before any read.
      if (arg.value.kind === Kind.INT && (Number(arg.value.value) < 0 || (arg.name.value === "take" && Number(arg.value.value) > MAX_TAKE))) {
        context.reportError(new GraphQLError(`${arg.name.value}: ${arg.value.value} is out of range (0..${arg.name.value === "take" ? MAX_TAKE : "any"})`, { nodes: [arg] }));
      }
    }
  },
});
