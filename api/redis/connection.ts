/**
 * The Redis connection api replicas share their rate limits and login nonces through (REDIS_URL,
 * docs/operations.md). Commands fail at once while Redis is away instead of queueing: a request never
 * waits on a reconnect, and the callers fall back to this process's own state until Redis is back.
 */
import { Redis } from "ioredis";

export interface SharedRedis {
  client: Redis;
  /** True while the connection is up. */
  readonly ready: boolean;
  close(): Promise<void>;
}

/** Past this a command counts as failed: a local Redis answers in well under a millisecond. */
const COMMAND_TIMEOUT_MS = 1_000;

export function connectRedis(url: string, onStateChange: (up: boolean, error?: string) => void): SharedRedis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect for ever, at most every 2 s: Redis restarting must not need an api restart.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    lazyConnect: false,
  });
  // One log line per change of state, not one per reconnect attempt.
  let up = false;
  let everReported = false;
  client.on("ready", () => {
    if (up) return;
    up = true;
    everReported = true;
    onStateChange(true);
  });
  client.on("close", () => {
    if (!up) return;
    up = false;
    onStateChange(false, "connection closed");
  });
  client.on("error", (error: Error) => {
    // Never connected yet: say once why.
    if (everReported) return;
    everReported = true;
    onStateChange(false, error.message);
  });
  return {
    client,
    get ready() {
      return up && client.status === "ready";
    },
    async close() {
      client.disconnect(false);
    },
  };
}
