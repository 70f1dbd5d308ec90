/**
 * `createDapp`: the real dapp wired to a rollup HTTP server through @deroll/app, without side effects
 * until `run` is called, so tests drive the same code main.ts runs.
 */
import { createApp } from "@deroll/app";
import type { Address, Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import type { DappDatabase } from "./db/open.ts";
import { createDispatcher, type Dispatcher, type RollupOutputs } from "./dispatch.ts";
import { createRollupFetch } from "./rollup-fetch.ts";

export type RollupApp = ReturnType<typeof createApp>;

export interface CreateDappOptions {
  db: DappDatabase;
  admins: readonly Address[];
  /** Base URL of the rollup HTTP server (/finish, /notice, /report, /exception). */
  rollupUrl: string;
  log?: (line: string) => void;
}

export interface Dapp {
  app: RollupApp;
  dispatcher: Dispatcher;
  /**
   * Runs the rollup loop until `signal` aborts. When the server cannot be reached, start() rejects;
   * the loop retries with a short backoff, because the node may start after the dapp.
   */
  run(options?: { signal?: AbortSignal; retryDelayMs?: number }): Promise<void>;
}

/**
 * @deroll/app 0.7.0 takes no `fetch` option, but its openapi-fetch client reads `globalThis.fetch` once,
 * when the app is created: lend it the faster transport for exactly that moment.
 */
function createDerollApp(url: string, transport: typeof fetch): RollupApp {
  const global = globalThis.fetch;
  globalThis.fetch = transport;
  try {
    return createApp({ url });
  } finally {
    globalThis.fetch = global;
  }
}

export function createDapp(options: CreateDappOptions): Dapp {
  const base = options.rollupUrl.replace(/\/+$/, "");
  const log = options.log ?? (() => {});
  const transport = createRollupFetch();
  const app = createDerollApp(base, transport.fetch);

  const outputs: RollupOutputs = {
    notice: (payload) => app.createNotice({ payload }),
    report: (payload) => app.createReport({ payload }),
    // @deroll/app 0.7.0 has no exception helper.
    exception: async (payload: Hex) => {
      const response = await transport.fetch(`${base}/exception`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ payload }),
      });
      if (!response.ok) throw new Error(`/exception answered ${response.status}`);
      await response.arrayBuffer();
    },
  };

  const dispatcher = createDispatcher({ db: options.db, admins: options.admins, outputs, log });
  // deroll treats anything but an explicit "accept" as a rejection; the dispatcher never throws.
  app.addAdvanceHandler((data) => dispatcher.advance(data));
  app.addInspectHandler((data) => dispatcher.inspect(data));

  async function run(runOptions: { signal?: AbortSignal; retryDelayMs?: number } = {}): Promise<void> {
    const { signal } = runOptions;
    const maxDelay = runOptions.retryDelayMs ?? 2000;
    // Dropping the connection ends a /finish that is waiting, so an abort stops the loop at once.
    signal?.addEventListener("abort", () => transport.close(), { once: true });
    let delay = 100;
    while (!signal?.aborted) {
      try {
        await app.start();
      } catch (error) {
        if (signal?.aborted) return;
        log(`rollup server ${base} unreachable (${messageOf(error)}); retrying in ${delay} ms`);
        await sleep(delay, signal);
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  }

  return { app, dispatcher, run };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
