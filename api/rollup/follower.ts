/**
 * Follows the dapp's notices through the node's reader (GraphQL on v1, JSON-RPC on v2), so every accepted input (the api's own or
 * one sent straight to the InputBox) reaches the WebSocket. On start it reads the history once to learn
 * schemas and the latest key, without relaying it: clients get events from the moment the api started.
 */
import type { Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import type { AttestationCreatedEvent, NoticeEvent } from "../../common/wire.ts";
import { RegistryCatalog } from "./catalog.ts";
import type { NodeReader, NoticeRecord } from "./node-reader.ts";

const RELAYED_EVENTS = new Set(["attestation:created", "attestation:revoked", "grant:created", "grant:revoked", "schema:registered"]);

export interface FollowerOptions {
  intervalMs: number;
  onEvent: (event: NoticeEvent | AttestationCreatedEvent) => void;
  /** Called after each scheduled poll: with the error when it failed, without when it succeeded. */
  onPoll?: (error?: unknown) => void;
}

export class NoticeFollower {
  private cursor: string | null = null;
  /** The last notice applied, as (input index, notice index): guards against a node whose cursors repeat. */
  private last: [number, number] = [-1, -1];
  /** False until the history present at start has been read: those notices teach, but are not relayed. */
  private primed = false;
  private inFlight: Promise<void> | undefined;
  /** The read a `sync` caller waits for while another runs. */
  private after: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(
    private readonly node: NodeReader,
    private readonly catalog: RegistryCatalog,
    private readonly options: FollowerOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // A poll still running is let finish (its failure no longer matters), so nothing runs after stop.
    return (this.after ?? this.inFlight ?? Promise.resolve()).catch(() => undefined);
  }

  /**
   * Reads everything new now: claims call it to see the latest schemas and key, reads of what notices
   * teach (bucket counts, who granted whom) to see what was answered before them. A poll already running
   * may have asked the node before the caller's write was there, so the caller gets the read after it
   * (one, shared by every caller meanwhile).
   */
  sync(): Promise<void> {
    if (this.inFlight === undefined) return this.poll();
    this.after ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.after = undefined;
        return this.poll();
      });
    return this.after;
  }

  /**
   * `sync`, unless a notice of input `inputIndex` or a later one is applied already (the follower reads in
   * input order, so everything up to it is): what a read that must see that input waits for.
   */
  syncTo(inputIndex: number): Promise<void> {
    return this.last[0] >= inputIndex ? Promise.resolve() : this.sync();
  }

  /** One read of what is new, joining the one running. */
  private poll(): Promise<void> {
    if (this.inFlight === undefined) {
      this.inFlight = this.readNew().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.poll()
        .then(
          () => this.options.onPoll?.(),
          (error: unknown) => this.options.onPoll?.(error),
        )
        .finally(() => this.schedule(this.options.intervalMs));
    }, delay);
  }

  private async readNew(): Promise<void> {
    for (;;) {
      const page = await this.node.noticesAfter(this.cursor, 500);
      for (const notice of page.notices) await this.apply(notice);
      this.cursor = page.endCursor;
      if (!page.hasNextPage || page.notices.length === 0) break;
    }
    this.primed = true;
  }

  private async apply(notice: NoticeRecord): Promise<void> {
    const [lastInput, lastNotice] = this.last;
    if (notice.inputIndex < lastInput || (notice.inputIndex === lastInput && notice.index <= lastNotice)) return;
    const event = decodeNotice(notice.payload);
    // A registration is learned from its input's payload, read only for it (a failed read fails this
    // poll before the notice counts as applied, so the next poll reads it again).
    const inputPayload =
      event !== undefined && RegistryCatalog.needsInput(event) ? await this.node.inputPayload(notice.inputIndex) : undefined;
    this.last = [notice.inputIndex, notice.index];
    if (event === undefined) return;
    this.catalog.learnFromNotice(event, notice.inputIndex, inputPayload);
    if (this.primed && RELAYED_EVENTS.has(event.event)) this.options.onEvent(relayed(event));
  }
}

/**
 * The WebSocket carries the specification's fields (an attestation's notice also holds its schema and
 * bucket), plus the attestor of a proven one (an extension).
 */
function relayed(event: NoticeEvent): NoticeEvent | AttestationCreatedEvent {
  if (event.event !== "attestation:created") return event;
  const { claimId, owner, provider, attestor } = event.data;
  return { event: event.event, data: { claimId, owner, provider, ...(attestor === undefined ? {} : { attestor }) } };
}

/** The notice as the dapp writes it (`{event, data}` JSON), or undefined for anything else (the binary batch notice). */
export function decodeNotice(payload: Hex): NoticeEvent | undefined {
  try {
    const parsed = JSON.parse(hexToUtf8(payload)) as unknown;
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const { event, data } = parsed as { event?: unknown; data?: unknown };
    if (typeof event !== "string" || typeof data !== "object" || data === null) return undefined;
    return parsed as NoticeEvent;
  } catch {
    return undefined;
  }
}
