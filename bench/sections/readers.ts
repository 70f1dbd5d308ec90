/**
 * The readers section (docs/operations.md, Readers): a stack of its own, whose node claims and two readers
 * (validators that replay the chain with their own dapps) serve reads, fed `create_attestation` inputs
 * through the InputBox. Reads per second of `attestation` and `verify` through three api processes on the
 * same stack: one reading the node, one reading reader 1, one reading both readers; the node's inspect
 * count during the reader loads, which must stay 0 (the run fails otherwise); and a reader's catch-up from
 * genesis, inputs per second, against how fast the node advanced through the same inputs.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { inputIdOf } from "../../common/ids.ts";
import { jsonToHex } from "../../common/hex.ts";
import { freePorts, processArgs, readerDataDirOf, startStack, type TestStack } from "../../test/support/stack.ts";
import { BENCH_SCHEMA, BENCH_SCHEMA_ID, fedOwner } from "../inputs.ts";
import { runInterleaved, type LoadOptions } from "../load.ts";
import { spawnChild, tail, type Child } from "../procs.ts";
import { figure, type Figure } from "../report.ts";
import { sendThroughInputBox } from "./advance.ts";
import { acceptedInspect, inspectPath, ROUNDS, type BenchContext, type SectionRows } from "./context.ts";
import { JWT_SECRET, rpc, addInputData } from "./whole-stack.ts";

export const READER_LOADS = ["node", "1 reader", "2 readers"] as const;
export const READ_QUERIES = ["attestation", "verify"] as const;
export const readerFigureName = (query: (typeof READ_QUERIES)[number], via: (typeof READER_LOADS)[number]): string => `${query} reads through the api, ${via}`;
export const CATCH_UP_FIGURE = "reader catch-up from genesis";
/** One reader's own capacity, straight to its query interface: what a reader on a machine of its own serves. */
export const READER_INSPECT_FIGURE = "inspect attestation on one reader, no api";

/** The node's inspects answered so far, every outcome (devnode_inspect_duration_seconds_count). */
async function nodeInspects(stack: TestStack): Promise<number> {
  const text = await (await fetch(`${stack.urls.node}/metrics`)).text();
  return [...text.matchAll(/^devnode_inspect_duration_seconds_count\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

async function processedBy(url: string): Promise<number> {
  try {
    return ((await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).json()) as { processedInputCount?: number }).processedInputCount ?? 0;
  } catch {
    return 0;
  }
}

/** An api process of its own on the stack, reading from `readUrls` (none: the node). */
async function startApi(ctx: BenchContext, stack: TestStack, name: string, readUrls: readonly string[]): Promise<{ child: Child; url: string }> {
  const [port] = await freePorts(1);
  const child = spawnChild({
    name,
    file: process.execPath,
    args: processArgs("api/main.ts"),
    env: {
      API_PORT: String(port),
      HOST: "127.0.0.1",
      ROLLUP_URL: stack.urls.node,
      RPC_URL: stack.urls.rpc,
      JWT_SECRET,
      RATE_LIMITS: "off",
      LOG_LEVEL: "warn",
      DATA_DIR: join(ctx.work, name),
      READ_URLS: readUrls.join(","),
    },
    cwd: ctx.root,
    logFile: join(ctx.work, "logs", `${name}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthcheck`)).ok) return { child, url };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start:\n${tail(child.logFile)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `requests` timed reads per figure, after `warmup` untimed ones (on the first round of each load). */
export async function readerRows(ctx: BenchContext, inputs: number, requests: number, warmup: number): Promise<SectionRows> {
  const { log } = ctx;
  const stack = await startStack({ api: false, readers: 2, dataDir: join(ctx.work, "readers-stack"), dappCommand: ctx.bundle.command, readyTimeoutMs: 120_000 });
  const apis: Child[] = [];
  try {
    // Reader 2 is away while the node advances, then replays everything from genesis.
    await stack.kill("reader-dapp-2", "SIGTERM");
    await stack.kill("reader-2", "SIGTERM");
    const schema = await rpc<{ result?: string }>(stack.urls.rpc, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: stack.addresses.admin, to: stack.addresses.inputBox, data: addInputData(stack, jsonToHex({ type: "register_schema", params: BENCH_SCHEMA })), gas: "0x200000" }],
    });
    if (schema.result === undefined) throw new Error("readers: the schema was not sent");
    const advanced = await sendThroughInputBox(stack, inputs, 0);
    const total = await processedBy(stack.urls.node);
    const nodeRate = inputs / advanced.seconds;
    log(`readers: the node advanced ${inputs} inputs in ${advanced.seconds.toFixed(1)} s (${nodeRate.toFixed(0)}/s)`);

    rmSync(readerDataDirOf(stack, 2), { recursive: true, force: true });
    const started = performance.now();
    await stack.start("reader-2");
    await stack.start("reader-dapp-2");
    const reader2 = stack.urls.readers[1] as string;
    while ((await processedBy(reader2)) < total) {
      if (performance.now() - started > 30 * 60_000) throw new Error("readers: reader 2 did not catch up in 30 minutes");
      await new Promise((r) => setTimeout(r, 50));
    }
    const catchUpSeconds = (performance.now() - started) / 1000;
    log(`readers: reader 2 replayed ${total} inputs from genesis in ${catchUpSeconds.toFixed(1)} s (${(total / catchUpSeconds).toFixed(0)}/s, its start included)`);

    const firstInput = total - inputs;
    const paths = {
      attestation: (i: number): string => `/api/core/attestation/${inputIdOf("create_attestation", firstInput + (i % inputs))}`,
      verify: (i: number): string => `/api/core/verify?owner=${fedOwner(i % inputs)}&schemaId=${BENCH_SCHEMA_ID}`,
    };
    const via = await Promise.all([startApi(ctx, stack, "api-node", []), startApi(ctx, stack, "api-1-reader", stack.urls.readers.slice(0, 1)), startApi(ctx, stack, "api-2-readers", stack.urls.readers)]);
    apis.push(...via.map((v) => v.child));
    const loads = (url: string): LoadOptions[] =>
      READ_QUERIES.map((query) => ({ baseUrl: url, concurrency: 16, count: requests, warmup, next: (i: number) => ({ method: "GET" as const, path: paths[query](i) }) }));
    const [viaNode] = via;
    const nodeResults = await runInterleaved(loads(viaNode?.url ?? ""), ROUNDS);
    const before = await nodeInspects(stack);
    const readerResults = [await runInterleaved(loads(via[1]?.url ?? ""), ROUNDS), await runInterleaved(loads(via[2]?.url ?? ""), ROUNDS)];
    const duringReaders = (await nodeInspects(stack)) - before;
    const direct = await runInterleaved(
      [
        {
          baseUrl: stack.urls.readers[0] as string,
          concurrency: 16,
          count: requests,
          warmup,
          next: (i: number) => ({ method: "GET" as const, path: inspectPath({ type: "attestation", params: { attestation_id: inputIdOf("create_attestation", firstInput + (i % inputs)) } }) }),
          check: acceptedInspect,
        },
      ],
      ROUNDS,
    );
    if (duringReaders !== 0) throw new Error(`readers: the node answered ${duringReaders} inspects while the api read from readers (must be 0)`);

    const figures: Figure[] = [];
    READ_QUERIES.forEach((query, q) => {
      const node = nodeResults[q]?.rps ?? Number.NaN;
      figures.push(figure("api", readerFigureName(query, "node"), "req/s", node, { name: "itself (the node answers)", value: node }));
      READER_LOADS.slice(1).forEach((name, k) => {
        const rps = readerResults[k]?.[q]?.rps ?? Number.NaN;
        log(`readers: ${query} via ${name} ${rps.toFixed(0)}/s (node ${node.toFixed(0)}/s)`);
        figures.push(figure("api", readerFigureName(query, name), "req/s", rps, { name: "the same api reading the node", value: node }));
      });
    });
    const apiViaReaders = readerResults[1]?.[0]?.rps ?? Number.NaN;
    figures.push(figure("inspect", READER_INSPECT_FIGURE, "req/s", direct[0]?.rps ?? Number.NaN, { name: "the api's attestation reads through 2 readers", value: apiViaReaders }));
    figures.push(figure("advance", CATCH_UP_FIGURE, "inputs/s", total / catchUpSeconds, { name: "the node's advance through the InputBox", value: nodeRate }));
    const note =
      `readers: a stack of its own with two readers; ${inputs.toLocaleString("en-US")} create_attestation inputs through the InputBox; reads through three api ` +
      `processes (reading the node, reader 1, both readers), 16 connections, ${requests.toLocaleString("en-US")} requests per figure; the node answered ${duringReaders} ` +
      "inspects during the reader loads; catch-up: reader 2 removed, then started on an empty record and timed until it had processed every input (its start included). " +
      "All of it shares this machine's two cores: the figures show what a reader costs and serves, not how N readers on N machines scale (docs/operations.md).";
    return { figures, notes: [note] };
  } finally {
    for (const api of apis) await api.stop();
    await stack.stop();
  }
}
