/**
 * A validator's snapshots when they cannot be taken or installed (devnode/reader.ts, snapshot.ts,
 * snapshot-install.ts; docs/operations.md, Snapshots): `POST /snapshot` against the real servers, model,
 * record, Reader and SnapshotTaker, the dapp played over HTTP (the reader's chain reads fixed): each refusal
 * with its code, nothing written, advances flowing again. Then a snapshot that does not fit, through
 * `installSnapshot` and through the devnode's process on a real chain (exit 2), DATA_DIR left as it was.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Address } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase } from "../../dapp/db/open.ts";
import { ConfigError, DEFAULTS } from "../../devnode/config.ts";
import type { RollupRequest } from "../../devnode/model.ts";
import { Reader } from "../../devnode/reader.ts";
import { SnapshotTaker, type SnapshotManifest } from "../../devnode/snapshot.ts";
import { installSnapshot } from "../../devnode/snapshot-install.ts";
import { DevnodeStore, recordOwner } from "../../devnode/store.ts";
import { startChain, type TestChain } from "../support/chain.ts";
import { sha256Of, startToRefuse } from "./reader-support.ts";
import { startServers, type Harness } from "./rollup-server-support.ts";

const IDENTITY = { rollups: "v1" as const, chainId: DEFAULTS.chainId, inputBox: DEFAULTS.inputBoxAddress, application: DEFAULTS.dappAddress };
const BAD_BODY = 'expected an empty body or JSON {"path": "<folder>"}';
/** The SnapshotTaker's wait for the dapp to finish its input (devnode/snapshot.ts, docs/operations.md). */
const PAUSE_TIMEOUT_MS = 30_000;

const scratch: string[] = [];
function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

interface Validator extends Harness {
  dir: string;
  dappDbPath: string;
  logs: string[];
}

/** A validator's servers over an on-disk record in `dir`; its dapp's database at `dir`/dapp.sqlite, a real migrated one unless `dappDb: false`. */
async function startValidator(options: { dappDb?: boolean } = {}): Promise<Validator> {
  const dir = scratchDir("snapshot-errors-");
  const dappDbPath = join(dir, "dapp.sqlite");
  if (options.dappDb !== false) openDatabase({ path: dappDbPath }).$client.close();
  const store = new DevnodeStore(join(dir, "devnode.sqlite"));
  store.setMeta("owner", recordOwner("v1", DEFAULTS.inputBoxAddress, DEFAULTS.dappAddress));
  const logs: string[] = [];
  const chain = { reads: () => ({ chainBlock: null, chainReadAt: null }) };
  const validator = { verdicts: () => ({ mismatch: null, matchedThroughInput: -1 }) };
  const servers = await startServers(store, (model) => {
    const snapshots = new SnapshotTaker({ model, record: store, dappDbPath, folder: join(dir, "snapshots"), identity: IDENTITY, log: (line) => logs.push(line) });
    return new Reader({ model, record: store, chain, validator, staleMs: 60_000, snapshots });
  });
  return { ...servers, dir, dappDbPath, logs };
}

async function askFinish(v: Validator): Promise<Response> {
  return fetch(`${v.rollupUrl}/finish`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "accept" }) });
}

/** The dapp's `/finish` (accepting the input it holds, if any) until it is handed the next request. */
async function next(v: Validator): Promise<RollupRequest> {
  for (;;) {
    const response = await askFinish(v);
    if (response.status === 200) return (await response.json()) as RollupRequest;
    expect(response.status).toBe(202);
    await response.text();
  }
}

/** The dapp accepts the input it holds, with nothing queued after it (the long poll ends empty: 202). */
async function finishLast(v: Validator): Promise<void> {
  const response = await askFinish(v);
  await response.text();
  expect(response.status).toBe(202);
}

const indexOf = (request: RollupRequest): number => {
  if (request.request_type !== "advance_state") throw new Error(`expected an advance, got ${request.request_type}`);
  return request.data.metadata.input_index;
};

/** `POST /snapshot`'s answer: the snapshot taken, or why not. */
interface SnapshotAnswer {
  folder?: string;
  inputCount?: number;
  snapshot?: SnapshotManifest;
  error?: { code: string; message: string };
}

async function snapshot(v: Validator, body?: string): Promise<{ status: number; body: SnapshotAnswer }> {
  const response = await fetch(`${v.nodeUrl}/snapshot`, { method: "POST", ...(body === undefined ? {} : { body }) });
  return { status: response.status, body: (await response.json()) as SnapshotAnswer };
}

/** Every file under `dir`, relative, sorted: what a refusal must leave as it was. */
function filesUnder(dir: string): string[] {
  return existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : [];
}

/** Polls on setImmediate, which the fake timers below leave alone. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`waited 10 s for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** After a refusal: `/reader` answers, the next input goes to the dapp, and a snapshot into `folder` is taken at the new count. */
async function stillServing(v: Validator, folder: string): Promise<void> {
  const status = await fetch(`${v.nodeUrl}/reader`);
  expect(status.status).toBe(200);
  const processed = v.model.processedInputCount;
  v.addInput({ type: "after", params: {} });
  expect(indexOf(await next(v))).toBe(processed);
  await finishLast(v);
  const taken = await snapshot(v, JSON.stringify({ path: folder }));
  expect([taken.status, taken.body.folder, taken.body.inputCount]).toEqual([200, folder, processed + 1]);
  expect(readdirSync(folder).sort()).toEqual(["dapp.sqlite", "devnode.sqlite", "snapshot.json"]);
}

describe("POST /snapshot refused", () => {
  let v: Validator;
  afterEach(async () => {
    vi.useRealTimers();
    await v?.close();
  });

  it("400/413 BAD_REQUEST for a body that is no {path}, taking nothing and holding no input back", async () => {
    v = await startValidator();
    const bodies: [string, string, number, string][] = [
      ["not JSON", "{", 400, BAD_BODY],
      ["another member", JSON.stringify({ folder: join(v.dir, "x") }), 400, BAD_BODY],
      ["a path and more", JSON.stringify({ path: join(v.dir, "x"), force: true }), 400, BAD_BODY],
      ["an empty path", JSON.stringify({ path: "" }), 400, BAD_BODY],
      ["a path that is no string", JSON.stringify({ path: 7 }), 400, BAD_BODY],
      ["an array", "[]", 400, BAD_BODY],
      ["null", "null", 400, BAD_BODY],
      ["a body past 64 KiB", JSON.stringify({ path: "a".repeat(64 * 1024) }), 413, "request body larger than 65536 bytes"],
    ];
    const before = filesUnder(v.dir);
    for (const [what, body, status, message] of bodies) {
      const answer = await snapshot(v, body);
      expect([what, answer.status, answer.body]).toEqual([what, status, { error: { code: "BAD_REQUEST", message } }]);
    }
    // No folder made, neither the one named nor the default DATA_DIR/snapshots.
    expect(filesUnder(v.dir)).toEqual(before);
    expect(v.logs).toEqual([]);
    await stillServing(v, join(v.dir, "good"));
  });

  it("409 SNAPSHOT_EXISTS for a folder that is not empty, touching nothing in it", async () => {
    v = await startValidator();
    const folder = join(v.dir, "taken");
    mkdirSync(folder);
    writeFileSync(join(folder, "notes.txt"), "mine");
    const answer = await snapshot(v, JSON.stringify({ path: folder }));
    expect([answer.status, answer.body]).toEqual([409, { error: { code: "SNAPSHOT_EXISTS", message: `${folder} is not empty: name a new folder` } }]);
    expect(readdirSync(folder)).toEqual(["notes.txt"]);
    expect(readFileSync(join(folder, "notes.txt"), "utf8")).toBe("mine");
    await stillServing(v, join(v.dir, "good"));
  });

  it("409 SNAPSHOT_BUSY while another waits for the dapp's input; the first then completes", async () => {
    v = await startValidator();
    v.addInput({ type: "first", params: {} });
    expect(indexOf(await next(v))).toBe(0);
    // Input 0 is at the dapp: the first snapshot waits for it.
    const first = join(v.dir, "first");
    const waiting = snapshot(v, JSON.stringify({ path: first }));
    await waitFor(() => existsSync(first), "the first snapshot to start");
    const second = join(v.dir, "second");
    const busy = await snapshot(v, JSON.stringify({ path: second }));
    expect([busy.status, busy.body]).toEqual([409, { error: { code: "SNAPSHOT_BUSY", message: "a snapshot is being taken: ask again once it is done" } }]);
    expect(existsSync(second)).toBe(false);
    expect(readdirSync(first)).toEqual([]);

    // The dapp finishes input 0: the first snapshot is taken at input 1, and no other input was handed out meanwhile.
    v.addInput({ type: "held", params: {} });
    const handedOut = next(v);
    const taken = await waiting;
    expect([taken.status, taken.body.folder, taken.body.inputCount]).toEqual([200, first, 1]);
    expect(indexOf(await handedOut)).toBe(1);
    await finishLast(v);
    await stillServing(v, second);
  });

  it("503 SNAPSHOT_TIMEOUT when the dapp does not finish its input within 30 s: its folder left empty, advances let go", async () => {
    v = await startValidator();
    v.addInput({ type: "stuck", params: {} });
    expect(indexOf(await next(v))).toBe(0);
    const folder = join(v.dir, "late");
    // Only the clock of setTimeout is faked: 30 s pass at once, the servers' sockets run as they do.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const waiting = snapshot(v, JSON.stringify({ path: folder }));
    await waitFor(() => existsSync(folder), "the snapshot to start waiting");
    await vi.advanceTimersByTimeAsync(PAUSE_TIMEOUT_MS - 1);
    // Not a millisecond early.
    let settled = false;
    void waiting.then(() => (settled = true));
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const late = await waiting;
    vi.useRealTimers();
    expect([late.status, late.body]).toEqual([503, { error: { code: "SNAPSHOT_TIMEOUT", message: `the dapp did not finish its input within ${PAUSE_TIMEOUT_MS} ms` } }]);
    expect(readdirSync(folder)).toEqual([]);
    expect(v.logs).toEqual([]);
    // The inputs were let go: the dapp finishes input 0 and is handed input 1 at once.
    v.addInput({ type: "next", params: {} });
    expect(indexOf(await next(v))).toBe(1);
    await finishLast(v);
    expect(v.model.processedInputCount).toBe(2);
    // The same folder serves the next try.
    const again = await snapshot(v, JSON.stringify({ path: folder }));
    expect([again.status, again.body.inputCount]).toEqual([200, 2]);
  });

  it("500 SNAPSHOT_FAILED with no dapp database at DAPP_DB_PATH: nothing written, advances not held", async () => {
    v = await startValidator({ dappDb: false });
    v.addInput({ type: "one", params: {} });
    await next(v);
    await finishLast(v);
    const folder = join(v.dir, "no-dapp");
    const answer = await snapshot(v, JSON.stringify({ path: folder }));
    expect([answer.status, answer.body]).toEqual([500, { error: { code: "SNAPSHOT_FAILED", message: `no dapp database at ${v.dappDbPath} (DAPP_DB_PATH)` } }]);
    expect(readdirSync(folder)).toEqual([]);
    openDatabase({ path: v.dappDbPath }).$client.close();
    await stillServing(v, folder);
  });

  it("500 SNAPSHOT_FAILED when the dapp's database cannot be copied: the record's copy removed too, advances let go", async () => {
    v = await startValidator({ dappDb: false });
    writeFileSync(v.dappDbPath, "this is no SQLite database, but long enough to be read as a header of one: ".repeat(8));
    v.addInput({ type: "one", params: {} });
    await next(v);
    await finishLast(v);
    const folder = join(v.dir, "broken");
    const answer = await snapshot(v, JSON.stringify({ path: folder }));
    expect([answer.status, answer.body]).toEqual([500, { error: { code: "SNAPSHOT_FAILED", message: "the snapshot failed: file is not a database" } }]);
    expect(readdirSync(folder)).toEqual([]);
    unlinkSync(v.dappDbPath);
    openDatabase({ path: v.dappDbPath }).$client.close();
    await stillServing(v, folder);
  });
});

describe("a snapshot that does not fit, refused at start", () => {
  let source: string;
  beforeAll(async () => {
    const v = await startValidator();
    try {
      for (const name of ["a", "b", "c"]) v.addInput({ type: name, params: {} });
      for (let i = 0; i < 3; i++) await next(v);
      await finishLast(v);
      source = join(v.dir, "snapshot");
      expect((await snapshot(v, JSON.stringify({ path: source }))).status).toBe(200);
    } finally {
      await v.close();
    }
  });

  /** A copy of the snapshot with `spoil` done to it, its manifest rewritten from what `spoil` left in `m`. */
  function spoiled(spoil: (m: SnapshotManifest, copy: string) => void): string {
    const copy = join(scratchDir("snapshot-spoiled-"), "snapshot");
    cpSync(source, copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, "snapshot.json"), "utf8")) as SnapshotManifest;
    spoil(manifest, copy);
    if (existsSync(join(copy, "snapshot.json"))) writeFileSync(join(copy, "snapshot.json"), JSON.stringify(manifest));
    return copy;
  }

  /** A copy whose snapshot.json is not JSON (spoiled() would write it back as JSON). */
  function notJsonCopy(): string {
    const copy = spoiled(() => {});
    writeFileSync(join(copy, "snapshot.json"), "{ not json");
    return copy;
  }

  const settingsFor = (folder: string, dataDir: string, more: { rollups?: "v1" | "v2"; inputBoxAddress?: Address; dappAddress?: Address } = {}) => ({
    snapshotPath: folder,
    rollups: more.rollups ?? "v1",
    inputBoxAddress: more.inputBoxAddress ?? DEFAULTS.inputBoxAddress,
    dappAddress: more.dappAddress ?? DEFAULTS.dappAddress,
    dataDir,
    databasePath: join(dataDir, "devnode.sqlite"),
    dappDbPath: join(dataDir, "dapp.sqlite"),
  });

  it("installSnapshot: each problem as its one line, DATA_DIR left as it was", async () => {
    const other = "0x000000000000000000000000000000000000dEaD" as Address;
    const notJson = (() => {
      try {
        JSON.parse("{ not json");
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    })();
    const cases: [string, string, { rollups?: "v1" | "v2"; inputBoxAddress?: Address; dappAddress?: Address; chainId?: number; used?: "record" | "dapp" }, string | RegExp][] = [
      ["no snapshot.json", spoiled((_m, copy) => unlinkSync(join(copy, "snapshot.json"))), {}, "no snapshot.json there (take one with POST /snapshot on a validator)"],
      ["a snapshot.json that is not JSON", notJsonCopy(), {}, `snapshot.json is not JSON (${notJson})`],
      ["a snapshot.json of another format version", spoiled((m) => ((m as { version: number }).version = 2)), {}, "snapshot.json is not a snapshot's: version: Invalid input: expected 1"],
      ["a snapshot.json without its sha256", spoiled((m) => delete (m as Partial<SnapshotManifest>).sha256), {}, "snapshot.json is not a snapshot's: sha256: Invalid input: expected object, received undefined"],
      ["of another application", spoiled((m) => (m.application = other)), {}, `a snapshot of application ${other}, and this validator follows ${DEFAULTS.dappAddress} (DAPP_ADDRESS)`],
      ["of another InputBox", spoiled((m) => (m.inputBox = other)), {}, `a snapshot of InputBox ${other}, and this validator follows ${DEFAULTS.inputBoxAddress} (INPUTBOX_ADDRESS)`],
      ["to a validator of another InputBox", source, { inputBoxAddress: other }, `a snapshot of InputBox ${DEFAULTS.inputBoxAddress}, and this validator follows ${other} (INPUTBOX_ADDRESS)`],
      ["of another chain", source, { chainId: 1 }, "a snapshot of chain 31337, and RPC_URL is chain 1"],
      ["of Rollups v1, to a v2 validator", source, { rollups: "v2" }, "a snapshot of a Rollups v1 node, and this one is v2 (ROLLUPS)"],
      ["a DATA_DIR that holds a record", source, { used: "record" }, "DATA_DIR {dataDir} already holds a record ({dataDir}/devnode.sqlite): a snapshot starts a validator on an empty DATA_DIR"],
      ["a dapp database where the dapp's would go", source, { used: "dapp" }, "a dapp database is already at {dataDir}/dapp.sqlite (DAPP_DB_PATH): a snapshot starts a validator on an empty DATA_DIR"],
      ["a missing dapp.sqlite", spoiled((_m, copy) => unlinkSync(join(copy, "dapp.sqlite"))), {}, "dapp.sqlite is missing"],
      [
        "a corrupted record (its sha256 no longer matches)",
        spoiled((_m, copy) => {
          const file = join(copy, "devnode.sqlite");
          const bytes = readFileSync(file);
          bytes[bytes.length - 100] = (bytes[bytes.length - 100] ?? 0) ^ 0xff;
          writeFileSync(file, bytes);
        }),
        {},
        /^devnode\.sqlite fails its sha256 \(snapshot\.json says [0-9a-f]{64}, the file is [0-9a-f]{64}\)$/,
      ],
      [
        "a corrupted record with a sha256 to match",
        spoiled((m, copy) => {
          const file = join(copy, "devnode.sqlite");
          writeFileSync(file, Buffer.alloc(8192, 0x5a));
          m.sha256["devnode.sqlite"] = sha256Of(file);
        }),
        {},
        "devnode.sqlite is not a readable SQLite database (file is not a database)",
      ],
      ["a record that is not at N", spoiled((m) => (m.inputCount += 1)), {}, "its record has processed 3 inputs, and snapshot.json says 4"],
      [
        "a record of another application's inputs",
        spoiled((m, copy) => {
          const file = join(copy, "devnode.sqlite");
          const db = new Database(file);
          db.prepare("UPDATE meta SET value = ? WHERE key = 'owner'").run(`${other.toLowerCase()}/${other.toLowerCase()}`);
          db.close();
          m.sha256["devnode.sqlite"] = sha256Of(file);
        }),
        {},
        `its record belongs to ${other.toLowerCase()}/${other.toLowerCase()}, not ${recordOwner("v1", DEFAULTS.inputBoxAddress, DEFAULTS.dappAddress)}`,
      ],
    ];
    for (const [what, folder, env, problem] of cases) {
      const dataDir = scratchDir("snapshot-install-");
      if (env.used === "record") new Database(join(dataDir, "devnode.sqlite")).close();
      if (env.used === "dapp") openDatabase({ path: join(dataDir, "dapp.sqlite") }).$client.close();
      const before = filesUnder(dataDir).map((f) => [f, sha256Of(join(dataDir, f))]);
      const lines: string[] = [];
      const refused = await installSnapshot(settingsFor(folder, dataDir, env), env.chainId ?? DEFAULTS.chainId, (line) => lines.push(line)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, what).toBeInstanceOf(ConfigError);
      const message = (refused as ConfigError).message;
      const prefix = `DEVNODE_SNAPSHOT ${folder}: `;
      expect([what, message.startsWith(prefix), message.includes("\n")]).toEqual([what, true, false]);
      if (typeof problem === "string") expect(message.slice(prefix.length)).toBe(problem.replaceAll("{dataDir}", dataDir));
      else expect(message.slice(prefix.length)).toMatch(problem);
      expect([what, filesUnder(dataDir).map((f) => [f, sha256Of(join(dataDir, f))]), lines]).toEqual([what, before, []]);
    }
  });

  describe("the devnode's process", () => {
    let chain: TestChain;
    beforeAll(async () => {
      chain = await startChain();
    }, 60_000);
    afterAll(async () => {
      await chain?.stop();
    });

    it("exits 2 with one line naming the problem, and leaves DATA_DIR as it was", { timeout: 60_000 }, async () => {
      const other = "0x000000000000000000000000000000000000dEaD";
      // [what, the snapshot's folder, a dapp database already in DATA_DIR, the problem]
      const cases: [string, string, boolean, string][] = [
        ["of another application", spoiled((m) => (m.application = other)), false, `a snapshot of application ${other}, and this validator follows ${DEFAULTS.dappAddress} (DAPP_ADDRESS)`],
        [
          "a corrupted one",
          spoiled((m, copy) => {
            const file = join(copy, "dapp.sqlite");
            writeFileSync(file, Buffer.alloc(8192, 0x5a));
            m.sha256["dapp.sqlite"] = sha256Of(file);
          }),
          false,
          "dapp.sqlite is not a readable SQLite database (file is not a database)",
        ],
        ["a used DATA_DIR (a dapp database in it)", source, true, "a dapp database is already at {dataDir}/dapp.sqlite (DAPP_DB_PATH): a snapshot starts a validator on an empty DATA_DIR"],
      ];
      for (const [what, folder, used, problem] of cases) {
        const dataDir = scratchDir("snapshot-refused-");
        if (used) openDatabase({ path: join(dataDir, "dapp.sqlite") }).$client.close();
        const before = filesUnder(dataDir).map((f) => [f, sha256Of(join(dataDir, f))]);
        const refused = await startToRefuse(chain.rpcUrl, { DATA_DIR: dataDir, DEVNODE_SNAPSHOT: folder });
        expect([what, refused.code, refused.output]).toEqual([what, 2, `[devnode] DEVNODE_SNAPSHOT ${folder}: ${problem.replaceAll("{dataDir}", dataDir)}\n`]);
        expect([what, filesUnder(dataDir).map((f) => [f, sha256Of(join(dataDir, f))])]).toEqual([what, before]);
      }
    });
  });
});
