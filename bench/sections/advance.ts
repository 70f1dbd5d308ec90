/**
 * The advance section: create_attestation inputs per second, straight (the largest store's straight rig,
 * fed over IPC, against the dapp's dispatcher in this process on a copy of the same store) and through
 * the chain's InputBox (the whole stack, eth_sendTransaction batches from the admin, against how fast the
 * chain mined them). A node that stops making progress fails the run instead of hanging it. And the
 * dapp's rate on compact batches against JSON batches of the same claims (issue 37), in-process.
 */
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";
import { jsonToHex } from "../../common/hex.ts";
import { openDatabase } from "../../dapp/db/open.ts";
import { createDispatcher } from "../../dapp/dispatch.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { inputsOnChain, type TestStack } from "../../test/support/stack.ts";
import { startProgress } from "../../toolkit/progress.ts";
import { benchClaims, benchCompactSchema, compactPayload, jsonPayload } from "../claim-writes.ts";
import { attestationParams, BENCH_ADMIN, BENCH_SCHEMA_ID, fedOwner } from "../inputs.ts";
import { figure, type Figure } from "../report.ts";
import type { DirectRig } from "../rig.ts";
import type { SeedResult } from "../seed.ts";
import { ROUNDS, type BenchContext } from "./context.ts";
import { addInputData, inputStatus, rpc, type RpcAnswer } from "./whole-stack.ts";

/** How long the chain advance may make no progress before the run fails. */
const STALL_MS = 60_000;

/** The straight floor: the dapp's dispatcher in this process on a copy of the largest store, no HTTP (inputs/s). */
export async function advanceFloor(ctx: BenchContext, big: SeedResult): Promise<number> {
  const { log, profile, work } = ctx;
  const floorPath = join(work, "floor.sqlite");
  copyFileSync(big.path, floorPath);
  const rate = await (async () => {
    const db = openDatabase({ path: floorPath });
    const ignore = async (): Promise<void> => {};
    const dispatcher = createDispatcher({ db, admins: [BENCH_ADMIN], outputs: { notice: ignore, report: ignore, exception: ignore } });
    const count = Math.min(profile.advance, 5_000);
    const payloads = Array.from({ length: count }, (_, i) => jsonToHex({ type: "create_attestation", params: attestationParams(i, fedOwner(i)) }));
    const now = Math.floor(Date.now() / 1000);
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const status = await dispatcher.advance({
        metadata: { msg_sender: BENCH_ADMIN, input_index: i, block_number: i + 1, timestamp: now },
        payload: payloads[i] as string,
      });
      if (status !== "accept") throw new Error(`advance floor: input ${i} rejected`);
    }
    const measured = count / ((performance.now() - started) / 1000);
    db.$client.close();
    return measured;
  })();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(floorPath + suffix, { force: true });
  log(`floors: in-process advance ${rate.toFixed(0)}/s`);
  return rate;
}

/** The batch advance figure's name (bench/run.ts expects it). */
export const BATCH_ADVANCE = (stored: number): string => `compact batches of 32, in-process @ ${stored.toLocaleString("en-US")}`;
const BATCH = 32;

/**
 * The dapp's dispatcher in this process on a copy of `store`: `profile.batchInputs` compact batches of 32
 * claims against as many JSON batches of the same claims, in interleaved rounds on the one database (both
 * see it grow alike); claims applied per second of each. Every item must apply.
 */
export async function batchAdvance(ctx: BenchContext, store: SeedResult): Promise<{ compact: number; json: number }> {
  const path = join(ctx.work, "batches.sqlite");
  copyFileSync(store.path, path);
  const db = openDatabase({ path });
  try {
    const ignore = async (): Promise<void> => {};
    let reports = 0;
    const report = async (): Promise<void> => void (reports += 1);
    const dispatcher = createDispatcher({ db, admins: [BENCH_ADMIN], outputs: { notice: ignore, report, exception: ignore } });
    const schema = dispatcher.store.schemaById(Buffer.from(BENCH_SCHEMA_ID.slice(2), "hex"));
    if (schema === undefined) throw new Error("batch advance: the store holds no bench schema");
    const count = ctx.profile.batchInputs;
    const batches = Array.from({ length: count }, (_, b) => benchClaims(BATCH, 5_000_000 + b * BATCH));
    const payloads = { json: batches.map(jsonPayload), compact: batches.map((items) => compactPayload(items, benchCompactSchema(schema.id)).payload) };
    const seconds = { json: 0, compact: 0 };
    const now = Math.floor(Date.now() / 1000);
    let index = 0;
    // One batch of each first, not timed: the first round would otherwise pay both paths' warm-up.
    for (const payload of [jsonPayload(benchClaims(BATCH, 4_000_000)), compactPayload(benchClaims(BATCH, 4_000_000), benchCompactSchema(schema.id)).payload]) {
      await dispatcher.advance({ metadata: { msg_sender: BENCH_ADMIN, input_index: index, block_number: index + 1, timestamp: now }, payload });
      index += 1;
    }
    const perRound = Math.ceil(count / ROUNDS);
    for (let round = 0; round * perRound < count; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or a larger) database.
      const order = round % 2 === 0 ? (["json", "compact"] as const) : (["compact", "json"] as const);
      for (const encoding of order) {
        const started = performance.now();
        for (let b = round * perRound; b < Math.min(count, (round + 1) * perRound); b++) {
          const status = await dispatcher.advance({ metadata: { msg_sender: BENCH_ADMIN, input_index: index, block_number: index + 1, timestamp: now }, payload: payloads[encoding][b] as string });
          index += 1;
          // An item's report would mean it did not apply: both encodings must do all the work.
          if (status !== "accept" || reports > 0) throw new Error(`batch advance: ${encoding} batch ${b} was not applied whole`);
        }
        seconds[encoding] += (performance.now() - started) / 1000;
      }
    }
    const rates = { compact: (count * BATCH) / seconds.compact, json: (count * BATCH) / seconds.json };
    ctx.log(`batch advance: ${count} batches of ${BATCH} each way: compact ${rates.compact.toFixed(0)} claims/s, JSON ${rates.json.toFixed(0)} claims/s`);
    return rates;
  } finally {
    db.$client.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  }
}

/** `profile.advance` inputs fed to the largest store's straight rig, from index 0. */
export async function straightAdvance(ctx: BenchContext, rig: DirectRig): Promise<{ rate: number; seconds: number }> {
  const { log, profile } = ctx;
  const done = await rig.feed(profile.advance, 0, 0);
  if (done.accepted !== profile.advance) throw new Error(`straight advance: ${done.accepted} of ${profile.advance} accepted`);
  log(`straight advance: ${profile.advance} inputs in ${done.seconds.toFixed(1)} s (record ${done.recordSeconds.toFixed(2)} s)`);
  return { rate: profile.advance / done.seconds, seconds: done.seconds };
}

/**
 * `count` create_attestation inputs through the InputBox from the admin (account #0, unlocked on hardhat),
 * in JSON-RPC batches of eth_sendTransaction, then waits until the node has processed the last one.
 */
export async function sendThroughInputBox(stack: TestStack, count: number, firstItem: number): Promise<{ seconds: number; minedSeconds: number }> {
  const before = await inputsOnChain(stack);
  const last = before + count - 1;
  const from = DEFAULTS.adminAddress;
  const batchSize = 50;
  const started = performance.now();
  const sending = startProgress({ label: "chain advance: inputs sent", total: count });
  for (let at = 0; at < count; at += batchSize) {
    const batch = [];
    for (let k = at; k < Math.min(count, at + batchSize); k++) {
      const item = firstItem + k;
      const payload = jsonToHex({ type: "create_attestation", params: attestationParams(item, fedOwner(item)) });
      batch.push({
        jsonrpc: "2.0",
        id: k,
        method: "eth_sendTransaction",
        params: [{ from, to: stack.addresses.inputBox, data: addInputData(stack, payload), gas: "0x100000" }],
      });
    }
    const answers = await rpc<RpcAnswer<Hex>[]>(stack.urls.rpc, batch);
    const failed = answers.find((a) => a.result === undefined);
    if (failed !== undefined) throw new Error(`chain advance: ${failed.error?.message ?? "no result"}`);
    sending.tick(answers.length);
  }
  sending.done();
  const minedSeconds = (performance.now() - started) / 1000;
  const processing = startProgress({ label: "chain advance: inputs processed", total: count });
  // A node that stops making progress fails the run instead of hanging it.
  let progress = { processed: -1, at: performance.now() };
  for (;;) {
    try {
      const status = await inputStatus(stack, last);
      // Not processed yet: UNPROCESSED on v1, NONE on v2.
      if (status !== "UNPROCESSED" && status !== "NONE") {
        if (status !== "ACCEPTED") throw new Error(`chain advance: input ${last} is ${status}`);
        break;
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("chain advance")) throw error;
      // Not seen by the node yet.
    }
    const health = (await (await fetch(`${stack.urls.node}/healthz`)).json()) as { processedInputCount?: number };
    const processed = health.processedInputCount ?? -1;
    if (processed > progress.processed && processed > before) processing.tick(processed - Math.max(before, progress.processed));
    if (processed !== progress.processed) progress = { processed, at: performance.now() };
    else if (performance.now() - progress.at > STALL_MS) {
      const tail = stack.logs("devnode").split("\n").slice(-15).join("\n");
      throw new Error(`chain advance: the node processed nothing for ${STALL_MS / 1000} s (at ${processed}); devnode log:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  processing.done();
  return { seconds: (performance.now() - started) / 1000, minedSeconds };
}

/** `profile.chainAdvance` inputs through the whole stack's InputBox, items after those the straight rig was fed. */
export async function chainAdvance(ctx: BenchContext, stack: TestStack): Promise<{ seconds: number; minedSeconds: number }> {
  const { log, profile } = ctx;
  const chain = await sendThroughInputBox(stack, profile.chainAdvance, profile.advance + profile.mixedInputs);
  log(`chain advance: ${profile.chainAdvance} inputs in ${chain.seconds.toFixed(1)} s (mined in ${chain.minedSeconds.toFixed(1)} s)`);
  return chain;
}

export function advanceFigures(
  ctx: BenchContext,
  largest: number,
  straight: { rate: number },
  floorRate: number,
  chain: { seconds: number; minedSeconds: number },
): Figure[] {
  const { profile } = ctx;
  return [
    figure("advance", `straight (devnode model, no chain) @ ${largest.toLocaleString("en-US")}`, "inputs/s", straight.rate, { name: "dispatcher in-process", value: floorRate }, {
      target: { text: ">= 2,000/s", met: (v: number) => v >= 2000 },
    }),
    figure("advance", `through InputBox @ ${profile.inspectStore.toLocaleString("en-US")}`, "inputs/s", profile.chainAdvance / chain.seconds, {
      name: "chain inclusion",
      value: profile.chainAdvance / chain.minedSeconds,
    }),
  ];
}
