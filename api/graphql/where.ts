/**
 * EAS's GraphQL arguments (Prisma's, as its indexer generates them) into SQL over the index: `where` with
 * every field's filter and `AND`/`OR`/`NOT`, relation filters (`schema: { is }`, `attestations: { some }`),
 * `orderBy` on several fields, and `cursor`. Every value is a bound parameter; a filter too large or too
 * deep is refused here, before any read.
 */
import { and, not, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { GraphQLError } from "graphql";
import { getAddress, isAddress } from "viem";
import { attestations, schemata } from "../index/schema.ts";

/** Most nested `AND`/`OR`/`NOT`/relation levels in one `where`. */
export const MAX_WHERE_DEPTH = 6;
/** Most field filters in one `where`, all levels together. */
export const MAX_WHERE_FILTERS = 64;
/** Most values of one `in`/`notIn`. */
export const MAX_IN = 100;

export const badInput = (message: string): GraphQLError => new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

type Kind = "string" | "int" | "bool";
/** How a filter value is written the way the index stores it: ids lower-case, addresses checksummed. */
type Normal = "id" | "address" | undefined;

interface Field {
  column: SQLWrapper;
  kind: Kind;
  normal?: Normal;
}

export type Filter = Record<string, unknown>;
export type Where = Record<string, unknown>;

const ATTESTATION_FIELDS: Record<string, Field> = {
  id: { column: attestations.id, kind: "string", normal: "id" },
  data: { column: attestations.data, kind: "string" },
  decodedDataJson: { column: attestations.decodedDataJson, kind: "string" },
  recipient: { column: attestations.recipient, kind: "string", normal: "address" },
  attester: { column: attestations.attester, kind: "string", normal: "address" },
  time: { column: attestations.time, kind: "int" },
  timeCreated: { column: attestations.timeCreated, kind: "int" },
  expirationTime: { column: attestations.expirationTime, kind: "int" },
  revocationTime: { column: attestations.revocationTime, kind: "int" },
  refUID: { column: attestations.refUID, kind: "string", normal: "id" },
  revocable: { column: attestations.revocable, kind: "bool" },
  revoked: { column: attestations.revoked, kind: "bool" },
  txid: { column: attestations.txid, kind: "string", normal: "id" },
  schemaId: { column: attestations.schemaId, kind: "string", normal: "id" },
  ipfsHash: { column: attestations.ipfsHash, kind: "string" },
  isOffchain: { column: attestations.isOffchain, kind: "bool" },
  proven: { column: attestations.proven, kind: "bool" },
  inputIndex: { column: attestations.inputIndex, kind: "int" },
};

const SCHEMA_FIELDS: Record<string, Field> = {
  id: { column: schemata.id, kind: "string", normal: "id" },
  schema: { column: schemata.schema, kind: "string" },
  creator: { column: schemata.creator, kind: "string", normal: "address" },
  resolver: { column: schemata.resolver, kind: "string", normal: "address" },
  revocable: { column: schemata.revocable, kind: "bool" },
  index: { column: schemata.index, kind: "string" },
  txid: { column: schemata.txid, kind: "string", normal: "id" },
  time: { column: schemata.time, kind: "int" },
  name: { column: schemata.name, kind: "string" },
  provider: { column: schemata.provider, kind: "string" },
};

/** The columns of each model's scalar fields, for ordering, grouping and aggregates. */
export const attestationColumns = Object.fromEntries(Object.entries(ATTESTATION_FIELDS).map(([k, f]) => [k, f.column])) as Record<string, SQLWrapper>;
export const schemaColumns = Object.fromEntries(Object.entries(SCHEMA_FIELDS).map(([k, f]) => [k, f.column])) as Record<string, SQLWrapper>;

function normalized(value: string, normal: Normal): string {
  if (normal === "id" && /^0x[0-9a-fA-F]*$/.test(value)) return value.toLowerCase();
  if (normal === "address" && isAddress(value, { strict: false })) return getAddress(value);
  return value;
}

const likeEscaped = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Counts filters and depth as the translation goes, so a huge `where` fails before any read. */
class Budget {
  private filters = 0;
  spend(depth: number): void {
    if (depth > MAX_WHERE_DEPTH) throw badInput(`where: nested ${depth} levels deep; at most ${MAX_WHERE_DEPTH}`);
    if (++this.filters > MAX_WHERE_FILTERS) throw badInput(`where: more than ${MAX_WHERE_FILTERS} filters`);
  }
}

function list(values: unknown, name: string): unknown[] {
  const items = values as unknown[];
  if (items.length > MAX_IN) throw badInput(`${name}: ${items.length} values; at most ${MAX_IN}`);
  return items;
}

/** One field's filter (`{ equals, in, gt, contains, not, mode, ... }`) as SQL, all its parts together. */
function fieldFilter(name: string, field: Field, filter: Filter, depth: number, budget: Budget): SQL | undefined {
  budget.spend(depth);
  const insensitive = filter.mode === "insensitive";
  const col = insensitive ? sql`lower(${field.column})` : sql`${field.column}`;
  const value = (v: unknown): unknown => {
    if (field.kind !== "string" || typeof v !== "string") return v;
    return insensitive ? v.toLowerCase() : normalized(v, field.normal);
  };
  const parts: SQL[] = [];
  for (const [op, raw] of Object.entries(filter)) {
    if (raw === null || raw === undefined || op === "mode") continue;
    switch (op) {
      case "equals":
        parts.push(sql`${col} = ${value(raw)}`);
        break;
      case "in": {
        const items = list(raw, `${name}.in`).map(value);
        parts.push(items.length === 0 ? sql`false` : sql`${col} in (${sql.join(items.map((v) => sql`${v}`), sql`, `)})`);
        break;
      }
      case "notIn": {
        const items = list(raw, `${name}.notIn`).map(value);
        if (items.length > 0) parts.push(sql`${col} not in (${sql.join(items.map((v) => sql`${v}`), sql`, `)})`);
        break;
      }
      case "lt":
        parts.push(sql`${col} < ${value(raw)}`);
        break;
      case "lte":
        parts.push(sql`${col} <= ${value(raw)}`);
        break;
      case "gt":
        parts.push(sql`${col} > ${value(raw)}`);
        break;
      case "gte":
        parts.push(sql`${col} >= ${value(raw)}`);
        break;
      case "contains":
        parts.push(sql`${col} like ${`%${likeEscaped(String(value(raw)))}%`}`);
        break;
      case "startsWith":
        parts.push(sql`${col} like ${`${likeEscaped(String(value(raw)))}%`}`);
        break;
      case "endsWith":
        parts.push(sql`${col} like ${`%${likeEscaped(String(value(raw)))}`}`);
        break;
      case "not": {
        // `not` takes a value or a nested filter, as Prisma's does; a nested one keeps this filter's mode.
        const nested = typeof raw === "object" ? (raw as Filter) : { equals: raw };
        const inner = fieldFilter(name, field, insensitive ? { ...nested, mode: "insensitive" } : nested, depth + 1, budget);
        if (inner !== undefined) parts.push(not(inner));
        break;
      }
      default:
        throw badInput(`${name}: unknown filter ${op}`);
    }
  }
  return parts.length === 0 ? undefined : and(...parts);
}

type Model = "attestation" | "schema";

/** A `where` of either model as SQL; undefined when it filters nothing. */
export function whereSql(model: Model, where: Where | null | undefined, depth = 0, budget = new Budget()): SQL | undefined {
  if (where == null) return undefined;
  const fields = model === "attestation" ? ATTESTATION_FIELDS : SCHEMA_FIELDS;
  const parts: SQL[] = [];
  const each = (value: unknown): Where[] => (Array.isArray(value) ? (value as Where[]) : [value as Where]);
  for (const [key, value] of Object.entries(where)) {
    if (value === null || value === undefined) continue;
    if (key === "AND" || key === "OR" || key === "NOT") {
      budget.spend(depth + 1);
      const inner = each(value).map((w) => whereSql(model, w, depth + 1, budget) ?? sql`true`);
      if (key === "AND") parts.push(and(...inner) ?? sql`true`);
      else if (key === "OR") parts.push(inner.length === 0 ? sql`false` : (or(...inner) ?? sql`false`));
      else parts.push(not(and(...inner) ?? sql`true`));
      continue;
    }
    if (model === "attestation" && key === "schema") {
      parts.push(...schemaRelation(value as Where, depth + 1, budget));
      continue;
    }
    if (model === "schema" && key === "attestations") {
      parts.push(...attestationsRelation(value as Where, depth + 1, budget));
      continue;
    }
    const field = fields[key];
    if (field === undefined) throw badInput(`where: unknown field ${key}`);
    // A bare value is Prisma's shorthand for `equals`.
    const filter = typeof value === "object" ? (value as Filter) : { equals: value };
    const part = fieldFilter(key, field, filter, depth, budget);
    if (part !== undefined) parts.push(part);
  }
  return parts.length === 0 ? undefined : and(...parts);
}

/** `schema: { is, isNot }` on an attestation: its schema row does (or does not) match. */
function schemaRelation(filter: Where, depth: number, budget: Budget): SQL[] {
  const exists = (w: Where | undefined): SQL => sql`exists (select 1 from ${schemata} where ${schemata.id} = ${attestations.schemaId} and ${whereSql("schema", w, depth, budget) ?? sql`true`})`;
  const out: SQL[] = [];
  if (filter.is != null) out.push(exists(filter.is as Where));
  if (filter.isNot != null) out.push(not(exists(filter.isNot as Where)));
  return out;
}

/** `attestations: { some, every, none }` on a schema. */
function attestationsRelation(filter: Where, depth: number, budget: Budget): SQL[] {
  const exists = (cond: SQL): SQL => sql`exists (select 1 from ${attestations} where ${attestations.schemaId} = ${schemata.id} and ${cond})`;
  const out: SQL[] = [];
  if (filter.some != null) out.push(exists(whereSql("attestation", filter.some as Where, depth, budget) ?? sql`true`));
  if (filter.none != null) out.push(not(exists(whereSql("attestation", filter.none as Where, depth, budget) ?? sql`true`)));
  if (filter.every != null) out.push(not(exists(not(whereSql("attestation", filter.every as Where, depth, budget) ?? sql`true`))));
  return out;
}

export interface OrderKey {
  expr: SQL;
  desc: boolean;
}

/**
 * `orderBy` (one object or a list, each of one or more fields in order) as keys, ending with each model's
 * unique key (an attestation's creation order, a schema's id), so that ties, `skip` and `cursor` are stable.
 */
export function orderKeys(model: Model, orderBy: unknown): OrderKey[] {
  const items = orderBy == null ? [] : Array.isArray(orderBy) ? (orderBy as Record<string, unknown>[]) : [orderBy as Record<string, unknown>];
  const columns = model === "attestation" ? attestationColumns : schemaColumns;
  const keys: OrderKey[] = [];
  for (const item of items) {
    for (const [field, direction] of Object.entries(item)) {
      if (direction == null) continue;
      if (model === "attestation" && field === "schema") {
        for (const [sub, dir] of Object.entries(direction as Record<string, unknown>)) {
          const column = schemaColumns[sub];
          if (column === undefined || (dir !== "asc" && dir !== "desc")) throw badInput(`orderBy.schema: cannot order by ${sub}`);
          keys.push({ expr: sql`(select ${column} from ${schemata} where ${schemata.id} = ${attestations.schemaId})`, desc: dir === "desc" });
        }
        continue;
      }
      if (model === "schema" && field === "attestations") {
        const dir = (direction as { _count?: unknown })._count;
        if (dir !== "asc" && dir !== "desc") throw badInput("orderBy.attestations: only _count orders schemata by their attestations");
        keys.push({ expr: sql`${schemata.attestationCount}`, desc: dir === "desc" });
        continue;
      }
      const column = columns[field];
      if (column === undefined || (direction !== "asc" && direction !== "desc")) throw badInput(`orderBy: cannot order by ${field}`);
      keys.push({ expr: sql`${column}`, desc: direction === "desc" });
    }
  }
  const last = keys[keys.length - 1]?.desc ?? false;
  keys.push(model === "attestation" ? { expr: sql`${attestations.position}`, desc: last } : { expr: sql`${schemata.id}`, desc: last });
  return keys;
}

/** The keys as an ORDER BY list. */
export function orderSql(keys: OrderKey[]): SQL[] {
  return keys.map((k) => (k.desc ? sql`${k.expr} desc` : sql`${k.expr} asc`));
}

/**
 * Prisma's `cursor`: the rows from the cursor's row on, in the query's order (the row itself included;
 * `skip: 1` leaves it out), given that row's values of the keys.
 */
export function fromCursor(keys: OrderKey[], values: unknown[]): SQL {
  const branches: SQL[] = [];
  for (let i = 0; i < keys.length; i++) {
    const equal = keys.slice(0, i).map((k, j) => sql`${k.expr} = ${values[j]}`);
    const key = keys[i] as OrderKey;
    branches.push(and(...equal, key.desc ? sql`${key.expr} < ${values[i]}` : sql`${key.expr} > ${values[i]}`) as SQL);
  }
  branches.push(and(...keys.map((k, j) => sql`${k.expr} = ${values[j]}`)) as SQL);
  return or(...branches) as SQL;
}
