/**
 * `createDapp`: the real dapp wired to a rollup HTTP server through @deroll/app, without side effects
 * until `run` is called, so tests drive the same code main.ts runs.
 */
import type { Address, Hex } from "viem";
import { messageOf } from "../../common/errors.ts";
import type { DappDatabase } from "../db/open.ts";
import { createDispatcher, type Dispatcher, type RollupOutputs } from "../dispatch.ts";
import { createRollupTransport, withRollupRequests, type RollupAnswer, type RollupTransport } from "./http-connection.ts";

// Evaluated while RollupRequest is the global Request: see RollupRequest (dapp/transports/http-connection.ts).
const { createApp } = await withRollupRequests(() => import("@deroll/app"));

export type RollupApp = ReturnType<typeof createApp>;

export interface CreateDappOptions {
  db: DappDatabase;
  admins: readonly Address[];
  /** Base URL of the rollup HTTP server (/finish, /notice, /report, /exception). */
  rollupUrl: string;
  log?: (line: string) => void;
  /** DAPP_CHAIN_ID and DAPP_ADDRESS: the domain of owners' signed consents under Rollups v1. */
  application?: { chainId: number; address: Address };
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
  const transport = createRollupTransport(base);
  const app = createDerollApp(base, transport.fetch);

  const outputs: RollupOutputs = {
    notice: (payload) => pipelined(transport, "/notice", payload, log),
    report: (payload) => pipelined(transport, "/report", payload, log),
    // @deroll/app 0.7.0 has no exception helper. Waited for: in v1 an exception ends the request.
    exception: async (payload: Hex) => checkAnswer("/exception", await transport.post("/exception", payloadBody(payload))),
  };

  const dispatcher = createDispatcher({ db: options.db, admins: options.admins, outputs, log, ...(options.application === undefined ? {} : { application: options.application }) });
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

/**
 * Writes an output and resolves at once, without waiting for the server's answer: the `/finish` that
 * follows is written behind it on the same connection, so the server still reads the output first, and
 * one loopback round trip per output is saved (an inspect is a report and a finish; docs/performance.md). Nothing depends on the answer: a notice's index is not used, and a failed output was
 * only logged when it was waited for too (the input is committed by then). It is checked when it arrives.
 */
function pipelined(transport: RollupTransport, path: "/notice" | "/report", payload: Hex, log: (line: string) => void): Promise<void> {
  transport
    .post(path, payloadBody(payload))
    .then((answer) => checkAnswer(path, answer))
    .catch((error: unknown) => log(`could not send ${path}: ${messageOf(error)}`));
  return Promise.resolve();
}

/**
 * `{"payload":"0x…"}` without JSON.stringify: every payload comes from the dapp's hex encoders
 * (common/hex.ts), and hex digits never need escaping; stringify would scan an owner's 11 KiB page again.
 */
function payloadBody(payload: Hex): string {
  return `{"payload":"${payload}"}`;
}

function checkAnswer(path: string, answer: RollupAnswer): void {
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${path} answered ${answer.status}: ${answer.body.toString("utf8").slice(0, 200)}`);
  }
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
