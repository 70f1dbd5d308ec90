/**
 * The publisher (docs/eas.md, "The publisher"): brings every batch notice of the rollup (one per input that
 * made or revoked attestations: common/attestation-batch.ts), with its proof once its epoch is claimed, to
 * the registry, several to a transaction (`recordMany`), in the rollup's order. The gate is the registry's
 * other face: nothing is brought to it.
 *
 * Each round: settle the transaction in flight (at most one: the next waits for its receipt, so the order
 * holds); read the notices after the stored cursor; look up the proofs of the batches still without one;
 * then send one transaction. Before it is built, what the registry already holds is dropped from it
 * (someone else may have brought it), so nothing is sent twice; what is sent is signed and kept in the store
 * before it is broadcast, so a publisher killed in between sends the same transaction again on its restart,
 * not a second one; and `recordMany` skips a batch it already holds, so even a second one would record
 * nothing twice. The gas of the last hour never passes the budget: a transaction that would is cut, or waits.
 */
import type { Hex } from "viem";
import { decodeBatchNotice, isBatchNotice } from "../../common/attestation-batch.ts";
import { messageOf } from "../../common/errors.ts";
import type { GraphqlReader } from "../rollup/graphql.ts";
import type { JsonRpcReader } from "../rollup/jsonrpc.ts";
import type { PublisherChain, StoredProof } from "./chain.ts";
import type { PublishBatch, PublisherStore } from "./store.ts";

export type PublisherNode = { rollups: "v1"; reader: GraphqlReader } | { rollups: "v2"; reader: JsonRpcReader };

export interface PublisherOptions {
  node: PublisherNode;
  chain: PublisherChain;
  store: PublisherStore;
  /** Most attestations and revocations in one transaction (a batch notice is never split: one larger goes alone). */
  batchMax: number;
  /** Most gas in any hour. */
  gasPerHour: number;
  /** Most gas in one transaction (the chain's cap: larger ones go in halves). */
  txGasMax: number;
  pollMs: number;
  log: (line: string) => void;
  /** Told what each mined transaction carried, and when the budget held one back. */
  onPublished?: (carried: { attestations: number; revocations: number; batches: number }, gasUsed: number) => void;
  onBudgetWait?: () => void;
  now?: () => number;
}

const HOUR_MS = 3_600_000;
/** How soon a round follows one that left a transaction in flight. */
const BUSY_POLL_MS = 50;

export class Publisher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | null = null;
  private waitingForBudget = false;
  private readonly now: () => number;

  constructor(private readonly options: PublisherOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    const loop = (): void => {
      if (this.stopped) return;
      let busy = false;
      this.running = this.round()
        .then((sent) => void (busy = sent))
        .finally(() => {
          this.running = undefined;
          // A batch just sent is looked after at once: on a chain that mines at once, its receipt lets the
          // next batch go; on a slower one, the next checks come at the usual pace.
          if (!this.stopped) this.timer = setTimeout(loop, busy ? Math.min(this.options.pollMs, BUSY_POLL_MS) : this.options.pollMs);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  status(): { lastError: string | null; waitingForBudget: boolean } {
    return { lastError: this.lastError, waitingForBudget: this.waitingForBudget };
  }

  /**
   * One round; a failure is logged once and retried next round (the store keeps every step). True when it
   * sent a transaction: the next round then follows at once, for a chain that mines it at once.
   */
  async round(): Promise<boolean> {
    try {
      if (!(await this.settleInFlight())) return false;
      await this.follow();
      await this.prove();
      const sent = await this.sendNext();
      if (this.lastError !== null) this.options.log("publishing works again");
      this.lastError = null;
      return sent;
    } catch (error) {
      const message = messageOf(error).split("\n")[0] ?? "";
      if (this.lastError !== message) this.options.log(`publishing failed: ${message} (retrying)`);
      this.lastError = message;
      this.options.chain.resetNonce();
      return false;
    }
  }

  /**
   * True when nothing is in flight any more. A transaction without a receipt that the node does not know
   * (this process stopped before broadcasting it, or the node dropped it) is broadcast again: the same bytes.
   */
  private async settleInFlight(): Promise<boolean> {
    const { chain, store } = this.options;
    for (const tx of store.inFlight()) {
      const outcome = await chain.outcome(tx.hash);
      if (outcome === undefined) {
        if (!(await chain.known(tx.hash))) await chain.broadcast(tx.raw);
        return false;
      }
      store.settleTx(tx.hash, outcome.success ? "mined" : "failed", outcome.gasUsed);
      if (outcome.success) {
        const carried = store.carried(tx.inputs);
        const { attestations, revocations } = carried;
        store.markDone(tx.inputs);
        this.options.onPublished?.(carried, outcome.gasUsed);
        this.options.log(`registry: recordMany of ${tx.inputs.length} batch(es), ${attestations} attestation(s) and ${revocations} revocation(s), mined (${outcome.gasUsed} gas, transaction ${tx.hash})`);
      } else {
        // Its batches stay open: the next round drops what the registry holds and sends the rest again.
        this.options.log(`registry: transaction ${tx.hash} reverted; its ${tx.inputs.length} batch(es) are checked and sent again`);
        chain.resetNonce();
      }
    }
    return true;
  }

  /** Reads the notices after the cursor; every batch notice becomes a batch to bring. */
  private async follow(): Promise<void> {
    const { node, store } = this.options;
    for (;;) {
      const page = await node.reader.noticesAfter(store.cursor, 200);
      const batches: Omit<PublishBatch, "proof" | "done">[] = [];
      for (const notice of page.notices) {
        if (!isBatchNotice(notice.payload)) continue;
        const decoded = decodeBatchNotice(notice.payload);
        batches.push({ inputIndex: notice.inputIndex, notice: notice.payload, attestations: decoded.created.length, revocations: decoded.revoked.length });
      }
      store.addBatches(batches, page.endCursor ?? store.cursor);
      if (!page.hasNextPage || page.notices.length === 0) return;
    }
  }

  /** Looks up the proofs of the batches without one, oldest first; they come once the epoch is claimed. */
  private async prove(): Promise<void> {
    const { node, store } = this.options;
    for (const batch of store.open().filter((b) => b.proof === null)) {
      const proven: { payload: Hex; proof: StoredProof | null }[] =
        node.rollups === "v1"
          ? (await node.reader.noticesWithProofs(batch.inputIndex)).map((n) => ({ payload: n.payload, proof: n.proof === null ? null : { validity: n.proof.validity, context: n.proof.context } }))
          : (await node.reader.noticesWithProofs(batch.inputIndex)).map((n) => ({ payload: n.payload, proof: n.siblings === null ? null : { outputIndex: n.index, outputHashesSiblings: n.siblings } }));
      const match = proven.find((n) => n.payload.toLowerCase() === batch.notice.toLowerCase());
      // Not claimed yet: later inputs are not claimed either.
      if (match?.proof == null) return;
      store.setProof(batch.inputIndex, JSON.stringify(match.proof));
    }
  }

  /** Sends one transaction of the oldest proven batches, at most batchMax items (one batch at least). True when one went. */
  private async sendNext(): Promise<boolean> {
    const { chain, store } = this.options;
    const ready = store.open().filter((b) => b.proof !== null);
    const sending: PublishBatch[] = [];
    let items = 0;
    for (let at = 0; at < ready.length && items < this.options.batchMax; ) {
      const candidates: PublishBatch[] = [];
      for (let room = this.options.batchMax - items; at < ready.length; at++) {
        const next = ready[at] as PublishBatch;
        // A batch notice is never split: one larger than batchMax goes alone, first in its transaction.
        if (size(next) > room && (sending.length > 0 || candidates.length > 0)) break;
        candidates.push(next);
        room -= size(next);
      }
      if (candidates.length === 0) break;
      // The batches that fit, asked of the chain together: someone else may have brought one.
      const held = await Promise.all(candidates.map((b) => chain.holds(b)));
      const done = candidates.filter((_, k) => held[k]);
      if (done.length > 0) store.markDone(done.map((b) => b.inputIndex));
      for (const b of candidates.filter((_, k) => !held[k])) {
        sending.push(b);
        items += size(b);
      }
    }
    return sending.length === 0 ? false : this.send(sending);
  }

  private async send(batches: PublishBatch[]): Promise<boolean> {
    const { chain, store } = this.options;
    let batch = batches;
    for (;;) {
      const data = chain.batchCall(batch);
      // A transaction above the chain's per-transaction cap cannot be estimated (the node refuses) or sent:
      // it goes in halves. A single batch notice that cannot be estimated is an error worth reporting.
      const estimate = await chain.estimate(data).catch((error: unknown) => {
        if (batch.length === 1) throw error;
        return undefined;
      });
      if (estimate === undefined || estimate > this.options.txGasMax) {
        if (batch.length === 1) throw new Error(`the batch of input ${batch[0]?.inputIndex} needs ${estimate} gas, above PUBLISH_TX_GAS_MAX (${this.options.txGasMax})`);
        batch = batch.slice(0, Math.ceil(batch.length / 2));
        continue;
      }
      // A margin over the estimate: the state may move between the estimate and the block.
      const gasLimit = Math.min(this.options.txGasMax, Math.ceil(estimate * 1.2) + 20_000);
      const since = this.now() - HOUR_MS;
      const room = this.options.gasPerHour - store.gasSince(since);
      if (gasLimit <= room) {
        this.waitingForBudget = false;
        const signed = await chain.sign(data, gasLimit);
        store.addTx({ ...signed, inputs: batch.map((b) => b.inputIndex), sentAt: this.now() });
        await chain.broadcast(signed.raw);
        this.options.log(`registry: recordMany of ${batch.length} batch(es) sent (transaction ${signed.hash})`);
        return true;
      }
      if (batch.length === 1) {
        if (!this.waitingForBudget) {
          const frees = (store.oldestSince(since) ?? this.now()) + HOUR_MS;
          this.options.log(`the gas budget (${this.options.gasPerHour} an hour) leaves ${room} now: waiting until ${new Date(frees).toISOString()}`);
          this.options.onBudgetWait?.();
        }
        this.waitingForBudget = true;
        return false;
      }
      batch = batch.slice(0, Math.ceil(batch.length / 2));
    }
  }
}

/** What a batch notice brings: its attestations and revocations. */
function size(batch: PublishBatch): number {
  return batch.attestations + batch.revocations;
}
