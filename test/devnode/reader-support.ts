/**
 * What the reader suites share (reader.e2e.test.ts, reader-v2.e2e.test.ts): a reader's status and
 * snapshots over HTTP, a burst of inputs, the dapp database's digest, and a devnode started from a
 * snapshot that must refuse to start.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { encodeFunctionData, type Address } from "viem";
import { databaseDigest } from "../../dapp/db/digest.ts";
import type { ReaderStatus } from "../../devnode/reader.ts";
import type { SnapshotManifest } from "../../devnode/snapshot.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { encodePayload } from "../../scripts/lib/rollup-client.ts";
import { freePorts, processArgs, PROJECT_ROOT, type TestStack } from "../support/stack.ts";

export async function readerStatus(stack: TestStack): Promise<ReaderStatus> {
  const response = await fetch(`${stack.urls.node}/reader`);
  if (response.status !== 200) throw new Error(`GET /reader answered ${response.status}`);
  return (await response.json()) as ReaderStatus;
}

export interface SnapshotAnswer {
  folder: string;
  inputCount: number;
  snapshot: SnapshotManifest;
}

export async function takeSnapshot(stack: TestStack, path?: string): Promise<{ status: number; body: SnapshotAnswer & { error?: { code: string; message: string } } }> {
  const response = await fetch(`${stack.urls.node}/snapshot`, { method: "POST", ...(path === undefined ? {} : { body: JSON.stringify({ path }), headers: { "content-type": "application/json" } }) });
  return { status: response.status, body: (await response.json()) as SnapshotAnswer & { error?: { code: string; message: string } } };
}

/** The claimer's own count of processed inputs (its /healthz). */
export async function processedBy(stack: TestStack): Promise<number> {
  return ((await (await fetch(`${stack.urls.node}/healthz`)).json()) as { processedInputCount: number }).processedInputCount;
}

async function rpc(stack: TestStack, method: string, params: unknown[] = []): Promise<void> {
  const answer = (await (await fetch(stack.urls.rpc, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()) as { error?: unknown };
  if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
}

/**
 * Sends `inputs` from `from` (an unlocked hardhat account) in JSON-RPC batches of eth_sendTransaction: a
 * load in seconds. Each input gets its own block, or with `perBlock` that many share one (a v2 epoch of
 * one block is one claim: a thousand blocks would be a thousand claims).
 */
export async function burst(stack: TestStack, inputs: readonly unknown[], from: Address, perBlock?: number): Promise<void> {
  const BATCH = perBlock ?? 200;
  if (perBlock !== undefined) await rpc(stack, "evm_setAutomine", [false]);
  try {
    for (let at = 0; at < inputs.length; at += BATCH) {
      await sendBatch(stack, inputs.slice(at, at + BATCH), from);
      if (perBlock !== undefined) await rpc(stack, "evm_mine");
    }
  } finally {
    if (perBlock !== undefined) await rpc(stack, "evm_setAutomine", [true]);
  }
}

async function sendBatch(stack: TestStack, inputs: readonly unknown[], from: Address): Promise<void> {
  const batch = inputs.map((input, i) => ({
    jsonrpc: "2.0",
    id: i,
    method: "eth_sendTransaction",
    // The gas given: with automine off, hardhat would estimate each against the block before the pending ones.
    params: [{ from, to: stack.addresses.inputBox, gas: "0x40000", data: encodeFunctionData({ abi: inputBoxAbi, functionName: "addInput", args: [stack.addresses.dapp, encodePayload(input)] }) }],
  }));
  const response = await fetch(stack.urls.rpc, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(batch) });
  const answers = (await response.json()) as { error?: unknown }[];
  const failed = answers.filter((a) => a.error !== undefined);
  if (failed.length > 0) throw new Error(`inputs refused by the chain: ${JSON.stringify(failed[0])}`);
}

/** The digest of a stack's dapp database (dapp/db/digest.ts, as `npm run db:digest`), read beside the running dapp. */
export function dappDigest(stack: TestStack): string {
  const db = new Database(join(stack.dataDir, "dapp.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return databaseDigest(db);
  } finally {
    db.close();
  }
}

export function sha256Of(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** A copy of a snapshot's folder to spoil, with its manifest edited by `edit`. */
export function spoiledCopy(folder: string, edit: (manifest: SnapshotManifest, copy: string) => void = () => {}): string {
  const copy = mkdtempSync(join(tmpdir(), "reader-spoiled-"));
  cpSync(folder, copy, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(copy, "snapshot.json"), "utf8")) as SnapshotManifest;
  edit(manifest, copy);
  writeFileSync(join(copy, "snapshot.json"), JSON.stringify(manifest, null, 2));
  return copy;
}

/** A validator's devnode alone, started with `env` on `rpcUrl`, which is expected to stop by itself: its exit code and output. */
export async function startToRefuse(rpcUrl: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const [node, rollupHttp] = await freePorts(2);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, processArgs("devnode/main.ts"), {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, RPC_URL: rpcUrl, DEVNODE_ROLE: "validator", DEVNODE_CHAIN: "external", NODE_PORT: String(node), ROLLUP_HTTP_PORT: String(rollupHttp), ...env },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    // One that starts after all is a failure of the test, not a hang.
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The raw answers of the same inspects on two nodes, for a byte-for-byte comparison. */
export async function rawAnswers(node: string, requests: readonly { method: "GET" | "POST"; path: string; body?: string }[]): Promise<string[]> {
  const answers: string[] = [];
  for (const request of requests) {
    const response = await fetch(`${node}${request.path}`, { method: request.method, ...(request.body === undefined ? {} : { body: request.body }) });
    answers.push(`${response.status} ${await response.text()}`);
  }
  return answers;
}
