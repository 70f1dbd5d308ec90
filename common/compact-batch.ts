/**
 * The compact batch (issue 37, DECISIONS.md section 19; docs/dapp.md "compact batch" gives it byte by
 * byte): the writes of a `batch` in a versioned binary layout that spends calldata only where it carries
 * information. Version 1:
 *
 *   0xC1 | version 0x01 | varint A | A addresses (20 bytes each) | varint N (1..256) | N items
 *   item: kind (u8) | varint L | body (L bytes)
 *     kind 0: attestation, kind 1: proven attestation (common/compact-item.ts)
 *     kind 2: any input as its JSON `{type, params}` text, applied as a `batch` item is
 *
 * 0xC1 never occurs in UTF-8, so no JSON input (no text at all) starts with it. A payload that cannot be
 * split into its items (an unknown version, a truncated item, trailing bytes) is rejected whole; an item
 * that cannot be read is rejected alone, naming its position and the byte. Ids, verdicts and notices are
 * those of the JSON batch of the same items: item `i` is item `i`.
 */
import type { Address, Hex } from "viem";
import { ByteProblem, ByteReader, ByteWriter, varintLength } from "./compact-bytes.ts";
import { attestationBytes, decodeAttestation, encodeAttestation, sameAttestation, CompactProblem, type AttestationBytes, type CompactSchema, type SchemaDirectory } from "./compact-item.ts";
import { bytesToHex, bytesToUtf8, hexToBytes } from "./hex.ts";
import { BATCH_MAX_ITEMS, type InputParams } from "./wire.ts";

export { CompactProblem, compactSchemaOf, compactSchemaOfDetail, type CompactSchema, type SchemaDirectory } from "./compact-item.ts";

const COMPACT_MARKER = 0xc1;
const COMPACT_VERSION = 1;
const ITEM_KIND = { attestation: 0, proven: 1, json: 2 } as const;
const ADDRESS_BYTES = 20;

/** One item as split from the payload: its kind, where it starts (its kind byte) and its body. */
export interface CompactSlice {
  kind: number;
  offset: number;
  body: Uint8Array;
  bodyOffset: number;
}

export interface CompactContainer {
  addresses: Address[];
  items: CompactSlice[];
}

/** Whether a payload is a compact batch rather than JSON text: its first byte. */
export function isCompactPayload(bytes: Uint8Array): boolean {
  return bytes[0] === COMPACT_MARKER;
}

/**
 * Splits a compact batch (`isCompactPayload`, which every caller asks first) into its address table and
 * items; a CompactProblem (no item) when it cannot.
 */
export function parseCompactBatch(bytes: Uint8Array): CompactContainer {
  if (!isCompactPayload(bytes)) throw new TypeError("parseCompactBatch: not a compact batch (ask isCompactPayload first)");
  const r = new ByteReader(bytes);
  try {
    r.u8("the marker");
    const version = r.u8("the version");
    if (version !== COMPACT_VERSION) throw new CompactProblem("INVALID_PAYLOAD", 1, `unknown version ${version} (this dapp reads version ${COMPACT_VERSION})`);
    const count = r.varint("the number of addresses");
    const addresses: Address[] = [];
    for (let i = 0; i < count; i++) addresses.push(bytesToHex(r.take(ADDRESS_BYTES, `address ${i}`)) as Address);
    const at = r.offset;
    const itemCount = r.varint("the number of items");
    if (itemCount < 1 || itemCount > BATCH_MAX_ITEMS) throw new CompactProblem("INVALID_PAYLOAD", at, `a batch holds 1 to ${BATCH_MAX_ITEMS} items, not ${itemCount}`);
    const items: CompactSlice[] = [];
    for (let item = 0; item < itemCount; item++) {
      const offset = r.offset;
      try {
        const kind = r.u8("the item's kind");
        const body = r.sized("the item's body");
        items.push({ kind, offset, body, bodyOffset: r.offset - body.length });
      } catch (error) {
        if (error instanceof ByteProblem) throw new CompactProblem("INVALID_PAYLOAD", error.offset, `item ${item} (at byte ${offset}) is truncated: ${error.reason}`);
        throw error;
      }
    }
    if (r.remaining > 0) throw new CompactProblem("INVALID_PAYLOAD", r.offset, `${r.remaining} trailing bytes after the last item`);
    return { addresses, items };
  } catch (error) {
    if (error instanceof ByteProblem) throw new CompactProblem("INVALID_PAYLOAD", error.offset, error.reason);
    throw error;
  }
}

/**
 * What item `item` stands for: `create_attestation` params for an attestation item, the parsed JSON of a
 * JSON item (checked as a `batch` item is). Throws a CompactProblem naming the item and the byte.
 */
export function compactItemToJson(container: CompactContainer, item: number, directory: SchemaDirectory): unknown {
  const slice = container.items[item] as CompactSlice;
  if (slice.kind === ITEM_KIND.attestation || slice.kind === ITEM_KIND.proven) {
    return decodeAttestation(slice.body, slice.bodyOffset, slice.kind === ITEM_KIND.proven, container.addresses, directory, item);
  }
  if (slice.kind === ITEM_KIND.json) {
    try {
      return JSON.parse(bytesToUtf8(slice.body)) as unknown;
    } catch {
      throw new CompactProblem("INVALID_PARAMS", slice.bodyOffset, "the item is not UTF-8 JSON", item);
    }
  }
  throw new CompactProblem("UNKNOWN_KIND", slice.offset, `unknown item kind ${slice.kind}`, item);
}

/** A write to put in a compact batch; `schema` (for an attestation) lets it travel compact. */
export interface CompactWrite {
  item: { type: string; params: unknown };
  schema?: CompactSchema | undefined;
}

export interface EncodedBatch {
  payload: Hex;
  /** Items that travel compact (the rest as JSON items). */
  compactItems: number;
}

/** The batch's address table: each address once, lower-cased, at the index of its first use. */
class AddressTable {
  readonly addresses: Address[] = [];
  private readonly where = new Map<string, number>();

  indexOf(address: Address): number {
    const key = address.toLowerCase() as Address;
    let index = this.where.get(key);
    if (index === undefined) {
      index = this.addresses.length;
      this.addresses.push(key);
      this.where.set(key, index);
    }
    return index;
  }

  /** Where the table ends now: `truncate` goes back to it. */
  mark(): number {
    return this.addresses.length;
  }

  truncate(mark: number): void {
    for (const dropped of this.addresses.splice(mark)) this.where.delete(dropped);
  }
}

/**
 * Encodes writes as a compact batch, item `i` at position `i`. An attestation with its schema travels
 * compact when decoding it gives back exactly its params (`sameAttestation`); anything else as JSON text.
 */
export function encodeCompactBatch(writes: readonly CompactWrite[]): EncodedBatch {
  if (writes.length < 1 || writes.length > BATCH_MAX_ITEMS) throw new RangeError(`a compact batch holds 1 to ${BATCH_MAX_ITEMS} items`);
  const table = new AddressTable();
  const items: { kind: number; body: Uint8Array }[] = [];
  let compactItems = 0;
  for (const [position, write] of writes.entries()) {
    const compact = write.schema === undefined || write.item.type !== "create_attestation" ? undefined : tryAttestation(write.item.params as InputParams["create_attestation"], write.schema, table, position);
    if (compact !== undefined) {
      items.push({ kind: compact.kind === "proven" ? ITEM_KIND.proven : ITEM_KIND.attestation, body: compact.body });
      compactItems += 1;
    } else {
      items.push({ kind: ITEM_KIND.json, body: new TextEncoder().encode(JSON.stringify(write.item)) });
    }
  }
  const w = new ByteWriter().u8(COMPACT_MARKER).u8(COMPACT_VERSION).varint(table.addresses.length);
  for (const address of table.addresses) w.bytes(hexToBytes(address));
  w.varint(items.length);
  for (const { kind, body } of items) w.u8(kind).sized(body);
  return { payload: bytesToHex(w.toBytes()), compactItems };
}

/** The item compact, if its decoding says exactly what it says; else undefined, the address table as it was. */
function tryAttestation(params: InputParams["create_attestation"], schema: CompactSchema, table: AddressTable, position: number): ReturnType<typeof encodeAttestation> {
  const mark = table.mark();
  try {
    const encoded = encodeAttestation(params, schema, (address) => table.indexOf(address));
    if (encoded !== undefined) {
      const back = decodeAttestation(encoded.body, 0, encoded.kind === "proven", table.addresses, (index) => (index === schema.index ? schema : undefined), position);
      if (sameAttestation(back.params, params)) return encoded;
    }
  } catch {
    // Params the layout cannot hold (a malformed claim, a value past a varint): a JSON item says them.
  }
  table.truncate(mark);
  return undefined;
}

/** Where a compact batch's bytes go, summed over its items (the bench's split per attestation). */
export interface CompactBytes extends AttestationBytes {
  /** Marker, version and the two counts. */
  header: number;
  addresses: number;
  /** Each item's kind and body length. */
  itemHeads: number;
  /** Items that travel as JSON text. */
  json: number;
}

/** The split of an encoded batch's bytes, read back from its payload (only the bench asks). */
export function compactBytes(payload: Hex, directory: SchemaDirectory): CompactBytes {
  const container = parseCompactBatch(hexToBytes(payload));
  const split: CompactBytes = {
    header: 2 + varintLength(container.addresses.length) + varintLength(container.items.length),
    addresses: container.addresses.length * ADDRESS_BYTES,
    itemHeads: 0,
    json: 0,
    schemaIndex: 0,
    owner: 0,
    bucket: 0,
    claims: 0,
    sealedData: 0,
  };
  for (const slice of container.items) {
    split.itemHeads += 1 + varintLength(slice.body.length);
    if (slice.kind === ITEM_KIND.json) {
      split.json += slice.body.length;
      continue;
    }
    const parts = attestationBytes(slice.body, slice.kind === ITEM_KIND.proven, container.addresses, directory);
    for (const key of ["schemaIndex", "owner", "bucket", "claims", "sealedData"] as const) split[key] += parts[key];
  }
  return split;
}
