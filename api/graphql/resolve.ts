/**
 * The answers to EAS's GraphQL queries (api/graphql/schema.ts) from the rollup's reads, the same reads REST
 * makes (through the readers when there are any), so a field says what REST says to anyone: the bucket,
 * never the sealed value, which no field carries. `txid` and `schema` are read only when asked.
 */
import { GraphQLError } from "graphql";
import { decodeAbiParameters, getAddress, parseAbiParameters, zeroHash, type Hex } from "viem";
import { DATA_SCHEMA, receiptMessage } from "../../common/receipt.ts";
import type { AttestationView, SchemaDetail, SchemaSummary } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import { receiptSourceOf } from "../receipts.ts";
import { inputTransaction } from "../rollup/chain-reader.ts";
import type { ApiServices } from "../services.ts";
import { MAX_TAKE } from "./schema.ts";

interface StringFilter {
  equals?: string | null;
  in?: string[] | null;
}
interface AttestationWhere {
  id?: StringFilter | null;
  recipient?: StringFilter | null;
  schemaId?: StringFilter | null;
  attester?: StringFilter | null;
  revoked?: { equals?: boolean | null } | null;
}
interface ListArgs {
  where?: AttestationWhere | null;
  orderBy?: { time?: "asc" | "desc" | null }[] | null;
  take?: number | null;
  skip?: number | null;
}

const DATA_PARAMS = parseAbiParameters(DATA_SCHEMA);
const DATA_FIELDS = DATA_SCHEMA.split(",").map((f) => f.trim().split(" ") as [string, string]);

/** EAS's decodedDataJson: SchemaEncoder.decodeData's items, a uint as ethers' BigNumber JSON, as the indexer stores them. */
function decodedDataJson(data: Hex): string {
  const values = decodeAbiParameters(DATA_PARAMS, data);
  return JSON.stringify(
    DATA_FIELDS.map(([type, name], i) => {
      const raw = values[i] as unknown;
      const value = typeof raw === "bigint" ? { type: "BigNumber", hex: `0x${raw.toString(16)}` } : raw;
      return { name, type, signature: `${type} ${name}`, value: { name, type, value } };
    }),
  );
}

function schemaObject(s: SchemaSummary) {
  return { id: s.schema_id, schema: DATA_SCHEMA, resolver: "0x0000000000000000000000000000000000000000", revocable: true, index: String(s.schema_index ?? ""), name: s.name, provider: s.provider_type };
}

/** Checks a list's paging before any read: a variable's `take` is only known here. */
function paging(args: ListArgs): { take: number; skip: number } {
  const take = args.take ?? MAX_TAKE;
  const skip = args.skip ?? 0;
  if (take < 0 || take > MAX_TAKE) throw new GraphQLError(`take: ${take} is out of range (0..${MAX_TAKE})`, { extensions: { code: "BAD_USER_INPUT" } });
  if (skip < 0) throw new GraphQLError(`skip: ${skip} is out of range (0 or more)`, { extensions: { code: "BAD_USER_INPUT" } });
  return { take, skip };
}

const matches = (filter: StringFilter | null | undefined, value: string): boolean =>
  filter == null || ((filter.equals == null || filter.equals.toLowerCase() === value.toLowerCase()) && (filter.in == null || filter.in.some((v) => v.toLowerCase() === value.toLowerCase())));

export function graphqlRoot(services: ApiServices) {
  const schemaOf = (id: Hex): Promise<SchemaDetail> => services.schemaDetail(id);

  const attestationObject = async (view: AttestationView, blockNumber?: number) => {
    const detail = await schemaOf(view.schema_id);
    const data = Object.keys(view.bucket_values).length === 1 ? receiptMessage(receiptSourceOf(view, detail)).data : "0x";
    return {
      id: view.attestation_id,
      schemaId: view.schema_id,
      attester: getAddress(view.attester ?? "0x0000000000000000000000000000000000000000"),
      recipient: getAddress(view.owner),
      refUID: zeroHash,
      revocable: true,
      revocationTime: view.revocation?.revoked_at ?? 0,
      expirationTime: view.expires_at ?? 0,
      time: view.timestamp,
      timeCreated: view.timestamp,
      data,
      decodedDataJson: data === "0x" ? "[]" : decodedDataJson(data),
      isOffchain: false,
      revoked: view.revocation !== null,
      schema: () => schemaObject(detail),
      txid: async () => {
        const block = blockNumber ?? (await services.node.inputBlock(view.input_index));
        const { inputBoxAddress, dappAddress, rollups } = services.config;
        return (await inputTransaction(services.submitter.publicClient, inputBoxAddress, dappAddress, view.input_index, block, rollups)) ?? "";
      },
    };
  };

  /** The attestations `where` names, in creation order: an owner's list, or the ids asked for. */
  const selected = async (where: AttestationWhere | null | undefined): Promise<{ view: AttestationView; block?: number }[]> => {
    const owner = where?.recipient?.equals;
    const ids = where?.id?.equals != null ? [where.id.equals] : (where?.id?.in ?? undefined);
    let found: { view: AttestationView; block?: number }[];
    if (owner != null) {
      found = (await services.reader.queryAll("attestations_by_owner", { owner: owner.toLowerCase(), at: services.now() })).map((item) => ({ view: item, block: item.block_number }));
    } else if (ids !== undefined) {
      if (ids.length > MAX_TAKE) throw new GraphQLError(`id.in: ${ids.length} ids; at most ${MAX_TAKE}`, { extensions: { code: "BAD_USER_INPUT" } });
      found = [];
      for (const id of ids) {
        const view = await one(id);
        if (view !== null) found.push({ view });
      }
    } else {
      throw new GraphQLError("attestations: where.recipient.equals (or where.id) is required: the rollup lists attestations by their owner", { extensions: { code: "BAD_USER_INPUT" } });
    }
    return found.filter(
      ({ view }) =>
        matches(where?.recipient, view.owner) &&
        matches(where?.schemaId, view.schema_id) &&
        matches(where?.attester, view.attester ?? "") &&
        matches(where?.id, view.attestation_id) &&
        (where?.revoked?.equals == null || where.revoked.equals === (view.revocation !== null)),
    );
  };

  /** One attestation by id, or null when the rollup has none (any other failure is the query's error). */
  const one = async (id: string): Promise<AttestationView | null> => {
    if (!/^0x[0-9a-fA-F]{64}$/.test(id)) return null;
    try {
      return await services.reader.query("attestation", { attestation_id: id.toLowerCase(), at: services.now() });
    } catch (error) {
      if (error instanceof ApiError && error.code === "ATTESTATION_NOT_FOUND") return null;
      throw error;
    }
  };

  return {
    async attestation(args: { where: { id: string } }) {
      const view = await one(args.where.id);
      return view === null ? null : attestationObject(view);
    },
    async attestations(args: ListArgs) {
      const { take, skip } = paging(args);
      const found = await selected(args.where);
      if (args.orderBy?.some((o) => o.time === "desc") === true) found.sort((a, b) => b.view.timestamp - a.view.timestamp);
      else if (args.orderBy?.some((o) => o.time === "asc") === true) found.sort((a, b) => a.view.timestamp - b.view.timestamp);
      return Promise.all(found.slice(skip, skip + take).map(({ view, block }) => attestationObject(view, block)));
    },
    async aggregateAttestation(args: { where?: AttestationWhere | null }) {
      return { _count: { _all: (await selected(args.where)).length } };
    },
    async schema(args: { where: { id: string } }) {
      if (!/^0x[0-9a-fA-F]{64}$/.test(args.where.id)) return null;
      try {
        return schemaObject(await schemaOf(args.where.id.toLowerCase() as Hex));
      } catch (error) {
        if (error instanceof ApiError && error.code === "SCHEMA_NOT_FOUND") return null;
        throw error;
      }
    },
    async schemata(args: { where?: { id?: StringFilter | null } | null; take?: number | null; skip?: number | null }) {
      const { take, skip } = paging(args);
      const all = await services.reader.queryAll("all_provider_schemas", { include_index: true });
      return all.filter((s) => matches(args.where?.id, s.schema_id)).slice(skip, skip + take).map(schemaObject);
    },
  };
}
