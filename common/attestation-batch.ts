/**
 * The batch notice (issue 44; contracts/AttestationBatch.sol reads it, docs/eas.md has the layout): beside
 * its JSON notices, the dapp emits one binary notice for every input that made or revoked attestations a
 * contract can hold, so that one proof brings them all on chain and no text is formatted or parsed there.
 * Built from the input's own JSON notices and, for each kind, whether its schema is unique per account (the
 * schema's registration, issue 52), so it says nothing the rollup's state does not.
 *
 *     tag bytes4 | inputIndex uint64 | time uint64 | sender address | kindCount uint8 | kinds
 *     | createdCount uint16 | created (item uint16, owner address, kind uint8)
 *     | revokedCount uint16 | revoked (uid bytes32, owner address, schemaId bytes32)
 *     kind: schemaId bytes32 | halfLife uint64 | validity uint64 | flags uint8 | provider, field, bucket
 *           (uint16 length + UTF-8) | attestorCount uint8 | attestors address[]
 *     flags: bit 0 = the schema is unique per account; every other bit zero
 */
import { bytesToHex, concatHex, encodePacked, hexToBytes, keccak256, stringToBytes, toHex, type Address, type Hex } from "viem";
import { writeIdOf } from "./ids.ts";
import type { NoticeEvent } from "./wire.ts";

/**
 * bytes4(keccak256("AttestationBatch/2")): no JSON notice starts with it. "/2" since kinds carry `flags`: a
 * reader of either format refuses the other's notices instead of reading their bytes askew.
 */
export const BATCH_NOTICE_TAG: Hex = keccak256(stringToBytes("AttestationBatch/2")).slice(0, 10) as Hex;
/** `flags` bit 0 of a kind: its schema is unique per account. */
export const UNIQUE_PER_ACCOUNT_FLAG = 1;
/** The `item` of an attestation that was its input's only write (its id has no item: common/ids.ts). */
export const LONE_ITEM = 0xffff;
const MAX_KINDS = 255;
const MAX_TEXT = 0xffff;
const MAX_ATTESTORS = 255;

type Created = Extract<NoticeEvent, { event: "attestation:created" }>["data"];
type Revoked = Extract<NoticeEvent, { event: "attestation:revoked" }>["data"];

export interface BatchKind {
  schemaId: Hex;
  halfLife: bigint;
  /** Seconds from the attestation's time to its expiry; 0: never. */
  validity: bigint;
  /**
   * The schema is unique per account (it has an `accountIdField`): the rollup accepted each attestation only
   * with a nullifier of its provider account bound to its owner (docs/nullifiers.md).
   */
  uniquePerAccount: boolean;
  provider: string;
  field: string;
  bucket: string;
  attestors: Address[];
}

export interface BatchNotice {
  inputIndex: bigint;
  time: bigint;
  /** The input's sender: the attester of what it made, the revoker of what it revoked. */
  sender: Address;
  kinds: BatchKind[];
  created: { item: number; owner: Address; kind: number }[];
  revoked: { uid: Hex; owner: Address; schemaId: Hex }[];
}

/** An attestation of the input: its JSON notice's data and its place in a batch (null: the input alone). */
export interface MadeAttestation {
  item: number | null;
  data: Created;
}

/**
 * Why an attestation cannot go in a batch notice (a contract could not hold it as EAS's `data` says), or
 * undefined when it can. Such an attestation stays in its JSON notice alone.
 */
export function unbatchable(data: Created): string | undefined {
  const fields = Object.entries(data.bucket_values);
  if (fields.length !== 1) return `${fields.length} bucketed fields: a contract holds one (as the api makes them)`;
  if (!Number.isInteger(data.freshness_half_life) || data.freshness_half_life < 0) return "a fractional half-life";
  const [[field, bucket]] = fields as [[string, string]];
  for (const text of [data.provider, field, bucket]) if (stringToBytes(text).length > MAX_TEXT) return "a text above 65535 bytes";
  if ((data.attestors ?? []).length > MAX_ATTESTORS) return "more than 255 attestors";
  return undefined;
}

/** The kind of an attestation: what it shares with others of its input. */
function kindOf(data: Created, uniquePerAccount: boolean): BatchKind {
  const [[field, bucket]] = Object.entries(data.bucket_values) as [[string, string]];
  return {
    schemaId: data.schema_id,
    halfLife: BigInt(data.freshness_half_life),
    validity: data.expires_at === null ? 0n : BigInt(data.expires_at - data.timestamp),
    uniquePerAccount,
    provider: data.provider,
    field,
    bucket,
    attestors: data.attestors ?? (data.attestor === undefined ? [] : [data.attestor]),
  };
}

/**
 * The batch notice of an input, or undefined when it made and revoked nothing a contract can hold. An
 * input with more kinds than a notice can name leaves the rest to their JSON notices (a batch of 256 items
 * of 256 kinds: no api makes one). `uniquePerAccount` answers for a schema of the input's attestations: the
 * JSON notice does not say it, the schema's registration does.
 */
export function batchNoticeOf(
  input: { index: number; timestamp: number; sender: Address },
  made: readonly MadeAttestation[],
  revoked: readonly Revoked[],
  uniquePerAccount: (schemaId: Hex) => boolean,
): BatchNotice | undefined {
  const kinds: BatchKind[] = [];
  const keys: string[] = [];
  const created: BatchNotice["created"] = [];
  for (const { item, data } of made) {
    if (unbatchable(data) !== undefined) continue;
    const kind = kindOf(data, uniquePerAccount(data.schema_id));
    const key = JSON.stringify(kind, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    let at = keys.indexOf(key);
    if (at === -1) {
      if (kinds.length === MAX_KINDS) continue;
      at = kinds.push(kind) - 1;
      keys.push(key);
    }
    created.push({ item: item ?? LONE_ITEM, owner: data.owner, kind: at });
  }
  const revocations = revoked.map((r) => ({ uid: r.claimId, owner: r.owner, schemaId: r.schema_id }));
  if (created.length === 0 && revocations.length === 0) return undefined;
  return { inputIndex: BigInt(input.index), time: BigInt(input.timestamp), sender: input.sender, kinds, created, revoked: revocations };
}

function text(value: string): Hex {
  const bytes = stringToBytes(value);
  return concatHex([toHex(bytes.length, { size: 2 }), bytesToHex(bytes)]);
}

export function encodeBatchNotice(batch: BatchNotice): Hex {
  const parts: Hex[] = [BATCH_NOTICE_TAG, encodePacked(["uint64", "uint64", "address", "uint8"], [batch.inputIndex, batch.time, batch.sender, batch.kinds.length])];
  for (const k of batch.kinds) {
    const flags = k.uniquePerAccount ? UNIQUE_PER_ACCOUNT_FLAG : 0;
    parts.push(encodePacked(["bytes32", "uint64", "uint64", "uint8"], [k.schemaId, k.halfLife, k.validity, flags]), text(k.provider), text(k.field), text(k.bucket));
    // One by one: encodePacked pads the elements of an array to 32 bytes.
    parts.push(toHex(k.attestors.length, { size: 1 }), ...k.attestors.map((a) => encodePacked(["address"], [a])));
  }
  parts.push(toHex(batch.created.length, { size: 2 }));
  for (const c of batch.created) parts.push(encodePacked(["uint16", "address", "uint8"], [c.item, c.owner, c.kind]));
  parts.push(toHex(batch.revoked.length, { size: 2 }));
  for (const r of batch.revoked) parts.push(encodePacked(["bytes32", "address", "bytes32"], [r.uid, r.owner, r.schemaId]));
  return concatHex(parts);
}

export class BatchNoticeError extends Error {
  override readonly name = "BatchNoticeError";
}

/** Whether a notice's payload is a batch notice (by its tag). */
export function isBatchNotice(payload: Hex): boolean {
  return payload.slice(0, 10).toLowerCase() === BATCH_NOTICE_TAG;
}

/** Reads a batch notice back; throws BatchNoticeError where it is not one. */
export function decodeBatchNotice(payload: Hex): BatchNotice {
  const bytes = hexToBytes(payload);
  let at = 0;
  const take = (n: number): Uint8Array => {
    if (at + n > bytes.length) throw new BatchNoticeError(`the batch notice ends at byte ${bytes.length}, before byte ${at + n}`);
    const out = bytes.subarray(at, at + n);
    at += n;
    return out;
  };
  const uint = (n: number): bigint => BigInt(bytesToHex(take(n)));
  const address = (): Address => bytesToHex(take(20));
  const word = (): Hex => bytesToHex(take(32));
  if (bytesToHex(take(4)) !== BATCH_NOTICE_TAG) throw new BatchNoticeError("not a batch notice (its tag)");
  const inputIndex = uint(8);
  const time = uint(8);
  const sender = address();
  const kinds: BatchKind[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const readText = (): string => decoder.decode(take(Number(uint(2))));
  for (let k = Number(uint(1)); k > 0; k--) {
    const schemaId = word();
    const halfLife = uint(8);
    const validity = uint(8);
    const flags = Number(uint(1));
    // As the registry: a flag this reader does not know is a meaning it would drop.
    if ((flags & ~UNIQUE_PER_ACCOUNT_FLAG) !== 0) throw new BatchNoticeError(`a kind has unknown flags 0x${flags.toString(16)}`);
    const [provider, field, bucket] = [readText(), readText(), readText()];
    const attestors = Array.from({ length: Number(uint(1)) }, address);
    kinds.push({ schemaId, halfLife, validity, uniquePerAccount: (flags & UNIQUE_PER_ACCOUNT_FLAG) !== 0, provider, field, bucket, attestors });
  }
  const created = Array.from({ length: Number(uint(2)) }, () => ({ item: Number(uint(2)), owner: address(), kind: Number(uint(1)) }));
  const revoked = Array.from({ length: Number(uint(2)) }, () => ({ uid: word(), owner: address(), schemaId: word() }));
  if (at !== bytes.length) throw new BatchNoticeError(`the batch notice has ${bytes.length - at} bytes past its items`);
  return { inputIndex, time, sender, kinds, created, revoked };
}

/** The id of an attestation a batch notice made: the dapp's formula for its place (common/ids.ts). */
export function batchItemId(inputIndex: bigint, item: number): Hex {
  return writeIdOf("create_attestation", inputIndex, item === LONE_ITEM ? null : item);
}

/**
 * Where `uid` stands in a batch notice: among the attestations it made (`created`, the `at` of the registry's
 * stateless check) or among the revocations; undefined when the notice does not name it.
 */
export function placeInBatch(batch: BatchNotice, uid: Hex, as: "created" | "revoked"): number | undefined {
  const id = uid.toLowerCase();
  const at = as === "created" ? batch.created.findIndex((c) => batchItemId(batch.inputIndex, c.item) === id) : batch.revoked.findIndex((r) => r.uid.toLowerCase() === id);
  return at === -1 ? undefined : at;
}
