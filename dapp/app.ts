/**
 * `createDapp`: the real dapp wired to a rollup HTTP server through @deroll/app, without side effects
 * until `run` is called, so tests drive the same code main.ts runs.
 */
import { createApp } from "@deroll/app";
import type { Address, Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import type { DappDatabase } from "./db/open.ts";
import { createDispatcher, type Dispatcher, type RollupOutputs } from "./dispatch.ts";

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

export function createDapp(options: CreateDappOptions): Dapp {
  const base = options.rollupUrl.replace(/\/+$/, "");
  const log = options.log ?? (() => {});
  const app = createApp({ url: base });

  const outputs: RollupOutputs = {
    notice: (payload) => app.createNotice({ payload }),
    report: (payload) => app.createReport({ payload }),
    // @deroll/app 0.7.0 has no exception helper.
    exception: async (payload: Hex) => {
      const response = await fetch(`${base}/exception`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ payload }),
      });
      if (!response.ok) throw new Error(`/exception answered ${response.status}`);
      await response.arrayBuffer();
    },
  };

  const dispatcher = createDispatcher({ db: options.db, admins: options.admins, outputs, log });
  // deroll treats anything but an explicit "accept" as a rejection.
  app.addAdvanceHandler((data) => dispatcher.advance(data));
  app.addInspectHandler((data) => dispatcher.inspect(data));

  async function run(runOptions: { signal?: AbortSignal; retryDelayMs?: number } = {}): Promise<void> {
    const { signal } = runOptions;
    const maxDelay = runOptions.retryDelayMs ?? 2000;
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
