/**
 * Group commit of the api's writes (issue 13): one wallet sends one transaction at a time, so writes that
 * arrive while its previous transaction is in flight wait and go together into the next one, as one
 * batch input. A write that finds the wallet idle goes alone, at once, as a plain JSON input: a quiet api
 * answers as fast as without batching (and its write keeps the lone id formula), and a busy one sends far
 * fewer transactions. "In flight" lasts from the send until the receipt, which gives the input its index.
 *
 * A group with an attestation whose schema's short index is known goes as a compact batch (issue 37,
 * common/compact-batch.ts): its attestations compact, any other write as a JSON item in it; item `i` is
 * still write `i`, so ids are as in a JSON `batch`. A group with nothing to compact stays a JSON `batch`.
 */
import type { Hex } from "viem";
import { encodeCompactBatch, type CompactSchema } from "../../common/compact-batch.ts";
import { utf8ToHex } from "../../common/hex.ts";
import type { InputKind, InputParams } from "../../common/wire.ts";
import type { SubmittedInput } from "./submitter.ts";

export interface GroupLimits {
  /** Items in one batch: the dapp's own limit (DECISIONS.md section 2). */
  maxItems: number;
  /**
   * Bytes of one batch's JSON: 120 KiB keeps the transaction under geth's 128 KiB pool limit on a real
   * chain, and its calldata far below a 30M-gas block. A compact batch of the same writes is smaller (a
   * JSON item in it costs 2 to 4 bytes more than in a JSON batch, 1 KiB at most over 256 items).
   */
  maxBytes: number;
  /**
   * Transactions in flight at once (sent, receipt not yet seen). With 2, the writes that gather while one
   * transaction is being mined go out without waiting for its receipt; the sends themselves stay in
   * nonce order (InputSubmitter's queue).
   */
  inFlight?: number;
}

export const DEFAULT_GROUP_LIMITS: GroupLimits = { maxItems: 256, maxBytes: 120 * 1024, inFlight: 1 };

/** Where a write landed: its input, its position in a batch (null when it went alone) and the transaction. */
export interface CommittedWrite extends SubmittedInput {
  item: number | null;
}

interface Pending {
  /** The write's own JSON `{type, params}`. */
  json: string;
  item: { type: InputKind; params: InputParams[InputKind] };
  /** An attestation's schema, so the write can travel compact. */
  schema: CompactSchema | undefined;
  resolve: (committed: CommittedWrite) => void;
  reject: (error: unknown) => void;
}

/** The JSON text around a batch's items: `{"type":"batch","params":{"items":[` ... `]}}`. */
const BATCH_HEAD = '{"type":"batch","params":{"items":[';
const BATCH_TAIL = "]}}";

export class GroupCommit {
  private readonly waiting: Pending[] = [];
  private inFlight = 0;
  /** Transactions sent and writes they carried, for the bench and the operator. */
  readonly stats = { transactions: 0, writes: 0, largestGroup: 0 };

  constructor(
    /** Sends one encoded input and resolves at its receipt (InputSubmitter.submitPayload). */
    private readonly send: (payload: Hex) => Promise<SubmittedInput>,
    private readonly limits: GroupLimits = DEFAULT_GROUP_LIMITS,
    /** Told the size of every group sent (the api's metrics). */
    private readonly observeGroup: (writes: number) => void = () => {},
  ) {}

  /** `schema`: the schema of an attestation (`create_attestation`), so that it can travel compact. */
  write<K extends InputKind>(kind: K, params: InputParams[K], schema?: CompactSchema): Promise<CommittedWrite> {
    return new Promise<CommittedWrite>((resolve, reject) => {
      const item = { type: kind, params };
      this.waiting.push({ json: JSON.stringify(item), item, schema, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight >= (this.limits.inFlight ?? 1) || this.waiting.length === 0) return;
    const group = this.takeGroup();
    this.inFlight += 1;
    void this.commit(group).finally(() => {
      this.inFlight -= 1;
      this.pump();
    });
  }

  /** The longest prefix of the waiting writes within the limits; always at least one write. */
  private takeGroup(): Pending[] {
    let bytes = BATCH_HEAD.length + BATCH_TAIL.length;
    let count = 0;
    for (const pending of this.waiting) {
      const added = Buffer.byteLength(pending.json) + (count > 0 ? 1 : 0);
      if (count > 0 && (count >= this.limits.maxItems || bytes + added > this.limits.maxBytes)) break;
      bytes += added;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  private async commit(group: Pending[]): Promise<void> {
    const lone = group.length === 1;
    const payload = lone
      ? utf8ToHex((group[0] as Pending).json)
      : group.some((p) => p.schema !== undefined)
        ? encodeCompactBatch(group.map((p) => ({ item: p.item, schema: p.schema }))).payload
        : utf8ToHex(`${BATCH_HEAD}${group.map((p) => p.json).join(",")}${BATCH_TAIL}`);
    this.stats.transactions += 1;
    this.stats.writes += group.length;
    this.stats.largestGroup = Math.max(this.stats.largestGroup, group.length);
    this.observeGroup(group.length);
    try {
      const submitted = await this.send(payload);
      group.forEach((pending, i) => pending.resolve({ ...submitted, item: lone ? null : i }));
    } catch (error) {
      // The transaction failed: no write of it reached the rollup, and each says so with the chain's code.
      for (const pending of group) pending.reject(error);
    }
  }
}
