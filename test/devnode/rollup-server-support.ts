/**
 * Shared by the rollup-server tests (rollup-server*.test.ts): a harness with the devnode's rollup HTTP
 * server and query interface over one RollupModel and an in-memory SQLite record, with no chain
 * (`addInput` records and queues an input as the chain follower does), and the fake dapp's and client's
 * calls (/finish, the outputs, /inspect, /graphql). Each test file calls `useHarness()` once at its top
 * level and reaches the current harness as `h`.
 */
import type { AddressInfo, Server } from "node:net";
import type { Address } from "viem";
import { afterEach, beforeEach, expect } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { RollupModel, type RollupRequest } from "../../devnode/model.ts";
import { createRollupServer } from "../../devnode/rollup-server.ts";
import type { Reader } from "../../devnode/reader.ts";
import { DevnodeStore, type InputRecord } from "../../devnode/store.ts";
import { createGraphqlApi } from "../../devnode/v1/graphql.ts";
import { createQueryServer } from "../../devnode/v1/node-server.ts";

/** Waiting for the servers to act on a request: generous, the machine may be loaded. */
export const POLL = { timeout: 10_000 };
export const SENDER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;

export interface Harness {
  store: DevnodeStore;
  model: RollupModel;
  rollupUrl: string;
  nodeUrl: string;
  /** Records an input as the chain follower does and queues it for the dapp. */
  addInput(payload: unknown): InputRecord;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * The devnode's rollup HTTP server and query interface over `store` and one RollupModel, on free ports;
 * `reader` (a validator's reads and snapshots, given the model) is served at `/reader` and `/snapshot`.
 */
export async function startServers(store: DevnodeStore, readerOf?: (model: RollupModel) => Reader): Promise<Harness> {
  const model = new RollupModel(store, {
    finishTimeoutMs: 300,
    dappWaitMs: 300,
    inspectTimeoutMs: 10_000,
    processedInputCount: 0,
  });
  const rollupServer = createRollupServer(model);
  const queryServer = createQueryServer(model, createGraphqlApi(store), undefined, undefined, undefined, readerOf?.(model));
  const rollupUrl = await listen(rollupServer);
  const nodeUrl = await listen(queryServer);
  let next = 0;
  return {
    store,
    model,
    rollupUrl,
    nodeUrl,
    addInput(payload) {
      const input: InputRecord = {
        index: next++,
        status: "UNPROCESSED",
        msgSender: SENDER,
        payload: jsonToHex(payload),
        blockNumber: 10 + next,
        timestamp: 1_700_000_000 + next,
      };
      store.addInputs([input], BigInt(input.blockNumber + 1));
      model.enqueueAdvance(input);
      return input;
    },
    async close() {
      model.close();
      for (const server of [rollupServer, queryServer]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      store.close();
    },
  };
}

function startHarness(): Promise<Harness> {
  return startServers(new DevnodeStore(":memory:"));
}

/**
 * The current test's harness: a live binding, reassigned before each test of a file that called
 * `useHarness()`.
 */
export let h: Harness;

/** Starts a fresh harness before each test of the calling file, and closes it after. */
export function useHarness(): void {
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });
}

// ---- the fake dapp ----

export async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${h.rollupUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** `/finish` until a request arrives (202 answers are retried, as a dapp does). */
export async function nextRequest(status: "accept" | "reject" = "accept"): Promise<RollupRequest> {
  for (;;) {
    const response = await post("/finish", { status });
    if (response.status === 200) return (await response.json()) as RollupRequest;
    expect(response.status).toBe(202);
    await response.text();
  }
}

export async function output(path: "/notice" | "/voucher" | "/report" | "/exception", body: unknown): Promise<Response> {
  const response = await post(path, body);
  return response;
}

export async function inspectGet(rawPath: string): Promise<Response> {
  return fetch(`${h.nodeUrl}/inspect/${rawPath}`);
}

export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: T; errors?: { message: string }[] }> {
  const response = await fetch(`${h.nodeUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: T; errors?: { message: string }[] };
}

export function advanceOf(request: RollupRequest): Extract<RollupRequest, { request_type: "advance_state" }>["data"] {
  if (request.request_type !== "advance_state") throw new Error(`expected an advance, got ${request.request_type}`);
  return request.data;
}

export function inspectOf(request: RollupRequest): Extract<RollupRequest, { request_type: "inspect_state" }>["data"] {
  if (request.request_type !== "inspect_state") throw new Error(`expected an inspect, got ${request.request_type}`);
  return request.data;
}
