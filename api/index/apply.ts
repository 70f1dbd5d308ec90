/**
 * One input's notices into the index, in one transaction with the index's progress (docs/index.md): a crash
 * before its commit leaves neither its rows nor the cursor past it, so the input is read again and applied
 * once. Notices are the dapp's own words; a node is outside the api, so a notice that is not what the dapp
 * writes is skipped rather than believed.
 */
import { eq, sql } from "drizzle-orm";
import { decodeAbiParameters, getAddress, isAddress, keccak256, concatHex, parseAbiParameters, zeroAddress, zeroHash, type Hex } from "viem";
import { DATA_SCHEMA, receiptData } from "../../common/receipt.ts";
import type { NoticeEvent } from "../../common/wire.ts";
import { announcedSchema } from "../rollup/catalog.ts";
import { decodeNotice } from "../rollup/follower.ts";
import type { InputOrigin, NoticeRecord } from "../rollup/node-reader.ts";
import type { IndexDb } from "./db.ts";
import { INDEX_CHANGED } from "./location.ts";
import { attestations, indexState, inputs, schemata } from "./schema.ts";

/**
 * Tells the index's readers, at the commit of `tx`, that what it holds changed (INDEX_CHANGED): PostgreSQL
 * delivers a notification when its transaction commits, and never one of a transaction rolled back.
 */
export async function announceChange(tx: IndexDb): Promise<void> {
  await tx.execute(sql`select pg_notify(${INDEX_CHANGED}, current_schema())`);
}

/** An input's place in `position`: notices per input stay far below 2^20 (a batch holds 256 items). */
export const POSITION_SHIFT = 2 ** 20;

/** One input as the indexer read it: its notices in order, who sent it, and its payload when a notice needs it. */
export interface IndexedInput {
  index: number;
  origin: InputOrigin;
  txid: string;
  notices: NoticeRecord[];
  /** Read only when a notice is a schema's registration, whose content only the input carries. */
  payload?: Hex;
}

const DATA_PARAMS = parseAbiParameters(DATA_SCHEMA);
const DATA_FIELDS = DATA_SCHEMA.split(",").map((f) => f.trim().split(" ") as [string, string]);

/** EAS's decodedDataJson: SchemaEncoder.decodeData's items, a uint as ethers' BigNumber JSON, as EAS's indexer stores them. */
export function decodedDataJson(data: Hex): string {
  if (data === "0x") return "[]";
  const values = decodeAbiParameters(DATA_PARAMS, data);
  return JSON.stringify(
    DATA_FIELDS.map(([type, name], i) => {
      const raw = values[i] as unknown;
      const value = typeof raw === "bigint" ? { type: "BigNumber", hex: `0x${raw.toString(16)}` } : raw;
      return { name, type, signature: `${type} ${name}`, value: { name, type, value } };
    }),
  );
}

/** What identifies an input's notices: a replayed node must say the same, byte for byte. */
export function noticesHash(payloads: readonly Hex[]): Hex {
  return keccak256(concatHex(payloads.map((p) => keccak256(p))));
}

export type Created = Extract<NoticeEvent, { event: "attestation:created" }>["data"];
type Revoked = Extract<NoticeEvent, { event: "attestation:revoked" }>["data"];

const isId = (v: unknown): v is Hex => typeof v === "string" && /^0x[0-9a-fA-F]{64}$/.test(v);
const address = (v: unknown): string => (typeof v === "string" && isAddress(v, { strict: false }) ? getAddress(v) : zeroAddress);

function wellFormedCreated(d: Partial<Created>): d is Created {
  return isId(d.claimId) && isId(d.schema_id) && typeof d.owner === "string" && typeof d.timestamp === "number" && typeof d.bucket_values === "object" && d.bucket_values !== null;
}

/** The row an `attestation:created` notice makes (the bench's bulk load makes its rows here too). */
export function attestationRow(d: Created, input: IndexedInput, notice: NoticeRecord, ordinal: number, proven: boolean): typeof attestations.$inferInsert {
  let data: Hex = "0x";
  // DATA_SCHEMA holds one bucketed field, as the receipt and the registry do; others have no EAS data.
  if (Object.keys(d.bucket_values).length === 1) data = receiptData(d);
  const attestors = d.attestors ?? (d.attestor === undefined ? [] : [d.attestor]);
  return {
    id: d.claimId.toLowerCase(),
    schemaId: d.schema_id.toLowerCase(),
    attester: address(d.attester),
    recipient: address(d.owner),
    refUID: zeroHash,
    revocable: true,
    revoked: false,
    revocationTime: 0,
    expirationTime: d.expires_at ?? 0,
    time: d.timestamp,
    timeCreated: d.timestamp,
    txid: input.txid,
    data,
    decodedDataJson: decodedDataJson(data),
    ipfsHash: "",
    isOffchain: false,
    provider: String(d.provider),
    bucketValues: d.bucket_values,
    attestors: attestors.map(address),
    freshnessHalfLife: typeof d.freshness_half_life === "number" ? d.freshness_half_life : 0,
    inputIndex: input.index,
    noticeIndex: notice.index,
    position: input.index * POSITION_SHIFT + ordinal,
    proven,
  };
}

/** The row of an input whose notices are applied (the bench's bulk load makes its rows here too). */
export function inputRow(input: IndexedInput, proven: boolean): typeof inputs.$inferInsert {
  return {
    index: input.index,
    sender: address(input.origin.sender),
    blockNumber: input.origin.blockNumber,
    time: input.origin.timestamp,
    txid: input.txid,
    notices: input.notices.length,
    noticesHash: noticesHash(input.notices.map((n) => n.payload)),
    proven,
  };
}

/** Rows most statements insert at once: 31 columns each stays below PostgreSQL's 65,535 parameters. */
const ROWS_PER_STATEMENT = 1_000;

/**
 * Rows of a transaction's inputs, written together: the indexer applies one input at a time, a bulk load
 * (the bench's) thousands, and both go through here so their rows are the same. Attestations made and
 * inputs read wait to be inserted many to a statement, each schema's count is added once; whatever reads
 * or changes rows already made (a revocation, a schema's registration) first writes what waits.
 */
class InputWriter {
  private readonly made: (typeof attestations.$inferInsert)[] = [];
  private readonly read: (typeof inputs.$inferInsert)[] = [];
  private readonly perSchema = new Map<string, number>();
  count = 0;

  constructor(
    private readonly tx: IndexDb,
    private readonly provenThrough: number,
  ) {}

  async write(input: IndexedInput): Promise<void> {
    const proven = input.index <= this.provenThrough;
    for (const [ordinal, notice] of input.notices.entries()) {
      const event = decodeNotice(notice.payload);
      if (event?.event === "attestation:created" && wellFormedCreated(event.data)) {
        const row = attestationRow(event.data, input, notice, ordinal, proven);
        this.made.push(row);
        this.perSchema.set(row.schemaId, (this.perSchema.get(row.schemaId) ?? 0) + 1);
        this.count++;
        if (this.made.length >= ROWS_PER_STATEMENT) await this.flushMade();
        continue;
      }
      if (event?.event === "attestation:revoked" && isId(event.data.claimId)) {
        // The revocation may name what this transaction made: what is made goes in first.
        await this.flushMade();
        const r: Revoked = event.data;
        await this.tx
          .update(attestations)
          .set({
            revoked: true,
            revocationTime: r.revoked_at,
            revoker: address(r.revoker),
            revocationReason: r.reason,
            supersededBy: r.superseded_by,
            revocationInput: input.index,
          })
          .where(eq(attestations.id, r.claimId.toLowerCase()));
      } else if (event?.event === "schema:registered" && isId(event.data.schema_id) && input.payload !== undefined) {
        const p = announcedSchema(input.payload, event.data.schema_id);
        if (p === undefined) continue;
        // Counts are added to a schema's row: the row must be there before attestations of it are counted.
        await this.flush();
        const [{ n } = { n: 0 }] = await this.tx.select({ n: sql<number>`count(*)::int` }).from(schemata);
        await this.tx.insert(schemata).values({
          id: event.data.schema_id.toLowerCase(),
          schema: DATA_SCHEMA,
          creator: address(input.origin.sender),
          resolver: zeroAddress,
          revocable: true,
          index: String(n + 1),
          txid: input.txid,
          time: input.origin.timestamp,
          name: p.name ?? "",
          provider: p.provider,
          description: p.description ?? "",
          attestationCount: 0,
          inputIndex: input.index,
          proven,
        });
      }
    }
    this.read.push(inputRow(input, proven));
    if (this.read.length >= ROWS_PER_STATEMENT) await this.flushRead();
  }

  /** Writes everything that waits. */
  async flush(): Promise<void> {
    await this.flushMade();
    for (const [id, n] of this.perSchema) {
      await this.tx.update(schemata).set({ attestationCount: sql`${schemata.attestationCount} + ${n}` }).where(eq(schemata.id, id));
    }
    this.perSchema.clear();
    await this.flushRead();
  }

  private async flushMade(): Promise<void> {
    if (this.made.length > 0) await this.tx.insert(attestations).values(this.made.splice(0));
  }

  private async flushRead(): Promise<void> {
    if (this.read.length > 0) await this.tx.insert(inputs).values(this.read.splice(0));
  }
}

/** Applies one input's notices and moves the index past it, in one transaction. */
export async function applyInput(db: IndexDb, input: IndexedInput, cursor: string | null, provenThrough: number): Promise<{ attestations: number }> {
  return applyInputs(db, [input], cursor, provenThrough);
}

/**
 * Applies inputs in order in one transaction and moves the index past the last: the indexer applies one at
 * a time; a bulk load (the bench's) many, with the same rows.
 */
export async function applyInputs(db: IndexDb, batch: readonly IndexedInput[], cursor: string | null, provenThrough: number): Promise<{ attestations: number }> {
  const last = batch[batch.length - 1];
  if (last === undefined) return { attestations: 0 };
  return db.transaction(async (t) => {
    const tx = t as unknown as IndexDb;
    const writer = new InputWriter(tx, provenThrough);
    for (const input of batch) await writer.write(input);
    await writer.flush();
    await tx
      .update(indexState)
      .set({ cursor, lastInput: last.index, attestationCount: sql`${indexState.attestationCount} + ${writer.count}` })
      .where(eq(indexState.id, 1));
    await announceChange(tx);
    return { attestations: writer.count };
  });
}
