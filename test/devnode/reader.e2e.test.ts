/**
 * Validators as read replicas of the rollup, "readers" (devnode/reader.ts, docs/operations.md, Readers),
 * on Rollups v1: a reader that caught up says so in `GET /reader` with the claimer's counts; one whose
 * chain stops answering turns stale and back; a snapshot taken under input load starts a new reader that
 * refuses reads until a claim after the snapshot matches, then answers every query byte for byte as the
 * first, on a dapp database with the same digest; snapshots that do not fit stop a start with exit 2; and
 * a claim that does not match stops every inspect with 503 READER_MISMATCH. It prints how long a reader
 * takes to catch up from genesis and from a snapshot (docs/operations.md quotes it).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createWalletClient, http, keccak256, toHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexToUtf8 } from "../../common/hex.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { AUTHORITY_ABI } from "../../devnode/v1/contracts.ts";
import { encodeClaim } from "../../devnode/v1/proofs.ts";
import type { ValidatorStatus } from "../../devnode/validator.ts";
import { seriesValue } from "../support/prometheus.ts";
import { inputsOnChain, processArgs, PROJECT_ROOT, SLOW_DAPP_FACTOR, startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";
import { burst, dappDigest, processedBy, rawAnswers, readerStatus, sha256Of, spoiledCopy, startToRefuse, takeSnapshot } from "./reader-support.ts";

const STALE_MS = 1_500;
let claimer: TestStack;
let reader: TestStack;
const scratch: string[] = [];

function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

const validatorEnv = (more: Record<string, string> = {}): Record<string, string> => ({ DEVNODE_ROLE: "validator", VALIDATOR_INTERVAL_MS: "200", READER_STALE_MS: String(STALE_MS), ...more });

async function caughtUp(stack: TestStack): Promise<number> {
  // Every input on chain, processed by the claimer and by this reader: a target that no burst still moves.
  const target = await inputsOnChain(claimer);
  const wait = 60_000 * SLOW_DAPP_FACTOR;
  await until(() => processedBy(claimer), (n) => n === target, `the claimer at ${target} inputs`, wait);
  await until(() => readerStatus(stack), (s) => s.processedInputCount === target, `${stack.urls.node} at ${target} inputs`, wait);
  return target;
}

async function closeEpoch(): Promise<void> {
  expect((await fetch(`${claimer.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
}

/** Inspects of several query types, GET and POST, for a byte-for-byte comparison of two readers. */
async function queries(): Promise<{ method: "GET" | "POST"; path: string; body?: string }[]> {
  const schemas = JSON.parse(hexToUtf8((await claimer.inspect({ type: "all_provider_schemas", params: { limit: 3 } })).reports[0]?.payload as Hex)) as { schema_id: string }[];
  const texts = [
    { type: "health", params: {} },
    { type: "all_provider_schemas", params: { limit: 50, offset: 7 } },
    { type: "provider_schema", params: { schema_id: schemas[1]?.schema_id, include_description: true } },
    { type: "tls_attestors", params: {} },
    { type: "encryption_key", params: {} },
    { type: "attestations_by_owner", params: { owner: DEFAULTS.adminAddress } },
    { type: "no_such_query", params: {} },
  ].map((q) => JSON.stringify(q));
  return [...texts.map((t) => ({ method: "GET" as const, path: `/inspect/${encodeURIComponent(t)}` })), ...texts.map((t) => ({ method: "POST" as const, path: "/inspect", body: t }))];
}

beforeAll(async () => {
  claimer = await startStack({ env: { EPOCH_INTERVAL_MS: "0" } });
  reader = await startStack({ externalRpcUrl: claimer.urls.rpc, env: validatorEnv() });
}, 180_000);

afterAll(async () => {
  await reader?.stop();
  await claimer?.stop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe("a reader that caught up", () => {
  it("GET /reader: serving, the claimer's counts, the chain read just now; a claimer has no /reader", async () => {
    let last = { blockNumber: 0 };
    for (const input of [schemaInput("r-a.example"), { type: "health_probe", params: {} }, schemaInput("r-b.example")]) last = await claimer.send(input);
    const processed = await caughtUp(reader);
    const status = await readerStatus(reader);
    expect(Object.keys(status)).toEqual(["serving", "reason", "processedInputCount", "lastInputIndex", "lastInputBlock", "chainBlock", "chainReadAt", "stale", "snapshot"]);
    expect(status).toEqual({
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
    expect(status.chainBlock).toBeGreaterThanOrEqual(last.blockNumber);
    expect(Date.now() - (status.chainReadAt ?? 0)).toBeLessThan(STALE_MS);
    const metrics = await (await fetch(`${reader.urls.node}/metrics`)).text();
    expect([seriesValue(metrics, "devnode_reader_serving"), seriesValue(metrics, "devnode_reader_stale")]).toEqual([1, 0]);
    expect((await fetch(`${claimer.urls.node}/reader`)).status).toBe(404);
    expect((await fetch(`${claimer.urls.node}/snapshot`, { method: "POST" })).status).toBe(404);
    expect(reader.logs("devnode")).toContain(`reader: GET ${reader.urls.node}/reader; snapshots: POST ${reader.urls.node}/snapshot`);
  });
});

describe("a reader whose chain stops answering", () => {
  it("turns stale within READER_STALE_MS, still answers inspects, and is current again once the chain is back", async () => {
    const envelope = await reader.inspect({ type: "health", params: {} });
    await claimer.kill("chain", "SIGSTOP");
    const stopped = Date.now();
    try {
      const stale = await until(() => readerStatus(reader), (s) => s.stale, "a stale reader", STALE_MS + 5_000);
      const after = Date.now() - stopped;
      console.log(`[reader] stale ${after} ms after its chain stopped (READER_STALE_MS=${STALE_MS})`);
      expect(after).toBeLessThan(STALE_MS + 1_500);
      expect(stale).toMatchObject({ serving: true, reason: null });
      expect(Date.now() - (stale.chainReadAt ?? 0)).toBeGreaterThan(STALE_MS);
      // Stale is for the api to weigh: the reader still answers what it holds.
      expect(await reader.inspect({ type: "health", params: {} })).toEqual(envelope);
      expect(seriesValue(await (await fetch(`${reader.urls.node}/metrics`)).text(), "devnode_reader_stale")).toBe(1);
    } finally {
      await claimer.kill("chain", "SIGCONT");
    }
    await until(() => readerStatus(reader), (s) => !s.stale, "a current reader again");
  });
});

describe("snapshots", () => {
  let snapshot: { folder: string; inputCount: number };
  let second: TestStack | undefined;
  afterAll(async () => {
    await second?.stop();
  });

  it("POST /snapshot under input load: a consistent copy at input N, and its snapshot.json", { timeout: 120_000 }, async () => {
    const base = await processedBy(claimer);
    const load = Array.from({ length: 1_500 }, (_, i) => (i % 5 === 4 ? { type: "health_probe", params: {} } : schemaInput(`load-${i}.example`)));
    const sending = burst(claimer, load, DEFAULTS.adminAddress);
    await until(() => readerStatus(reader), (s) => s.processedInputCount > base + 100, "the reader in the middle of the load");
    const folder = join(scratchDir("reader-snap-"), "first");
    const taken = await takeSnapshot(reader, folder);
    await sending;
    expect(taken.status).toBe(200);
    const { inputCount, snapshot: manifest } = taken.body;
    console.log(`[reader] snapshot at input ${inputCount} of ${base + load.length}, taken under load`);
    expect(inputCount).toBeGreaterThan(base + 100);
    expect(inputCount).toBeLessThan(base + load.length);
    expect(taken.body.folder).toBe(folder);
    expect(readdirSync(folder).sort()).toEqual(["dapp.sqlite", "devnode.sqlite", "snapshot.json"]);
    expect(JSON.parse(readFileSync(join(folder, "snapshot.json"), "utf8"))).toEqual(manifest);
    expect(manifest).toEqual({
      version: 1,
      rollups: "v1",
      chainId: 31337,
      inputBox: reader.addresses.inputBox,
      application: reader.addresses.dapp,
      inputCount,
      lastInputBlock: expect.any(Number),
      chainBlock: expect.any(Number),
      createdAt: expect.any(Number),
      sha256: { "devnode.sqlite": sha256Of(join(folder, "devnode.sqlite")), "dapp.sqlite": sha256Of(join(folder, "dapp.sqlite")) },
    });
    expect(manifest.chainBlock).toBeGreaterThanOrEqual(manifest.lastInputBlock ?? 0);
    // Between two inputs: the dapp's database holds exactly the inputs the record says were processed.
    const record = new Database(join(folder, "devnode.sqlite"), { readonly: true });
    const dapp = new Database(join(folder, "dapp.sqlite"), { readonly: true });
    try {
      const lastAccepted = record.prepare("SELECT MAX(input_index) AS i FROM inputs WHERE status = 'ACCEPTED'").get() as { i: number };
      expect(dapp.prepare("SELECT last_input_index AS i FROM meta").get()).toEqual({ i: lastAccepted.i });
      expect(record.prepare("SELECT MAX(input_index) AS i FROM inputs WHERE status <> 'UNPROCESSED'").get()).toEqual({ i: inputCount - 1 });
    } finally {
      record.close();
      dapp.close();
    }
    snapshot = { folder, inputCount };
  });

  it("a reader started from it refuses reads until a claim after N matches, then answers as the first, on the same dapp state", { timeout: 120_000 }, async () => {
    const dataDir = scratchDir("reader-from-snapshot-");
    second = await startStack({ externalRpcUrl: claimer.urls.rpc, dataDir, env: validatorEnv({ DEVNODE_SNAPSHOT: snapshot.folder }) });
    expect(second.logs("devnode")).toContain(`installed the snapshot ${snapshot.folder}: ${snapshot.inputCount} input(s) processed`);
    expect(second.logs("devnode")).not.toMatch(/fresh chain|placed/);
    const total = await caughtUp(second);
    const waiting = await readerStatus(second);
    const notVerified = `started from a snapshot at input ${snapshot.inputCount}: it serves no reads until a claim on chain over input ${snapshot.inputCount} or later matches its own`;
    expect(waiting).toMatchObject({ serving: false, reason: notVerified, processedInputCount: total, stale: false, snapshot: { inputCount: snapshot.inputCount, verified: false } });
    for (const request of [fetch(`${second.urls.node}/inspect/${encodeURIComponent('{"type":"health","params":{}}')}`), fetch(`${second.urls.node}/inspect`, { method: "POST", body: '{"type":"health","params":{}}' })]) {
      const answer = await request;
      expect(answer.status).toBe(503);
      expect(await answer.text()).toBe(JSON.stringify({ error: { code: "READER_NOT_VERIFIED", message: notVerified } }));
    }
    // GraphQL is not a read the api spreads: it stays as it is.
    expect(await second.graphql<{ inputs: { totalCount: number } }>("{ inputs { totalCount } }")).toEqual({ inputs: { totalCount: total } });

    await closeEpoch();
    const verified = await until(() => readerStatus(second as TestStack), (s) => s.serving, "the snapshot verified by a claim");
    expect(verified).toMatchObject({ reason: null, snapshot: { inputCount: snapshot.inputCount, verified: true } });
    const verdicts = (await (await fetch(`${second.urls.node}/validator`)).json()) as ValidatorStatus;
    expect(verdicts.latest).toMatchObject({ matches: true, lastInput: total - 1 });
    expect(verdicts.latest?.firstInput).toBeLessThanOrEqual(snapshot.inputCount);

    await caughtUp(reader);
    const asked = await queries();
    const first = await rawAnswers(reader.urls.node, asked);
    expect(first.every((answer) => answer.startsWith("200 "))).toBe(true);
    expect(await rawAnswers(second.urls.node, asked)).toEqual(first);
    expect(dappDigest(second)).toBe(dappDigest(reader));
    // Restarted with the same DEVNODE_SNAPSHOT, it goes on from its own record: the snapshot is in it already.
    await second.restart("devnode");
    expect(await readerStatus(second)).toMatchObject({ serving: true, processedInputCount: total, snapshot: { inputCount: snapshot.inputCount, verified: true } });
    await second.stop();
    second = undefined;
  });

  it("catching up: from genesis, and from a snapshot of the same chain", { timeout: 180_000 }, async () => {
    await caughtUp(reader);
    const taken = await takeSnapshot(reader);
    expect(taken.status).toBe(200);
    expect(taken.body.folder.startsWith(join(reader.dataDir, "snapshots", "snapshot-"))).toBe(true);
    const total = taken.body.inputCount;
    const timed = async (env: Record<string, string>, dataDir?: string): Promise<{ ms: number; snapshot: { inputCount: number } | null; log: string }> => {
      const started = Date.now();
      const fresh = await startStack({ externalRpcUrl: claimer.urls.rpc, env: validatorEnv(env), ...(dataDir === undefined ? {} : { dataDir }) });
      try {
        const status = await until(() => readerStatus(fresh), (s) => s.processedInputCount === total, "caught up", 120_000 * SLOW_DAPP_FACTOR);
        return { ms: Date.now() - started, snapshot: status.snapshot, log: fresh.logs("dapp") };
      } finally {
        await fresh.stop();
      }
    };
    const fromGenesis = await timed({});
    const fromSnapshot = await timed({ DEVNODE_SNAPSHOT: taken.body.folder }, scratchDir("reader-timed-"));
    // For docs/operations.md: the times are printed, never asserted (this machine's speed swings).
    console.log(`[reader] catch-up of ${total} inputs, from starting the devnode and the dapp: from genesis ${fromGenesis.ms} ms, from a snapshot ${fromSnapshot.ms} ms`);
    // What makes the difference: the one replayed every input, the other none (it began at N).
    expect(fromGenesis.snapshot).toBeNull();
    // (Input 0's line, not the last's: the dapp's log may trail the devnode's count by a line.)
    expect(fromGenesis.log).toMatch(/\[dapp\] input 0 [a-z_]+: accept/);
    expect(fromSnapshot.snapshot).toMatchObject({ inputCount: total });
    expect(fromSnapshot.log).not.toMatch(/input \d+ [a-z_]+: accept/);
    snapshot = { folder: taken.body.folder, inputCount: total };
  });

  it("refuses at start, exit 2 and one line naming the problem, a snapshot that does not fit", { timeout: 120_000 }, async () => {
    const cases: [string, string, Record<string, string>, RegExp][] = [
      ["of another application", spoiledCopy(snapshot.folder, (m) => (m.application = "0x000000000000000000000000000000000000dEaD")), {}, /a snapshot of application 0x000000000000000000000000000000000000dEaD, and this validator follows 0x[0-9a-fA-F]{40} \(DAPP_ADDRESS\)/],
      ["of Rollups v1, to a v2 validator", snapshot.folder, { ROLLUPS: "v2" }, /a snapshot of a Rollups v1 node, and this one is v2 \(ROLLUPS\)/],
      ["of another chain", spoiledCopy(snapshot.folder, (m) => (m.chainId = 1)), {}, /a snapshot of chain 1, and RPC_URL is chain 31337/],
      [
        "whose dapp database was changed",
        spoiledCopy(snapshot.folder, (_m, copy) => {
          const file = join(copy, "dapp.sqlite");
          const bytes = readFileSync(file);
          bytes[bytes.length - 100] = (bytes[bytes.length - 100] ?? 0) ^ 0xff;
          writeFileSync(file, bytes);
        }),
        {},
        /dapp\.sqlite fails its sha256 \(snapshot\.json says [0-9a-f]{64}, the file is [0-9a-f]{64}\)/,
      ],
      [
        "whose dapp database is corrupt (with a sha256 to match)",
        spoiledCopy(snapshot.folder, (m, copy) => {
          const file = join(copy, "dapp.sqlite");
          const bytes = readFileSync(file);
          // The second page's header: its b-tree page type and cell count become nonsense.
          bytes.fill(0xee, 4096, 4096 + 12);
          writeFileSync(file, bytes);
          m.sha256["dapp.sqlite"] = sha256Of(file);
        }),
        {},
        /dapp\.sqlite (fails SQLite's integrity check|is not a readable SQLite database)/,
      ],
      ["whose record is not at N", spoiledCopy(snapshot.folder, (m) => (m.inputCount += 1)), {}, new RegExp(`its record has processed ${snapshot.inputCount} inputs, and snapshot.json says ${snapshot.inputCount + 1}`)],
    ];
    for (const [what, folder, env, problem] of cases) {
      const refused = await startToRefuse(claimer.urls.rpc, { DATA_DIR: scratchDir("reader-refused-"), DEVNODE_SNAPSHOT: folder, ...env });
      const lines = refused.output.trim().split("\n");
      expect([what, refused.code, lines.length]).toEqual([what, 2, 1]);
      expect(lines[0]).toMatch(new RegExp(`^\\[devnode\\] DEVNODE_SNAPSHOT ${folder}: `));
      expect(lines[0]).toMatch(problem);
    }
    // A DATA_DIR that holds a record already: the snapshot goes into an empty one, never over a record.
    const used = scratchDir("reader-used-");
    new Database(join(used, "devnode.sqlite")).close();
    const refused = await startToRefuse(claimer.urls.rpc, { DATA_DIR: used, DEVNODE_SNAPSHOT: snapshot.folder });
    expect(refused.code).toBe(2);
    expect(refused.output.trim()).toBe(`[devnode] DEVNODE_SNAPSHOT ${snapshot.folder}: DATA_DIR ${used} already holds a record (${join(used, "devnode.sqlite")}): a snapshot starts a validator on an empty DATA_DIR`);
    expect(existsSync(join(used, "dapp.sqlite"))).toBe(false);
  });
});

describe("npm run snapshot", () => {
  it("takes a reader's snapshot and says where it is and how to start from it; a claimer has none", { timeout: 60_000 }, () => {
    const folder = join(scratchDir("reader-cli-"), "snapshot");
    const script = (node: string, more: string[] = []) =>
      spawnSync(process.execPath, [...processArgs("scripts/snapshot.ts"), "--node", node, ...more], { cwd: PROJECT_ROOT, encoding: "utf8", timeout: 60_000 });
    const taken = script(reader.urls.node, ["--path", folder]);
    expect(taken.status, taken.stderr).toBe(0);
    expect(taken.stdout).toMatch(new RegExp(`^snapshot of ${reader.urls.node} at input \\d+: ${folder}\na new reader from it: DEVNODE_SNAPSHOT=${folder} DATA_DIR=<an empty folder> npm start -- --validator\n$`));
    expect(readdirSync(folder).sort()).toEqual(["dapp.sqlite", "devnode.sqlite", "snapshot.json"]);
    const again = script(reader.urls.node, ["--path", folder]);
    expect([again.status, again.stderr]).toEqual([1, expect.stringMatching(/took no snapshot: SNAPSHOT_EXISTS: /)]);
    const claimerAnswer = script(claimer.urls.node);
    expect([claimerAnswer.status, claimerAnswer.stderr.trim()]).toEqual([3, `the devnode at ${claimer.urls.node} is not a reader (a validator: npm start -- --readers N, or --validator)`]);
  });
});

describe("a reader that finds a claim that does not match", () => {
  it("answers every inspect 503 READER_MISMATCH naming the claim, says so in /reader, and stays so after a restart", { timeout: 120_000 }, async () => {
    const before = (await (await fetch(`${reader.urls.node}/validator`)).json()) as ValidatorStatus;
    const first = (before.latest?.lastInput ?? -1) + 1;
    const last = (await claimer.send(schemaInput("r-lie.example"))).index;
    await caughtUp(reader);
    const lie = keccak256(toHex("not what the reader's dapp computed"));
    const epochs = (await (await fetch(`${claimer.urls.node}/epochs`)).json()) as { dapp: Address; authority: Address };
    const wallet = createWalletClient({ account: privateKeyToAccount(hardhatPrivateKey(DEFAULTS.claimerAccountIndex)), chain: hardhat, transport: http(claimer.urls.rpc) });
    const hash = await wallet.writeContract({ address: epochs.authority, abi: AUTHORITY_ABI(), functionName: "submitClaim", args: [encodeClaim(epochs.dapp, lie, first, last)] });
    expect((await claimer.client.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");

    const refused = await until(() => readerStatus(reader), (s) => !s.serving, "the reader refusing reads");
    const verdict = ((await (await fetch(`${reader.urls.node}/validator`)).json()) as ValidatorStatus).mismatches[0];
    const message = `a claim on chain does not match this reader's state: claim ${before.checked} (inputs ${first}..${last}) has epoch hash ${lie} on chain; this node computes ${verdict?.computedHash}; it serves no reads until its operator acts`;
    expect(verdict?.computedHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(refused).toMatchObject({ serving: false, reason: message, processedInputCount: last + 1, snapshot: null });
    const body = JSON.stringify({ error: { code: "READER_MISMATCH", message } });
    for (const request of [fetch(`${reader.urls.node}/inspect/${encodeURIComponent('{"type":"health","params":{}}')}`), fetch(`${reader.urls.node}/inspect`, { method: "POST", body: '{"type":"health","params":{}}' })]) {
      const answer = await request;
      expect([answer.status, await answer.text()]).toEqual([503, body]);
    }
    expect(await reader.graphql<{ inputs: { totalCount: number } }>("{ inputs { totalCount } }")).toEqual({ inputs: { totalCount: last + 1 } });
    expect(seriesValue(await (await fetch(`${reader.urls.node}/metrics`)).text(), "devnode_reader_serving")).toBe(0);
    // Nor is such a state anything to start another reader from.
    const snapshot = await takeSnapshot(reader);
    expect([snapshot.status, snapshot.body.error]).toEqual([409, { code: "READER_MISMATCH", message }]);

    await reader.restart("devnode");
    expect(await readerStatus(reader)).toMatchObject({ serving: false, reason: message });
  });
});
