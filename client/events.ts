/**
 * The api's WebSocket channel (`/ws`, docs/api.md): its events, typed, and a stream that subscribes, waits
 * for events and, when asked, opens a dropped connection again.
 */
import WebSocket from "ws";
import type { Address, Hex } from "./index.ts";

export type EventName = "attestation:created" | "attestation:revoked" | "grant:created" | "grant:revoked" | "schema:registered";

export type ApiEvent =
  /** `attestor` (an extension) only when a TLS attestor proved the value. */
  | { event: "attestation:created"; data: { claimId: Hex; owner: Address; provider: string; attestor?: Address } }
  /** Extension: an attestation revoked (by its attester, an attestor that proved it or an admin) or withdrawn by its owner. */
  | { event: "attestation:revoked"; data: { claimId: Hex; owner: Address; schema_id: Hex; revoker: Address; revoked_at: number; reason: string; superseded_by: Hex | null } }
  | { event: "grant:created"; data: { grantId: Hex; owner: Address; requester: Address } }
  | { event: "grant:revoked"; data: { grantId: Hex; owner: Address } }
  | { event: "schema:registered"; data: { schema_id: Hex } }
  | { event: "subscribed"; data: { events: EventName[]; owner: Address | null } }
  | { event: "error"; data: { code: string; message: string } };

export interface EventStream {
  /** Every message received so far, in order. */
  readonly received: ApiEvent[];
  /** How many times the stream reopened a dropped connection (with `reconnect`). */
  readonly reconnections: number;
  /** Resolves with the first message (already received or still to come) that matches. */
  waitFor(match: (event: ApiEvent) => boolean, timeoutMs?: number): Promise<ApiEvent>;
  send(message: unknown): void;
  close(): Promise<void>;
}

/** How a stream with `reconnect` comes back after its connection drops (an api replica restarted, say). */
export interface Reconnect {
  /** The first wait before reopening; it doubles with each failed try, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Opens the event channel; with `filter`, sends a subscribe message and waits for its acknowledgement.
 * With `reconnect`, a connection that drops (not closed by `close()`) is opened again with backoff and the
 * same subscription sent again; `reconnections` counts them. Events sent while it was down are not
 * replayed: the rollup, not the channel, is the record.
 */
export async function connectEvents(
  wsUrl: string,
  filter?: { subscribe?: EventName[]; owner?: string },
  reconnect?: Reconnect,
): Promise<EventStream> {
  const received: ApiEvent[] = [];
  const waiters = new Set<{ match: (e: ApiEvent) => boolean; resolve: (e: ApiEvent) => void }>();
  let closing = false;
  let reconnections = 0;
  const onMessage = (data: WebSocket.RawData): void => {
    let event: ApiEvent;
    try {
      event = JSON.parse(String(data)) as ApiEvent;
    } catch {
      return;
    }
    received.push(event);
    for (const waiter of waiters) {
      if (waiter.match(event)) {
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  };
  const open = (): Promise<WebSocket> =>
    new Promise<WebSocket>((resolve, reject) => {
      const next = new WebSocket(wsUrl);
      next.on("message", onMessage);
      next.once("open", () => resolve(next));
      next.once("error", reject);
    });
  let socket = await open();
  const reopen = (delayMs: number): void => {
    if (closing || reconnect === undefined) return;
    setTimeout(() => {
      if (closing) return;
      open().then(
        (next) => {
          socket = next;
          reconnections += 1;
          watch(next);
          if (filter !== undefined) next.send(JSON.stringify(filter));
        },
        () => reopen(Math.min(delayMs * 2, reconnect.maxDelayMs ?? 10_000)),
      );
    }, delayMs);
  };
  const watch = (current: WebSocket): void => {
    // An error before or after "open" ends in "close" too: the reopening starts there.
    current.on("error", () => undefined);
    current.once("close", () => reopen(reconnect?.firstDelayMs ?? 250));
  };
  watch(socket);
  const stream: EventStream = {
    received,
    get reconnections() {
      return reconnections;
    },
    waitFor(match, timeoutMs = 15_000) {
      const seen = received.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<ApiEvent>((resolve, reject) => {
        const waiter = {
          match,
          resolve: (event: ApiEvent) => {
            clearTimeout(timer);
            resolve(event);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching event within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    send(message) {
      socket.send(typeof message === "string" ? message : JSON.stringify(message));
    },
    close() {
      closing = true;
      return new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once("close", () => resolve());
        socket.close();
      });
    },
  };
  if (filter !== undefined) {
    stream.send(filter);
    await stream.waitFor((e) => e.event === "subscribed" || e.event === "error");
  }
  return stream;
}
