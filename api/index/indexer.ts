/**
 * The indexer (docs/index.md): follows the node's notices in order and applies each input's in one
 * transaction with the cursor (api/index/apply.ts), so the index is always a prefix of the rollup's outputs:
 * a crash or a kill mid-input loses nothing and doubles nothing. It marks rows proven as their epochs are
 * claimed, and empties itself when the node no longer has what it indexed (a replaced or replayed node,
 * another application), then reads everything again.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { NoticeRecord } from "../rollup/node-reader.ts";
import { decodeNotice } from "../rollup/follower.ts";
import { announceChange, applyInput, noticesHash } from "./apply.ts";
import type { IndexDb, OpenIndex } from "./db.ts";
import { attestations, indexState, inputs, schemata } from "./schema.ts";
import type { IndexSource } from "./source.ts";

export interface IndexProgress {
  /** The last input whose notices are indexed, -1 before any. */
  lastInput: number;
  /** Highest input known to be in a claimed epoch, -1 before any. */
  provenThrough: number;
  attestations: number;
}

export interface IndexerOptions {
  /** The application whose notices these are (lower-case); an index of another one is emptied first. */
  application: string;
  /** Notices asked per page. */
  pageSize: number;
  log: (line: string) => void;
  /** Called after each input is committed. */
  onApplied?: (input: number, attestations: number, lagMs: number | undefined) => void;
}

/** Most notices read before applying: every input's notices are complete in it but possibly the last one's. */
const READ_AHEAD_PAGES = 4;

export class Indexer {
  private progress: IndexProgress = { lastInput: -1, provenThrough: -1, attestations: 0 };
  /** Commits this indexer made that changed the index: its version, for the answers kept (api/graphql/answers.ts). */
  private changes = 0;
  private cursor: string | null = null;

  constructor(
    private readonly index: OpenIndex,
    private readonly source: IndexSource,
    private readonly options: IndexerOptions,
  ) {}

  /** Changes with every commit of this indexer (what the index holds may differ from the last version's). */
  get version(): number {
    return this.changes;
  }

  get state(): IndexProgress {
    return this.progress;
  }

  /** Reads the stored progress, making the state row on a new index and emptying one of another application. */
  async prepare(): Promise<void> {
    const db = this.index.db;
    const [row] = await db.select().from(indexState).where(eq(indexState.id, 1));
    if (row === undefined) {
      await db.insert(indexState).values({ id: 1, application: this.options.application, cursor: null, lastInput: -1, attestationCount: 0, provenThrough: -1 });
    } else if (row.application !== this.options.application) {
      await this.reset(`the index held application ${row.application}, not ${this.options.application}`);
    }
    await this.reload();
  }

  private async reload(): Promise<void> {
    const [row] = await this.index.db.select().from(indexState).where(eq(indexState.id, 1));
    if (row === undefined) throw new Error("the index has no state row");
    this.cursor = row.cursor;
    this.progress = { lastInput: row.lastInput, provenThrough: row.provenThrough, attestations: row.attestationCount };
  }

  /** Empties the index in one transaction: it then reads the node from its first notice. */
  async reset(why: string): Promise<void> {
    this.options.log(`emptying the index: ${why}`);
    await this.index.db.transaction(async (tx) => {
      await tx.delete(attestations);
      await tx.delete(schemata);
      await tx.delete(inputs);
      await tx.update(indexState).set({ application: this.options.application, cursor: null, lastInput: -1, attestationCount: 0, provenThrough: -1 }).where(eq(indexState.id, 1));
      await announceChange(tx as unknown as IndexDb);
    });
    this.changes += 1;
    await this.reload();
  }

  /**
   * Reads what is new and applies every input whose notices are all read; returns how many inputs were
   * applied and whether the node had nothing more (caught up).
   */
  async step(): Promise<{ applied: number; caughtUp: boolean }> {
    const read: NoticeRecord[] = [];
    let readCursor = this.cursor;
    let more = true;
    // Past the read ahead only while one input's notices fill it all: it is applied whole or not at all.
    const inputsRead = (): number => new Set(read.filter((n) => n.inputIndex > this.progress.lastInput).map((n) => n.inputIndex)).size;
    for (let pages = 0; more && (pages < READ_AHEAD_PAGES || inputsRead() < 2); pages++) {
      const page = await this.source.noticesAfter(readCursor, this.options.pageSize);
      read.push(...page.notices);
      readCursor = page.endCursor;
      more = page.hasNextPage && page.notices.length > 0;
    }
    const groups = groupByInput(read.filter((n) => n.inputIndex > this.progress.lastInput));
    // The node writes an input's notices at once, so only the last group of a cut read can be partial.
    if (more) groups.pop();
    for (const notices of groups) await this.applyGroup(notices);
    return { applied: groups.length, caughtUp: !more };
  }

  private async applyGroup(notices: NoticeRecord[]): Promise<void> {
    const first = notices[0];
    const last = notices[notices.length - 1];
    if (first === undefined || last === undefined) return;
    const index = first.inputIndex;
    const origin = await this.source.inputOrigin(index);
    const txid = origin.txid ?? (await this.source.transactionOf(index, origin.blockNumber));
    const needsPayload = notices.some((n) => decodeNotice(n.payload)?.event === "schema:registered");
    const payload = needsPayload ? await this.source.inputPayload(index) : undefined;
    const { attestations: made } = await applyInput(this.index.db, { index, origin, txid, notices, ...(payload === undefined ? {} : { payload }) }, last.cursor, this.progress.provenThrough);
    this.cursor = last.cursor;
    this.changes += 1;
    this.progress = { ...this.progress, lastInput: index, attestations: this.progress.attestations + made };
    this.options.onApplied?.(index, made, origin.timestamp > 0 ? Date.now() - origin.timestamp * 1000 : undefined);
  }

  /**
   * Whether the node still has the last input indexed, with the same notices; when not (a node replaced or
   * replayed differently), the index is emptied and read again. Returns false when it was.
   */
  async verify(): Promise<boolean> {
    if (this.progress.lastInput < 0) return true;
    const [row] = await this.index.db.select({ hash: inputs.noticesHash }).from(inputs).where(eq(inputs.index, this.progress.lastInput));
    const onNode = await this.source.inputNotices(this.progress.lastInput);
    if (row !== undefined && onNode !== null && onNode.payloads.length > 0 && noticesHash(onNode.payloads) === row.hash) return true;
    await this.reset(onNode === null ? `the node has no input ${this.progress.lastInput}` : `the node's notices of input ${this.progress.lastInput} differ from the index's`);
    return false;
  }

  /**
   * Marks proven every row of an input in a claimed epoch: epochs are claimed in order, so the newest input
   * whose notices are proven is found by a binary search over those not yet marked.
   */
  async markProven(): Promise<void> {
    const pending = (await this.index.db.select({ index: inputs.index }).from(inputs).where(eq(inputs.proven, false)).orderBy(inputs.index)).map((r) => r.index);
    if (pending.length === 0) return;
    const proven = async (i: number): Promise<boolean> => (await this.source.inputNotices(pending[i] as number))?.proven === true;
    let lo = -1;
    let hi = pending.length - 1;
    if (await proven(hi)) lo = hi;
    else {
      // Invariant: pending[lo] proven (or lo = -1), pending[hi] not.
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (await proven(mid)) lo = mid;
        else hi = mid;
      }
    }
    if (lo < 0) return;
    const through = pending[lo] as number;
    await this.index.db.transaction(async (tx) => {
      await tx.update(inputs).set({ proven: true }).where(and(lte(inputs.index, through), eq(inputs.proven, false)));
      await tx.update(attestations).set({ proven: true }).where(and(lte(attestations.inputIndex, through), eq(attestations.proven, false)));
      await tx.update(schemata).set({ proven: true }).where(and(lte(schemata.inputIndex, through), eq(schemata.proven, false)));
      await tx.update(indexState).set({ provenThrough: sql`greatest(${indexState.provenThrough}, ${through})` }).where(eq(indexState.id, 1));
      await announceChange(tx as unknown as IndexDb);
    });
    this.changes += 1;
    this.progress = { ...this.progress, provenThrough: Math.max(this.progress.provenThrough, through) };
  }
}

function groupByInput(notices: NoticeRecord[]): NoticeRecord[][] {
  const groups: NoticeRecord[][] = [];
  for (const notice of notices) {
    const current = groups[groups.length - 1];
    if (current !== undefined && current[0]?.inputIndex === notice.inputIndex) current.push(notice);
    else groups.push([notice]);
  }
  return groups;
}

