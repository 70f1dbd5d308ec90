/**
 * The publisher (docs/eas.md, "The publisher"): brings every attestation and revocation notice of the
 * rollup, with its proof once its epoch is claimed, to the registry and the gate, in batches
 * (`recordMany`, `revokeMany`), in the rollup's order, revocations first when both are waiting.
 *
 * Each round: settle the transaction in flight (at most one: the next batch waits for its receipt, so the
 * order holds); read the notices after the stored cursor; look up the proofs of those still without one;
 * then send one batch. Before a batch is built, what a target already holds is dropped from it (someone
 * else may have brought it), so nothing is sent twice; what is sent is signed and kept in the store before
 * it is broadcast, so a publisher killed in between sends the same transaction again on its restart, not a
 * second one; and the contracts skip what they already hold, so even a second one would record nothing twice.
 * The gas of the last hour never passes the budget: a batch that would is cut, or waits for the window.
 */
import { hexToString, toHex, type Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import { attestationFields, NoticeFieldsError, noticeEvent, revocationFields } from "../../common/notice-fields.ts";
import type { GraphqlReader } from "../rollup/graphql.ts";
import type { JsonRpcReader } from "../rollup/jsonrpc.ts";
import type { PublisherChain, StoredProof } from "./chain.ts";
import type { ItemKind, PublisherStore, PublishItem, Target } from "./store.ts";

export type PublisherNode = { rollups: "v1"; reader: GraphqlReader } | { rollups: "v2"; reader: JsonRpcReader };

export interface PublisherOptions {
  node: PublisherNode;
  chain: PublisherChain;
  store: PublisherStore;
  /** Most notices in one transaction. */
  batchMax: number;
  /** Most gas in any hour. */
  gasPerHour: number;
  /** Most gas in one transaction (the chain's cap: larger batches go in halves). */
  txGasMax: number;
  pollMs: number;
  log: (line: string) => void;
  /** Told what each mined batch carried, and when the budget held a batch back. */
  onPublished?: (target: Target, kind: ItemKind, count: number, gasUsed: number) => void;
  onBudgetWait?: () => void;
  now?: () => number;
}

const HOUR_MS = 3_600_000;
const TARGETS: readonly Target[] = ["registry", "gate"];
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
        store.markDone(tx.target, tx.kind, tx.uids);
        this.options.onPublished?.(tx.target, tx.kind, tx.uids.length, outcome.gasUsed);
        this.options.log(`${tx.target}: ${tx.kind === "attestation" ? "recordMany" : "revokeMany"} of ${tx.uids.length} mined (${outcome.gasUsed} gas, transaction ${tx.hash})`);
      } else {
        // Its items stay open: the next round drops what the target holds and sends the rest again.
        this.options.log(`${tx.target}: transaction ${tx.hash} reverted; its ${tx.uids.length} notice(s) are checked and sent again`);
        chain.resetNonce();
      }
    }
    return true;
  }

  /** Reads the notices after the cursor; every attestation and revocation notice becomes an item. */
  private async follow(): Promise<void> {
    const { node, store } = this.options;
    for (;;) {
      const page = await node.reader.noticesAfter(store.cursor, 200);
      const items: Omit<PublishItem, "proof" | "registryDone" | "gateDone">[] = [];
      for (const notice of page.notices) {
        let text: string;
        try {
          text = hexToString(notice.payload);
        } catch {
          continue;
        }
        const event = noticeEvent(text);
        if (event === undefined) continue;
        const kind: ItemKind = event === "attestation:created" ? "attestation" : "revocation";
        let unpublishable: string | null = null;
        let uid: Hex;
        try {
          uid = kind === "attestation" ? attestationFields(text).claimId : revocationFields(text).claimId;
        } catch (error) {
          if (!(error instanceof NoticeFieldsError)) throw error;
          unpublishable = error.message;
          uid = ((JSON.parse(text) as { data?: { claimId?: Hex } }).data?.claimId ?? toHex(`notice ${notice.index}`)) as Hex;
          this.options.log(`${kind} ${uid} (input ${notice.inputIndex}) cannot be published: ${error.message}`);
        }
        items.push({ uid, kind, inputIndex: notice.inputIndex, notice: text, unpublishable });
      }
      store.addNotices(items, page.endCursor ?? store.cursor);
      if (!page.hasNextPage || page.notices.length === 0) return;
    }
  }

  /** Looks up the proofs of the items without one, an input at a time; they come once the epoch is claimed. */
  private async prove(): Promise<void> {
    const { node, store } = this.options;
    const waiting = store.open().filter((i) => i.proof === null);
    const byInput = new Map<number, PublishItem[]>();
    for (const item of waiting) {
      const same = byInput.get(item.inputIndex);
      if (same === undefined) byInput.set(item.inputIndex, [item]);
      else same.push(item);
    }
    for (const [inputIndex, items] of byInput) {
      const proven: { payload: Hex; proof: StoredProof | null }[] =
        node.rollups === "v1"
          ? (await node.reader.noticesWithProofs(inputIndex)).map((n) => ({ payload: n.payload, proof: n.proof === null ? null : { validity: n.proof.validity, context: n.proof.context } }))
          : (await node.reader.noticesWithProofs(inputIndex)).map((n) => ({ payload: n.payload, proof: n.siblings === null ? null : { outputIndex: n.index, outputHashesSiblings: n.siblings } }));
      // Not claimed yet: later inputs are not claimed either.
      if (proven.every((n) => n.proof === null)) return;
      for (const item of items) {
        const payload = toHex(item.notice).toLowerCase();
        const match = proven.find((n) => n.payload.toLowerCase() === payload);
        if (match?.proof != null) store.setProof(item.uid, item.kind, JSON.stringify(match.proof));
      }
    }
  }

  /** Sends one batch: the oldest waiting revocations of a target first, else its oldest attestations. True when one went. */
  private async sendNext(): Promise<boolean> {
    const { chain, store } = this.options;
    const ready = store.open().filter((i) => i.proof !== null);
    for (const target of TARGETS) {
      for (const kind of ["revocation", "attestation"] as const) {
        const waiting = ready.filter((i) => i.kind === kind && !(target === "registry" ? i.registryDone : i.gateDone));
        const batch: PublishItem[] = [];
        for (let at = 0; at < waiting.length && batch.length < this.options.batchMax; ) {
          // What the batch still has room for, asked of the chain together: someone else may have brought
          // an item (or the gate holds a newer one), and then there is nothing to send for it.
          const candidates = waiting.slice(at, at + this.options.batchMax - batch.length);
          at += candidates.length;
          const held = await Promise.all(candidates.map((item) => chain.holds(target, item)));
          const done = candidates.filter((_, k) => held[k]);
          if (done.length > 0) store.markDone(target, kind, done.map((i) => i.uid));
          batch.push(...candidates.filter((_, k) => !held[k]));
        }
        if (batch.length > 0) return this.send(target, kind, batch);
      }
    }
    return false;
  }

  private async send(target: Target, kind: ItemKind, items: PublishItem[]): Promise<boolean> {
    const { chain, store } = this.options;
    let batch = items;
    for (;;) {
      const data = chain.batchCall(target, kind, batch);
      // A batch above the chain's per-transaction cap cannot be estimated (the node refuses) or sent:
      // it goes in halves. A single notice that cannot be estimated is an error worth reporting.
      const estimate = await chain.estimate(target, data).catch((error: unknown) => {
        if (batch.length === 1) throw error;
        return undefined;
      });
      if (estimate === undefined || estimate > this.options.txGasMax) {
        if (batch.length === 1) throw new Error(`one ${kind} needs ${estimate} gas, above PUBLISH_TX_GAS_MAX (${this.options.txGasMax})`);
        batch = batch.slice(0, Math.ceil(batch.length / 2));
        continue;
      }
      // A margin over the estimate: the state may move between the estimate and the block.
      const gasLimit = Math.min(this.options.txGasMax, Math.ceil(estimate * 1.2) + 20_000);
      const since = this.now() - HOUR_MS;
      const room = this.options.gasPerHour - store.gasSince(since);
      if (gasLimit <= room) {
        this.waitingForBudget = false;
        const signed = await chain.sign(target, data, gasLimit);
        store.addTx({ ...signed, target, kind, uids: batch.map((i) => i.uid), sentAt: this.now() });
        await chain.broadcast(signed.raw);
        this.options.log(`${target}: ${kind === "attestation" ? "recordMany" : "revokeMany"} of ${batch.length} sent (transaction ${signed.hash})`);
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
