/**
 * Bench-only entry point: the devnode's own rollup model, rollup HTTP server, query server and record
 * (devnode/model.ts, rollup-server.ts, v1/node-server.ts, store.ts), with no chain. Instead of the chain
 * follower, the bench feeds `create_attestation` inputs over IPC; they are recorded and queued exactly
 * as the follower records and queues what it reads from the InputBox. The devnode's public behaviour is
 * untouched: this file only composes its parts.
 *
 *   node --import tsx bench/direct-node.ts   (env: BENCH_RECORD_PATH, BENCH_NODE_PORT, BENCH_ROLLUP_PORT)
 */
import type { Server } from "node:net";
import type { AddressInfo } from "node:net";
import type { Hex } from "viem";
import { z } from "zod";
import { jsonToHex } from "../common/hex.ts";
import { createGraphqlApi } from "../devnode/v1/graphql.ts";
import { RollupModel, type AdvanceSink } from "../devnode/model.ts";
import { createQueryServer } from "../devnode/v1/node-server.ts";
import { createRollupServer } from "../devnode/rollup-server.ts";
import { DevnodeStore, type AdvanceOutputs, type CompletionStatus, type InputRecord } from "../devnode/store.ts";
import { attestationParams, BENCH_ADMIN, fedOwner } from "./inputs.ts";

/** Parent → child: record and queue `count` create_attestation inputs (bench items from `firstItem`). */
export interface FeedMessage {
  type: "feed";
  count: number;
  firstIndex: number;
  firstItem: number;
}

/** Child → parent. */
export type DirectNodeMessage =
  | { type: "ready"; nodePort: number; rollupPort: number }
  | { type: "done"; completed: number; accepted: number; seconds: number; recordSeconds: number };

const feedSchema = z.object({
  type: z.literal("feed"),
  count: z.int().positive(),
  firstIndex: z.int().min(0),
  firstItem: z.int().min(0),
});

const env = z
  .object({
    BENCH_RECORD_PATH: z.string().min(1),
    BENCH_NODE_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    BENCH_ROLLUP_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  })
  .parse(process.env);

const send = (message: DirectNodeMessage): void => {
  process.send?.(message);
};

const store = new DevnodeStore(env.BENCH_RECORD_PATH);
let completed = 0;
let accepted = 0;
let batch: { until: number; started: number; recordSeconds: number } | undefined;

/** The record, plus a count of finished inputs so the parent learns when a feed has been processed. */
const sink: AdvanceSink = {
  completeInput(index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null): void {
    store.completeInput(index, status, outputs, exceptionPayload);
    completed++;
    if (status === "ACCEPTED") accepted++;
    if (batch !== undefined && completed >= batch.until) {
      send({
        type: "done",
        completed,
        accepted,
        seconds: (performance.now() - batch.started) / 1000,
        recordSeconds: batch.recordSeconds,
      });
      batch = undefined;
    }
  },
};

// The devnode's defaults (devnode/config.ts).
const model = new RollupModel(sink, {
  finishTimeoutMs: 10_000,
  dappWaitMs: 3_000,
  inspectTimeoutMs: 30_000,
  processedInputCount: store.processedCount(),
});
const rollupServer = createRollupServer(model);
const queryServer = createQueryServer(model, createGraphqlApi(store));

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

process.on("message", (raw: unknown) => {
  const feed = feedSchema.parse(raw);
  const started = performance.now();
  const inputs: InputRecord[] = [];
  const now = Math.floor(Date.now() / 1000);
  for (let k = 0; k < feed.count; k++) {
    const item = feed.firstItem + k;
    inputs.push({
      index: feed.firstIndex + k,
      status: "UNPROCESSED",
      msgSender: BENCH_ADMIN,
      payload: jsonToHex({ type: "create_attestation", params: attestationParams(item, fedOwner(item)) }),
      blockNumber: feed.firstIndex + k + 1,
      timestamp: now,
    });
  }
  // As the follower does after a scan: record the inputs in one transaction, then queue them in order.
  store.addInputs(inputs, BigInt(feed.firstIndex + feed.count + 1));
  batch = { until: completed + feed.count, started, recordSeconds: (performance.now() - started) / 1000 };
  for (const input of inputs) model.enqueueAdvance(input);
});

const [rollupPort, nodePort] = [await listen(rollupServer, env.BENCH_ROLLUP_PORT), await listen(queryServer, env.BENCH_NODE_PORT)];
send({ type: "ready", nodePort, rollupPort });

function shutdown(): void {
  model.close();
  rollupServer.closeAllConnections();
  queryServer.closeAllConnections();
  rollupServer.close();
  queryServer.close();
  store.close();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
process.on("disconnect", shutdown);
