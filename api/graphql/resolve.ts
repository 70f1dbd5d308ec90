/**
 * The answers to EAS's GraphQL queries (api/graphql/schema.ts) from the index of the rollup's notices
 * (api/index/): each list one SQL query with its filters, order and page bound as parameters, each
 * attestation's `schema` one query per answer (batched), counts without a filter from the index's counters.
 * The index holds only what notices say to anyone: the bucket, never the sealed value.
 */
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { GraphQLError, type GraphQLResolveInfo } from "graphql";
import { keccak256, stringToHex } from "viem";
import type { IndexDb } from "../index/db.ts";
import { attestations, indexState, schemata } from "../index/schema.ts";
import { MAX_SKIP, MAX_TAKE } from "./schema.ts";
import { attestationColumns, badInput, fromCursor, orderKeys, orderSql, whereSql, type OrderKey, type Where } from "./where.ts";

const BOOL_FIELDS = new Set(["revocable", "revoked", "isOffchain", "proven"]);

/** How the resolvers reach the index: each read under the reads' statement timeout. */
export interface IndexReads {
  read<T>(read: (db: IndexDb) => Promise<T>): Promise<T>;
}

interface ListArgs {
  distinct?: string[] | null;
  where?: Where | null;
  orderBy?: unknown;
  cursor?: { id: string } | null;
  take?: number | null;
  skip?: number | null;
}

type AttestationRow = typeof attestations.$inferSelect;
type SchemaRow = typeof schemata.$inferSelect;

/** Checks a list's paging before any read: a variable's `take` is only known here. */
function paging(args: ListArgs): { take: number; skip: number } {
  const take = args.take ?? MAX_TAKE;
  const skip = args.skip ?? 0;
  if (take < 0 || take > MAX_TAKE) throw badInput(`take: ${take} is out of range (0..${MAX_TAKE})`);
  if (skip < 0 || skip > MAX_SKIP) throw badInput(`skip: ${skip} is out of range (0..${MAX_SKIP}); page further with cursor`);
  return { take, skip };
}

const lowerId = (id: string): string => (/^0x[0-9a-fA-F]*$/.test(id) ? id.toLowerCase() : id);

/**
 * Prisma's `distinct`: of the rows with the same values of those fields, the first in the query's order.
 * The filter is the list's own (a cursor only moves where the answer starts).
 */
function distinctSql(fields: string[] | null | undefined, filter: SQL | undefined, keys: ReturnType<typeof orderKeys>): SQL | undefined {
  if (fields == null || fields.length === 0) return undefined;
  const columns = sql.join(fields.map((f) => sql`${attestationColumns[f]}`), sql`, `);
  return sql`${attestations.position} in (select distinct on (${columns}) ${attestations.position} from ${attestations} where ${filter ?? sql`true`} order by ${columns}, ${sql.join(orderSql(keys), sql`, `)})`;
}

/**
 * Prisma's `cursor` as a condition: the rows from the cursor's row on, in the list's order (undefined: no
 * cursor); null when no row has that id, so the answer is empty.
 */
async function cursorFrom(db: IndexDb, table: typeof attestations | typeof schemata, cursor: { id: string } | null | undefined, keys: OrderKey[]): Promise<SQL | undefined | null> {
  if (cursor == null) return undefined;
  const values = sql<unknown[]>`json_build_array(${sql.join(keys.map((k) => k.expr), sql`, `)})`;
  const [at] = await db.select({ values }).from(table).where(eq(table.id, lowerId(cursor.id)));
  return at === undefined ? null : fromCursor(keys, at.values);
}

const uniqueId = (where: { id?: string | null }): string => {
  if (where.id == null) throw badInput("where.id is required");
  return lowerId(where.id);
};

const orThrow = <T>(found: T | null, what: string): T => {
  if (found === null) throw new GraphQLError(`No ${what} found`, { extensions: { code: "NOT_FOUND" } });
  return found;
};

/** The names of the fields `info` selects under its field, fragments included. */
function selected(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const visit = (set: { selections: readonly unknown[] } | undefined): void => {
    for (const node of (set?.selections ?? []) as { kind: string; name: { value: string }; selectionSet?: { selections: readonly unknown[] } }[]) {
      if (node.kind === "Field") names.add(node.name.value);
      else if (node.kind === "InlineFragment") visit(node.selectionSet);
      else if (node.kind === "FragmentSpread") visit(info.fragments[node.name.value]?.selectionSet);
    }
  };
  for (const field of info.fieldNodes) visit(field.selectionSet);
  return names;
}

/** The root value of one request: its schema loads are batched into one query per tick. */
export function indexRoot(index: IndexReads) {
  // Schemas asked in one tick (every attestation of a list asks its own) are read in one query.
  let wave: { ids: Set<string>; rows: Promise<Map<string, SchemaRow>> } | undefined;
  const loadSchema = (id: string): Promise<SchemaRow | undefined> => {
    if (wave === undefined) {
      const ids = new Set<string>();
      const rows = Promise.resolve().then(async () => {
        wave = undefined;
        const found = await index.read((db) => db.select().from(schemata).where(inArray(schemata.id, [...ids])));
        return new Map(found.map((r) => [r.id, r]));
      });
      wave = { ids, rows };
    }
    wave.ids.add(id);
    return wave.rows.then((m) => m.get(id));
  };

  const attestationObject = (row: AttestationRow) => ({
    ...row,
    schema: async () => {
      const schema = await loadSchema(row.schemaId);
      if (schema === undefined) throw new Error(`the index has no schema ${row.schemaId}`);
      return schemaObject(schema);
    },
  });

  const schemaObject = (row: SchemaRow) => ({
    ...row,
    attestations: (args: ListArgs) => listAttestations(args, eq(attestations.schemaId, row.id)),
    schemaNames: row.name === "" ? [] : [{ id: keccak256(stringToHex(`${row.id}:${row.name}`)), schemaId: row.id, attesterAddress: row.creator, name: row.name, time: row.time, isCreator: true }],
    _count: { attestations: row.attestationCount, schemaNames: row.name === "" ? 0 : 1 },
  });

  async function listAttestations(args: ListArgs, scope?: SQL): Promise<ReturnType<typeof attestationObject>[]> {
    const { take, skip } = paging(args);
    const keys = orderKeys("attestation", args.orderBy);
    const filter = whereSql("attestation", args.where);
    if (take === 0) return [];
    const rows = await index.read(async (db) => {
      const from = await cursorFrom(db, attestations, args.cursor, keys);
      if (from === null) return [];
      return db.select().from(attestations).where(and(scope, filter, from, distinctSql(args.distinct, and(scope, filter), keys))).orderBy(...orderSql(keys)).limit(take).offset(skip);
    });
    return rows.map(attestationObject);
  }

  async function listSchemata(args: ListArgs): Promise<ReturnType<typeof schemaObject>[]> {
    const { take, skip } = paging(args);
    const keys = orderKeys("schema", args.orderBy);
    const filter = whereSql("schema", args.where);
    if (take === 0) return [];
    const rows = await index.read(async (db) => {
      const from = await cursorFrom(db, schemata, args.cursor, keys);
      if (from === null) return [];
      return db.select().from(schemata).where(and(filter, from)).orderBy(...orderSql(keys)).limit(take).offset(skip);
    });
    return rows.map(schemaObject);
  }

  /** How many attestations match: from the counters when no filter (or a schema's alone) needs a scan. */
  async function countAttestations(where: Where | null | undefined): Promise<number> {
    const entries = Object.entries(where ?? {}).filter(([, v]) => v != null);
    if (entries.length === 0) {
      const [state] = await index.read((db) => db.select({ n: indexState.attestationCount }).from(indexState).where(eq(indexState.id, 1)));
      return state?.n ?? 0;
    }
    const schemaId = (where?.schemaId as { equals?: unknown } | undefined)?.equals;
    if (entries.length === 1 && typeof where?.schemaId === "object" && Object.keys(where.schemaId as object).length === 1 && typeof schemaId === "string") {
      const [schema] = await index.read((db) => db.select({ n: schemata.attestationCount }).from(schemata).where(eq(schemata.id, lowerId(schemaId))));
      return schema?.n ?? 0;
    }
    const filter = whereSql("attestation", where);
    const [row] = await index.read((db) => db.select({ n: sql<number>`count(*)::int` }).from(attestations).where(filter));
    return row?.n ?? 0;
  }

  async function oneAttestation(where: { id?: string | null }) {
    const id = uniqueId(where);
    const [row] = await index.read((db) => db.select().from(attestations).where(eq(attestations.id, id)));
    return row === undefined ? null : attestationObject(row);
  }

  async function oneSchema(where: { id?: string | null }) {
    const id = uniqueId(where);
    const [row] = await index.read((db) => db.select().from(schemata).where(eq(schemata.id, id)));
    return row === undefined ? null : schemaObject(row);
  }

  const countsOf = (fields: string[], n: number): Record<string, number> => Object.fromEntries([...fields.map((f) => [f, n]), ["_all", n]]);

  return {
    attestation: (args: { where: { id?: string | null } }) => oneAttestation(args.where),
    getAttestation: async (args: { where: { id?: string | null } }) => orThrow(await oneAttestation(args.where), "Attestation"),
    attestations: (args: ListArgs) => listAttestations(args),
    async findFirstAttestation(args: ListArgs) {
      return (await listAttestations({ ...args, take: 1 }))[0] ?? null;
    },
    async findFirstAttestationOrThrow(args: ListArgs) {
      return orThrow((await listAttestations({ ...args, take: 1 }))[0] ?? null, "Attestation");
    },
    async aggregateAttestation(args: { where?: Where | null }, _context: unknown, info: GraphQLResolveInfo) {
      const asked = selected(info);
      const out: Record<string, unknown> = {};
      if (asked.has("_count")) out._count = countsOf(Object.keys(attestationColumns), await countAttestations(args.where));
      const extremes = ["_min", "_max", "_avg", "_sum"].filter((a) => asked.has(a));
      if (extremes.length > 0) {
        const filter = whereSql("attestation", args.where);
        const parts: SQL[] = [];
        for (const [field, column] of Object.entries(attestationColumns)) {
          // Booleans have no min or max in PostgreSQL: false < true, so bool_and and bool_or are theirs.
          const bool = BOOL_FIELDS.has(field);
          parts.push(bool ? sql`${field + ":min"}::text, bool_and(${column})` : sql`${field + ":min"}::text, min(${column})`);
          parts.push(bool ? sql`${field + ":max"}::text, bool_or(${column})` : sql`${field + ":max"}::text, max(${column})`);
        }
        for (const field of ["time", "timeCreated", "expirationTime", "revocationTime", "inputIndex"]) {
          const column = attestationColumns[field];
          parts.push(sql`${field + ":avg"}::text, avg(${column})::float8`, sql`${field + ":sum"}::text, sum(${column})::float8`);
        }
        const [row] = await index.read((db) =>
          db.select({ all: sql<Record<string, unknown>>`json_build_object(${sql.join(parts, sql`, `)})`.mapWith((v: unknown) => v as Record<string, unknown>) }).from(attestations).where(filter),
        );
        for (const agg of extremes) {
          const suffix = agg.slice(1);
          out[agg] = Object.fromEntries(Object.entries(row?.all ?? {}).filter(([k]) => k.endsWith(`:${suffix}`)).map(([k, v]) => [k.slice(0, -suffix.length - 1), v]));
        }
      }
      return out;
    },
    async groupByAttestation(args: ListArgs & { by: string[] }) {
      const { take, skip } = paging(args);
      if (args.by.length === 0) throw badInput("by: name at least one field");
      const columns = args.by.map((f) => [f, attestationColumns[f]] as const);
      const filter = whereSql("attestation", args.where);
      const orders: SQL[] = [];
      for (const item of (Array.isArray(args.orderBy) ? args.orderBy : args.orderBy == null ? [] : [args.orderBy]) as Record<string, unknown>[]) {
        for (const [field, dir] of Object.entries(item)) {
          if (dir == null) continue;
          if (field === "_count") {
            for (const d of Object.values(dir as Record<string, unknown>)) if (d != null) orders.push(d === "desc" ? sql`count(*) desc` : sql`count(*) asc`);
            continue;
          }
          if (!args.by.includes(field)) throw badInput(`orderBy: ${field} is not among by`);
          orders.push(dir === "desc" ? sql`${attestationColumns[field]} desc` : sql`${attestationColumns[field]} asc`);
        }
      }
      const groups = sql.join(columns.map(([, c]) => sql`${c}`), sql`, `);
      const rows = await index.read((db) =>
        db
          .select({ key: sql<unknown[]>`json_build_array(${groups})`, n: sql<number>`count(*)::int` })
          .from(attestations)
          .where(filter)
          .groupBy(...columns.map(([, c]) => sql`${c}`))
          .orderBy(...orders, ...columns.map(([, c]) => sql`${c}`))
          .limit(take)
          .offset(skip),
      );
      return rows.map((r) => ({ ...Object.fromEntries(columns.map(([f], i) => [f, r.key[i]])), _count: countsOf(Object.keys(attestationColumns), r.n) }));
    },
    schema: (args: { where: { id?: string | null } }) => oneSchema(args.where),
    getSchema: async (args: { where: { id?: string | null } }) => orThrow(await oneSchema(args.where), "Schema"),
    schemata: (args: ListArgs) => listSchemata(args),
    async findFirstSchema(args: ListArgs) {
      return (await listSchemata({ ...args, take: 1 }))[0] ?? null;
    },
    async findFirstSchemaOrThrow(args: ListArgs) {
      return orThrow((await listSchemata({ ...args, take: 1 }))[0] ?? null, "Schema");
    },
    async aggregateSchema(args: { where?: Where | null }) {
      const filter = whereSql("schema", args.where);
      const [row] = await index.read((db) => db.select({ n: sql<number>`count(*)::int` }).from(schemata).where(filter));
      return { _count: countsOf(["id", "schema", "creator", "resolver", "revocable", "index", "txid", "time", "name", "provider"], row?.n ?? 0) };
    },
  };
}
