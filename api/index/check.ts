/**
 * The index against the rollup (docs/index.md): every schema, and every attestation of every owner, as EAS's
 * GraphQL answers them from the index and as the dapp's inspect reads answer them, field by field; the first
 * difference is named. What the index covers is a prefix of the rollup's outputs: run it when both have
 * seen the same inputs (`npm run index:check`, the index suites).
 */
import { getAddress, zeroAddress, type Address } from "viem";
import type { AttestationListItem, SchemaSummary } from "../../common/wire.ts";
import type { RollupQueries } from "../rollup/inspect.ts";

export interface IndexComparison {
  schemata: number;
  owners: number;
  attestations: number;
  revoked: number;
  /** The first difference, in words; undefined when the index equals the rollup. */
  difference: string | undefined;
}

interface IndexedAttestation {
  id: string;
  schemaId: string;
  attester: string;
  recipient: string;
  time: number;
  expirationTime: number;
  revoked: boolean;
  revocationTime: number;
}

interface IndexedSchema {
  id: string;
  index: string;
  name: string;
  provider: string;
}

const ATTESTATION_FIELDS = "id schemaId attester recipient time expirationTime revoked revocationTime";

/** POSTs a query to an EAS GraphQL endpoint (the indexer's or the api's) and returns its data, or throws its errors. */
export async function graphqlData<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }), signal: AbortSignal.timeout(30_000) });
  const body = (await response.json()) as { data?: T; errors?: { message: string }[] };
  if (body.errors !== undefined && body.errors.length > 0) throw new Error(`${url}: ${body.errors.map((e) => e.message).join("; ")}`);
  if (body.data === undefined) throw new Error(`${url}: HTTP ${response.status} without data`);
  return body.data;
}

/** Every row of a list, paged by cursor as EAS's clients page. */
async function everyRow<T extends { id: string }>(url: string, field: string, args: string, selection: string, variables: Record<string, unknown>): Promise<T[]> {
  const out: T[] = [];
  for (let cursor: string | undefined; ; ) {
    const vars: Record<string, unknown> = { ...variables, ...(cursor === undefined ? {} : { cursor }) };
    const declared = Object.keys(vars).map((k) => `$${k}: String!`).join(", ");
    const paging = cursor === undefined ? "take: 100" : "take: 100, skip: 1, cursor: { id: $cursor }";
    const page = await graphqlData<Record<string, T[]>>(url, `query Page${declared === "" ? "" : `(${declared})`} { ${field}(${args === "" ? paging : `${args}, ${paging}`}) { ${selection} } }`, vars);
    const rows = page[field] ?? [];
    out.push(...rows);
    if (rows.length < 100) return out;
    cursor = rows[rows.length - 1]?.id;
  }
}

/** Every recipient the index knows, in order, paged by a `gt` filter (groupBy has no cursor). */
async function recipients(url: string): Promise<string[]> {
  const out: string[] = [];
  for (let after = ""; ; ) {
    const page = await graphqlData<{ groupByAttestation: { recipient: string }[] }>(url, `query Owners($after: String!) { groupByAttestation(by: [recipient], where: { recipient: { gt: $after } }, orderBy: [{ recipient: asc }], take: 100) { recipient } }`, { after });
    out.push(...page.groupByAttestation.map((g) => g.recipient));
    if (page.groupByAttestation.length < 100) return out;
    after = out[out.length - 1] as string;
  }
}

function attestationDifference(rollup: AttestationListItem, index: IndexedAttestation | undefined): string | undefined {
  if (index === undefined) return `attestation ${rollup.attestation_id} of ${rollup.owner} is in the rollup, not in the index`;
  const expected: IndexedAttestation = {
    id: rollup.attestation_id.toLowerCase(),
    schemaId: rollup.schema_id.toLowerCase(),
    attester: getAddress(rollup.attester ?? zeroAddress),
    recipient: getAddress(rollup.owner),
    time: rollup.timestamp,
    expirationTime: rollup.expires_at ?? 0,
    revoked: rollup.revocation !== null,
    revocationTime: rollup.revocation?.revoked_at ?? 0,
  };
  for (const key of Object.keys(expected) as (keyof IndexedAttestation)[]) {
    if (expected[key] !== index[key]) return `attestation ${expected.id}: ${key} is ${JSON.stringify(index[key])} in the index, ${JSON.stringify(expected[key])} in the rollup`;
  }
  return undefined;
}

/**
 * Compares the index behind `graphqlUrl` with the rollup behind `rollup`. Owners are those the index knows
 * and any the caller names (an owner the index has never seen is found only if named).
 */
export async function compareIndex(graphqlUrl: string, rollup: RollupQueries, extraOwners: readonly Address[] = []): Promise<IndexComparison> {
  const result: IndexComparison = { schemata: 0, owners: 0, attestations: 0, revoked: 0, difference: undefined };
  const rollupSchemata: SchemaSummary[] = await rollup.queryAll("all_provider_schemas", { include_index: true });
  const indexSchemata = await everyRow<IndexedSchema>(graphqlUrl, "schemata", "orderBy: [{ id: asc }]", "id index name provider", {});
  result.schemata = rollupSchemata.length;
  const byId = new Map(indexSchemata.map((s) => [s.id, s]));
  for (const s of rollupSchemata) {
    const indexed = byId.get(s.schema_id.toLowerCase());
    if (indexed === undefined) return { ...result, difference: `schema ${s.schema_id} is in the rollup, not in the index` };
    const expected = { index: String(s.schema_index ?? ""), name: s.name, provider: s.provider_type };
    for (const key of Object.keys(expected) as (keyof typeof expected)[]) {
      if (indexed[key] !== expected[key]) return { ...result, difference: `schema ${s.schema_id}: ${key} is ${JSON.stringify(indexed[key])} in the index, ${JSON.stringify(expected[key])} in the rollup` };
    }
    byId.delete(s.schema_id.toLowerCase());
  }
  const extra = [...byId.keys()][0];
  if (extra !== undefined) return { ...result, difference: `schema ${extra} is in the index, not in the rollup` };

  const owners = [...new Set([...(await recipients(graphqlUrl)), ...extraOwners.map((o) => getAddress(o))])].sort();
  result.owners = owners.length;
  for (const owner of owners) {
    const inRollup = await rollup.queryAll("attestations_by_owner", { owner: owner.toLowerCase() });
    const inIndex = await everyRow<IndexedAttestation>(graphqlUrl, "attestations", "where: { recipient: { equals: $owner } }, orderBy: [{ id: asc }]", ATTESTATION_FIELDS, { owner });
    const indexed = new Map(inIndex.map((a) => [a.id, a]));
    for (const a of inRollup) {
      const difference = attestationDifference(a, indexed.get(a.attestation_id.toLowerCase()));
      if (difference !== undefined) return { ...result, difference };
      indexed.delete(a.attestation_id.toLowerCase());
      result.attestations++;
      if (a.revocation !== null) result.revoked++;
    }
    const more = [...indexed.keys()][0];
    if (more !== undefined) return { ...result, difference: `attestation ${more} of ${owner} is in the index, not in the rollup` };
  }
  return result;
}
