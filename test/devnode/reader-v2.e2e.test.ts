/**
 * Readers on Rollups v2 (devnode/reader.ts over devnode/v2/node-server.ts): the same `GET /reader`; every
 * inspect route a v2 node serves (the specification's GET /inspect/<query> and POST /inspect, and the
 * node's POST /inspect/<application>) refused with 503 while the reader must serve no reads; a snapshot
 * of a v2 reader under input load starts another that waits for a claim after the snapshot and then
 * answers all three routes byte for byte as the first, on a dapp database with the same digest; a v2
 * snapshot given to a v1 validator stops its start; and a lying claim (the Authority's owner claiming an
 * epoch with a root of its own) stops every read with READER_MISMATCH.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWalletClient, http, keccak256, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexToUtf8 } from "../../common/hex.ts";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import type { ValidatorStatus } from "../../devnode/validator.ts";
import { inputsOnChain, SLOW_DAPP_FACTOR, startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";
import { burst, dappDigest, processedBy, rawAnswers, readerStatus, startToRefuse, takeSnapshot } from "./reader-support.ts";

let claimer: TestStack;
let reader: TestStack;
const scratch: string[] = [];
const validatorEnv = (more: Record<string, string> = {}): Record<string, string> => ({ DEVNODE_ROLE: "validator", VALIDATOR_INTERVAL_MS: "200", READER_STALE_MS: "1500", ...more });
const HEALTH = '{"type":"health","params":{}}';

function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

async function caughtUp(stack: TestStack): Promise<number> {
  // Every input on chain, processed by the claimer and by this reader: a target that no burst still moves.
  const target = await inputsOnChain(claimer);
  const wait = 60_000 * SLOW_DAPP_FACTOR;
  await until(() => processedBy(claimer), (n) => n === target, `the claimer at ${target} inputs`, wait);
  await until(() => readerStatus(stack), (s) => s.processedInputCount === target, `${stack.urls.node} at ${target} inputs`, wait);
  return target;
}

/** The three inspect routes of a v2 node, each with the same query. */
function readsOf(node: string, query: string): Promise<Response>[] {
  return [
    fetch(`${node}/inspect/${encodeURIComponent(query)}`),
    fetch(`${node}/inspect`, { method: "POST", body: query }),
    fetch(`${node}/inspect/${V2_DEFAULTS.applicationName}`, { method: "POST", body: query }),
  ];
}

async function expectRefused(node: string, body: string): Promise<void> {
  for (const answer of await Promise.all(readsOf(node, HEALTH))) expect([answer.status, await answer.text()]).toEqual([503, body]);
}

beforeAll(async () => {
  claimer = await startStack({ rollups: "v2", env: { EPOCH_INTERVAL_MS: "0" } });
  reader = await startStack({ rollups: "v2", externalRpcUrl: claimer.urls.rpc, env: validatorEnv() });
}, 180_000);

afterAll(async () => {
  await reader?.stop();
  await claimer?.stop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe("a v2 reader", () => {
  it("GET /reader once caught up: serving, the claimer's counts, current", async () => {
    let last = { blockNumber: 0 };
    for (const input of [schemaInput("v2r-a.example"), { type: "health_probe", params: {} }]) last = await claimer.send(input);
    const processed = await caughtUp(reader);
    expect(await readerStatus(reader)).toEqual({
      serving: true,
      reason: null,
      processedInputCount: processed,
      lastInputIndex: processed - 1,
      lastInputBlock: last.blockNumber,
      chainBlock: expect.any(Number),
      chainReadAt: expect.any(Number),
      stale: false,
      snapshot: null,
    });
    for (const answer of await Promise.all(readsOf(reader.urls.node, HEALTH))) expect(answer.status).toBe(200);
    expect((await fetch(`${claimer.urls.node}/reader`)).status).toBe(404);
  });

  it("turns stale while its chain does not answer, and back", async () => {
    await claimer.kill("chain", "SIGSTOP");
    try {
      await until(() => readerStatus(reader), (s) => s.stale && s.serving, "a stale reader", 6_500);
    } finally {
      await claimer.kill("chain", "SIGCONT");
    }
    await until(() => readerStatus(reader), (s) => !s.stale, "a current reader again");
  });
});

describe("a v2 snapshot", () => {
  let folder = "";
  let inputCount = 0;

  it("taken under input load starts a reader that waits for a claim after it, then answers every route as the first", { timeout: 150_000 }, async () => {
    const base = await processedBy(claimer);
    const load = Array.from({ length: 400 }, (_, i) => (i % 4 === 3 ? { type: "health_probe", params: {} } : schemaInput(`v2-load-${i}.example`)));
    // 50 inputs a block: the claims that follow are a handful, not one per input.
    const sending = burst(claimer, load, DEFAULTS.adminAddress, 50);
    await until(() => readerStatus(reader), (s) => s.processedInputCount > base + 20, "the reader in the middle of the load");
    const taken = await takeSnapshot(reader, join(scratchDir("reader-v2-snap-"), "snap"));
    await sending;
    expect(taken.status).toBe(200);
    ({ folder, inputCount } = taken.body);
    console.log(`[reader v2] snapshot at input ${inputCount} of ${base + load.length}`);
    expect(inputCount).toBeGreaterThan(base + 20);
    expect(inputCount).toBeLessThan(base + load.length);
    expect(taken.body.snapshot).toMatchObject({ version: 1, rollups: "v2", chainId: 31337, inputBox: V2_DEFAULTS.inputBoxAddress, application: V2_DEFAULTS.applicationAddress, inputCount });
    expect(readdirSync(folder).sort()).toEqual(["dapp.sqlite", "devnode.sqlite", "snapshot.json"]);

    const second = await startStack({ rollups: "v2", externalRpcUrl: claimer.urls.rpc, dataDir: scratchDir("reader-v2-from-"), env: validatorEnv({ DEVNODE_SNAPSHOT: folder }) });
    try {
      const total = await caughtUp(second);
      const reason = `started from a snapshot at input ${inputCount}: it serves no reads until a claim on chain over input ${inputCount} or later matches its own`;
      expect(await readerStatus(second)).toMatchObject({ serving: false, reason, snapshot: { inputCount, verified: false } });
      await expectRefused(second.urls.node, JSON.stringify({ error: { code: "READER_NOT_VERIFIED", message: reason } }));

      expect((await fetch(`${claimer.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
      expect(await until(() => readerStatus(second), (s) => s.serving, "the snapshot verified", 60_000)).toMatchObject({ snapshot: { inputCount, verified: true } });
      await until(() => readerStatus(reader), (s) => s.processedInputCount === total, "the first reader caught up");
      const schemas = JSON.parse(hexToUtf8((await claimer.inspect({ type: "all_provider_schemas", params: { limit: 2 } })).reports[0]?.payload as Hex)) as { schema_id: string }[];
      const texts = [HEALTH, '{"type":"all_provider_schemas","params":{"limit":40,"offset":9}}', JSON.stringify({ type: "provider_schema", params: { schema_id: schemas[1]?.schema_id } }), '{"type":"tls_attestors","params":{}}', '{"type":"unknown","params":{}}'];
      const asked = texts.flatMap((text) => [
        { method: "GET" as const, path: `/inspect/${encodeURIComponent(text)}` },
        { method: "POST" as const, path: "/inspect", body: text },
        { method: "POST" as const, path: `/inspect/${V2_DEFAULTS.applicationName}`, body: text },
      ]);
      const first = await rawAnswers(reader.urls.node, asked);
      expect(first.every((answer) => answer.startsWith("200 "))).toBe(true);
      expect(await rawAnswers(second.urls.node, asked)).toEqual(first);
      expect(dappDigest(second)).toBe(dappDigest(reader));
    } finally {
      await second.stop();
    }
  });

  it("given to a v1 validator, stops its start with exit 2", async () => {
    const refused = await startToRefuse(claimer.urls.rpc, { DATA_DIR: scratchDir("reader-v2-refused-"), DEVNODE_SNAPSHOT: folder, ROLLUPS: "v1" });
    expect([refused.code, refused.output.trim()]).toEqual([2, `[devnode] DEVNODE_SNAPSHOT ${folder}: a snapshot of a Rollups v2 node, and this one is v1 (ROLLUPS)`]);
  });
});

describe("a v2 reader that finds a claim that does not match", () => {
  it("answers every inspect route 503 READER_MISMATCH naming the claim, and /reader says so", async () => {
    const before = ((await (await fetch(`${reader.urls.node}/validator`)).json()) as ValidatorStatus).checked;
    const sent = await claimer.send(schemaInput("v2r-lie.example"));
    await caughtUp(reader);
    const block = (await claimer.client.publicClient.getTransactionReceipt({ hash: sent.txHash })).blockNumber;
    const lie = keccak256(toHex("not the reader's outputs root"));
    // Before the claimer's own devnode claims it: the Authority takes the first claim for an epoch only.
    const wallet = createWalletClient({ account: privateKeyToAccount(hardhatPrivateKey(DEFAULTS.claimerAccountIndex)), chain: hardhat, transport: http(claimer.urls.rpc) });
    const hash = await wallet.writeContract({ address: V2_DEFAULTS.authorityAddress, abi: v2Abi("Authority"), functionName: "submitClaim", args: [V2_DEFAULTS.applicationAddress, block, lie] });
    expect((await claimer.client.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");

    const refused = await until(() => readerStatus(reader), (s) => !s.serving, "the reader refusing reads");
    const computed = ((await (await fetch(`${reader.urls.node}/validator`)).json()) as ValidatorStatus).mismatches[0]?.computedHash;
    const message = `a claim on chain does not match this reader's state: claim ${before} (epoch ending at block ${block}, inputs ${sent.index}..${sent.index}) has outputs root ${lie} on chain; this node computes ${computed}; it serves no reads until its operator acts`;
    expect(refused.reason).toBe(message);
    await expectRefused(reader.urls.node, JSON.stringify({ error: { code: "READER_MISMATCH", message } }));
    // JSON-RPC stays as it is.
    const rpc = await fetch(`${reader.urls.node}/rpc`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "cartesi_getChainId", params: {} }) });
    expect(rpc.status).toBe(200);
  });
});
