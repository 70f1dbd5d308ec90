/**
 * New blocks pushed by the chain (`eth_subscribe("newHeads")` over its WebSocket), so the follower reads
 * an input as soon as its block exists instead of at its next poll: the poll's average wait (half of
 * POLL_INTERVAL_MS) was the largest share of a claim's latency after the chain itself. The subscription
 * only says "look now"; the poll stays the one reader, and keeps running, slower, in case a notification
 * is lost. A chain without the WebSocket (or one that drops it) is simply polled as before.
 */
import { WebSocket } from "ws";
import { messageOf } from "../common/errors.ts";
import type { Log } from "./log.ts";

export interface HeadSubscription {
  /** True while notifications arrive over an open subscription. */
  readonly live: boolean;
  close(): void;
}

const RECONNECT_MS = 1_000;

export function subscribeNewHeads(url: string, onHead: () => void, log: Log): HeadSubscription {
  let socket: WebSocket | undefined;
  let live = false;
  let closed = false;
  let reported = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = (): void => {
    if (closed) return;
    const ws = new WebSocket(url, { maxPayload: 1024 * 1024 });
    socket = ws;
    ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })));
    ws.on("message", (data) => {
      const text = String(data);
      if (!live) {
        // The subscription's own answer: an id, or an error from a chain that does not offer it.
        if (text.includes('"error"')) {
          if (!reported) log(`new blocks cannot be subscribed at ${url} (${text.slice(0, 200)}): polling only`);
          reported = true;
          ws.close();
          return;
        }
        live = true;
        if (reported) log(`new blocks pushed by ${url} again`);
        reported = false;
        return;
      }
      onHead();
    });
    ws.on("error", (error) => {
      if (!reported) log(`new blocks cannot be subscribed at ${url} (${messageOf(error)}): polling until it answers`);
      reported = true;
    });
    ws.on("close", () => {
      if (live && !closed && !reported) log(`the subscription to new blocks at ${url} closed: polling until it is back`);
      if (live) reported = true;
      live = false;
      if (!closed) retry = setTimeout(connect, RECONNECT_MS);
    });
  };
  connect();
  return {
    get live() {
      return live;
    },
    close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      socket?.terminate();
    },
  };
}
