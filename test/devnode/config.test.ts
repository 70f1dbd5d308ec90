/** Configuration of the devnode and of `npm start`, the DATA_DIR wipe guard and the replay file format. */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { DEFAULTS, loadDevnodeConfig, loadLogSettings, V2_DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { createDevnodeLog } from "../../devnode/log.ts";
import { UsageError } from "../../scripts/lib/cli.ts";
import { wipeDataDir } from "../../scripts/lib/data-dir.ts";
import { parseReplayFile } from "../../scripts/lib/replay-file.ts";
import { loadStartOptions } from "../../scripts/lib/stack-config.ts";
import { pieceCommand, stackPieces } from "../../scripts/lib/stack-pieces.ts";
import { PROJECT_ROOT } from "../support/stack.ts";

describe("devnode configuration", () => {
  it("has working defaults with an empty environment", () => {
    const config = loadDevnodeConfig({}, []);
    expect(config).toMatchObject({
      rpcUrl: "http://127.0.0.1:8545",
      chainMode: "managed",
      nodePort: 10000,
      rollupHttpPort: 5004,
      rollupHttpHost: "127.0.0.1",
      inputBoxAddress: DEFAULTS.inputBoxAddress,
      dappAddress: DEFAULTS.dappAddress,
      reset: false,
    });
    expect(config.databasePath).toMatch(/\.data\/devnode\.sqlite$/);
  });

  it("ROLLUPS=v2 stands in for a v2 node: the v2 addresses, epochs of blocks, a v2 validator on an external chain", () => {
    const config = loadDevnodeConfig({ ROLLUPS: "v2" }, []);
    expect(config).toMatchObject({ rollups: "v2", inputBoxAddress: V2_DEFAULTS.inputBoxAddress, dappAddress: V2_DEFAULTS.applicationAddress, epochLength: 1, applicationName: "attestation" });
    expect(loadDevnodeConfig({}, []).rollups).toBe("v1");
    expect(loadDevnodeConfig({ ROLLUPS: "v2", DEVNODE_ROLE: "validator", RPC_URL: "http://10.0.0.1:8545" }, [])).toMatchObject({ rollups: "v2", role: "validator", chainMode: "external" });
  });

  it("treats a chain given by RPC_URL as external unless told otherwise, and takes --reset", () => {
    expect(loadDevnodeConfig({ RPC_URL: "http://10.0.0.1:8545" }, []).chainMode).toBe("external");
    expect(loadDevnodeConfig({ RPC_URL: "http://10.0.0.1:8545", DEVNODE_CHAIN: "managed" }, []).chainMode).toBe("managed");
    expect(loadDevnodeConfig({}, ["--reset"]).reset).toBe(true);
  });

  it.each([
    ["NODE_PORT", { NODE_PORT: "port" }],
    ["ROLLUP_HTTP_PORT", { ROLLUP_HTTP_PORT: "70000" }],
    ["DAPP_ADDRESS", { DAPP_ADDRESS: "0x1234" }],
    ["RPC_URL", { RPC_URL: "not a url" }],
    ["POLL_INTERVAL_MS", { POLL_INTERVAL_MS: "0" }],
    ["DEVNODE_CHAIN", { DEVNODE_CHAIN: "mine" }],
    ["LOG_FORMAT", { LOG_FORMAT: "xml" }],
    ["ROLLUPS", { ROLLUPS: "v3" }],
    ["EPOCH_LENGTH", { ROLLUPS: "v2", EPOCH_LENGTH: "0" }],
    ["APPLICATION_NAME", { ROLLUPS: "v2", APPLICATION_NAME: "A!" }],
  ])("names %s when its value is bad", (name, env) => {
    expect(() => loadDevnodeConfig(env, [])).toThrow(new RegExp(`^invalid devnode configuration: ${name}: `));
  });

  it("refuses unknown arguments", () => {
    expect(() => loadDevnodeConfig({}, ["--rest"])).toThrow(/unknown argument: --rest/);
  });

  it("subscribes to new blocks on the managed chain's WebSocket; on an external chain only when told", () => {
    expect(loadDevnodeConfig({}, []).wsRpcUrl).toBe("ws://127.0.0.1:8545");
    expect(loadDevnodeConfig({ WS_RPC_URL: "off" }, []).wsRpcUrl).toBeUndefined();
    expect(loadDevnodeConfig({ RPC_URL: "https://rpc.example" }, []).wsRpcUrl).toBeUndefined();
    expect(loadDevnodeConfig({ RPC_URL: "https://rpc.example", WS_RPC_URL: "wss://rpc.example/ws" }, []).wsRpcUrl).toBe("wss://rpc.example/ws");
    expect(() => loadDevnodeConfig({ WS_RPC_URL: "http://x" }, [])).toThrow(/^invalid devnode configuration: WS_RPC_URL: /);
  });

  it("a validator follows an external chain only", () => {
    expect(loadDevnodeConfig({ RPC_URL: "http://10.0.0.1:8545", DEVNODE_ROLE: "validator" }, [])).toMatchObject({ role: "validator", chainMode: "external", validatorIntervalMs: 1000 });
    expect(loadDevnodeConfig({}, []).role).toBe("claimer");
    expect(() => loadDevnodeConfig({ DEVNODE_ROLE: "validator" }, [])).toThrow(/^invalid devnode configuration: DEVNODE_ROLE: a validator follows an external chain/);
    expect(() => loadDevnodeConfig({ DEVNODE_ROLE: "watcher" }, [])).toThrow(/^invalid devnode configuration: DEVNODE_ROLE: /);
  });

  it("a Quorum: QUORUM_MEMBERS for a v2 devnode on its own chain; a member votes with a key of its own", () => {
    const members = "0x09DB0a93B389bEF724429898f539AEB7ac2Dd55f,0x08135Da0A343E492FA2d4282F2AE34c6c5CC1BbE";
    expect(loadDevnodeConfig({ ROLLUPS: "v2", QUORUM_MEMBERS: members }, []).quorumMembers).toEqual(members.split(","));
    expect(loadDevnodeConfig({ ROLLUPS: "v2" }, []).quorumMembers).toBeUndefined();
    expect(() => loadDevnodeConfig({ QUORUM_MEMBERS: members }, [])).toThrow(/^invalid devnode configuration: QUORUM_MEMBERS: a Quorum is deployed by a v2 devnode on the chain it manages \(v1 keeps its Authority/);
    expect(() => loadDevnodeConfig({ ROLLUPS: "v2", RPC_URL: "http://10.0.0.1:8545", QUORUM_MEMBERS: members }, [])).toThrow(/QUORUM_MEMBERS: a Quorum is deployed by a v2 devnode on the chain it manages/);
    expect(() => loadDevnodeConfig({ ROLLUPS: "v2", QUORUM_MEMBERS: "0x1234,0x09DB0a93B389bEF724429898f539AEB7ac2Dd55f" }, [])).toThrow(/^invalid devnode configuration: QUORUM_MEMBERS: expected comma-separated 0x addresses, got "0x1234"$/);
    expect(() => loadDevnodeConfig({ ROLLUPS: "v2", QUORUM_MEMBERS: `${members},0x09db0a93b389bef724429898f539aeb7ac2dd55f` }, [])).toThrow(/^invalid devnode configuration: QUORUM_MEMBERS: a member is named twice$/);
    const member = { ROLLUPS: "v2", RPC_URL: "http://10.0.0.1:8545", DEVNODE_ROLE: "member", CLAIMER_PRIVATE_KEY: `0x${"11".repeat(32)}` };
    expect(loadDevnodeConfig(member, [])).toMatchObject({ role: "member", chainMode: "external", claimerPrivateKey: `0x${"11".repeat(32)}` });
    expect(() => loadDevnodeConfig({ ...member, CLAIMER_PRIVATE_KEY: "" }, [])).toThrow(/^invalid devnode configuration: CLAIMER_PRIVATE_KEY: /);
    const { CLAIMER_PRIVATE_KEY: _key, ...keyless } = member;
    expect(() => loadDevnodeConfig(keyless, [])).toThrow(/^invalid devnode configuration: DEVNODE_ROLE: a member votes in a v2 Quorum \(ROLLUPS=v2\) with its own key \(set CLAIMER_PRIVATE_KEY\)$/);
    expect(() => loadDevnodeConfig({ ...member, ROLLUPS: "v1" }, [])).toThrow(/DEVNODE_ROLE: a member votes in a v2 Quorum/);
    expect(() => loadDevnodeConfig({ ...member, DEVNODE_CHAIN: "managed" }, [])).toThrow(/^invalid devnode configuration: DEVNODE_ROLE: a member follows an external chain/);
  });

  it("a reader: stale after READER_STALE_MS, the dapp's database where the dapp keeps it, and a snapshot for validators only", () => {
    const validator = { RPC_URL: "http://10.0.0.1:8545", DEVNODE_ROLE: "validator", DATA_DIR: "/srv/reader" };
    expect(loadDevnodeConfig(validator, [])).toMatchObject({ readerStaleMs: 5000, dappDbPath: "/srv/reader/dapp.sqlite", snapshotPath: undefined });
    expect(loadDevnodeConfig({ ...validator, READER_STALE_MS: "800", DAPP_DB_PATH: "/disk/dapp.db", DEVNODE_SNAPSHOT: "/snaps/one" }, [])).toMatchObject({
      readerStaleMs: 800,
      dappDbPath: "/disk/dapp.db",
      snapshotPath: "/snaps/one",
    });
    expect(() => loadDevnodeConfig({ ...validator, READER_STALE_MS: "0" }, [])).toThrow(/^invalid devnode configuration: READER_STALE_MS: /);
    expect(() => loadDevnodeConfig({ ...validator, DAPP_DB_PATH: "" }, [])).toThrow(/^invalid devnode configuration: DAPP_DB_PATH: /);
    expect(() => loadDevnodeConfig({ DEVNODE_SNAPSHOT: "/snaps/one" }, [])).toThrow(/^invalid devnode configuration: DEVNODE_SNAPSHOT: only a validator \(DEVNODE_ROLE=validator\) starts from a snapshot$/);
  });

  it("EPOCH_HASHER_MODULE: the epoch hasher's worker compiled, a file that exists; unset, the source through tsx", () => {
    expect(loadDevnodeConfig({}, []).epochHasherModule).toBeUndefined();
    const here = new URL(import.meta.url).pathname;
    expect(loadDevnodeConfig({ EPOCH_HASHER_MODULE: here }, []).epochHasherModule).toBe(here);
    expect(() => loadDevnodeConfig({ EPOCH_HASHER_MODULE: "/nowhere/epoch-hasher-worker.mjs" }, [])).toThrow(/^invalid devnode configuration: EPOCH_HASHER_MODULE: no such file: \/nowhere\/epoch-hasher-worker\.mjs$/);
    // A stack whose pieces are compiled starts the compiled worker too; npm start (the sources) names none.
    const { settings } = loadStartOptions({ PATH: process.env.PATH }, [], PROJECT_ROOT);
    expect(pieceCommand("devnode", settings)?.env.EPOCH_HASHER_MODULE).toBeUndefined();
    expect(pieceCommand("devnode", { ...settings, compiledDir: "/build" })?.env.EPOCH_HASHER_MODULE).toBe("/build/devnode/v1/epoch-hasher-worker.mjs");
  });

  it("DEVNODE_LOG_LABEL names the node on every log line; a bad label is refused, and logged as `devnode` meanwhile", () => {
    const lines = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const { format, label } = loadLogSettings({ DEVNODE_LOG_LABEL: "member-2" });
      const log = createDevnodeLog(format, label);
      log.info("ready");
      log.error("Quorum member 0x1 voted outputs root 0x2");
      expect([lines.mock.calls, errors.mock.calls]).toEqual([[["[member-2] ready"]], [["[member-2] Quorum member 0x1 voted outputs root 0x2"]]]);
    } finally {
      lines.mockRestore();
      errors.mockRestore();
    }
    expect(loadLogSettings({})).toEqual({ format: "plain", label: "devnode" });
    expect(loadLogSettings({ LOG_FORMAT: "json", DEVNODE_LOG_LABEL: "reader-10" })).toEqual({ format: "json", label: "reader-10" });
    for (const bad of ["", "Member 2", "-x", "[devnode]", "a".repeat(33)]) {
      expect(loadLogSettings({ DEVNODE_LOG_LABEL: bad }).label, bad).toBe("devnode");
      expect(() => loadDevnodeConfig({ DEVNODE_LOG_LABEL: bad }, []), bad).toThrow(/^invalid devnode configuration: DEVNODE_LOG_LABEL: /);
    }
    expect(loadLogSettings({ LOG_FORMAT: "xml" }).format).toBe("plain");
  });
});

describe("npm start configuration", () => {
  it("--quorum N: a v2 stack on its own chain whose first N readers are the Quorum's members, voting with hardhat #20 upward", () => {
    const settings = loadStartOptions({}, ["--rollups", "v2", "--quorum", "3"], PROJECT_ROOT).settings;
    expect(settings.quorum?.members).toEqual([20, 21, 22].map((k) => privateKeyToAccount(hardhatPrivateKey(k)).address));
    expect(settings.quorum?.keys).toEqual([20, 21, 22].map((k) => hardhatPrivateKey(k)));
    expect(settings.readers?.nodePorts).toEqual([10101, 10102, 10103]);
    // With more readers than members, the rest only read.
    expect(loadStartOptions({}, ["--rollups=v2", "--quorum=1", "--readers=2"], PROJECT_ROOT).settings).toMatchObject({ quorum: { members: [expect.any(String)] }, readers: { nodePorts: [10101, 10102] } });
    expect(loadStartOptions({}, ["--rollups", "v2"], PROJECT_ROOT).settings.quorum).toBeUndefined();
    // Each node's log lines say which node it is: a member by its Quorum id, a reader that only reads by its piece.
    const mixed = loadStartOptions({}, ["--rollups=v2", "--quorum=1", "--readers=2"], PROJECT_ROOT).settings;
    expect((["devnode", "reader-1", "reader-2"] as const).map((piece) => pieceCommand(piece, mixed)?.env.DEVNODE_LOG_LABEL)).toEqual([undefined, "member-1", "reader-2"]);
    const refused: [string[], Record<string, string>, RegExp][] = [
      [["--quorum", "3"], {}, /^--quorum: a Quorum is Cartesi Rollups v2's \(add --rollups v2\); v1 keeps its Authority/],
      [["--rollups", "v2", "--quorum", "0"], {}, /^invalid configuration: QUORUM: /],
      [["--rollups", "v2", "--quorum", "9"], {}, /^invalid configuration: QUORUM: /],
      [["--rollups", "v2", "--quorum", "three"], {}, /^invalid configuration: QUORUM: /],
      [["--rollups", "v2", "--quorum"], {}, /^--quorum: expected a number of Quorum members, e\.g\. --quorum 3$/],
      [["--rollups", "v2", "--quorum", "3"], { RPC_URL: "http://10.0.0.1:8545" }, /^--quorum deploys the application under a Quorum on the stack's own chain/],
      [["--rollups", "v2", "--quorum", "3", "--validator"], {}, /^--quorum runs validators inside the stack: leave out --validator$/],
    ];
    for (const [argv, env, message] of refused) expect(() => loadStartOptions(env, argv, PROJECT_ROOT), argv.join(" ")).toThrow(message);
  });

  it("starts the source dapp by default, the bundle with --bundle or DAPP_BUNDLE, or DAPP_COMMAND", () => {
    const plain = loadStartOptions({}, [], PROJECT_ROOT).settings;
    expect(plain.dappCommand).toEqual([process.execPath, "--import", "tsx", "dapp/main.ts"]);
    expect(plain.dappAdmins).toBe(DEFAULTS.adminAddress);
    expect(plain.api).toBe("auto");
    expect(plain.externalRpcUrl).toBeUndefined();
    expect(loadStartOptions({}, ["--bundle"], PROJECT_ROOT).settings.dappCommand).toEqual([process.execPath, "dist/dapp/main.js"]);
    expect(loadStartOptions({ DAPP_BUNDLE: "1" }, [], PROJECT_ROOT).settings.dappCommand).toEqual([process.execPath, "dist/dapp/main.js"]);
    expect(loadStartOptions({ DAPP_COMMAND: "node x.js" }, [], PROJECT_ROOT).settings.dappCommand).toBe("node x.js");
    expect(loadStartOptions({}, ["--reset", "--no-api"], PROJECT_ROOT)).toMatchObject({ reset: true, settings: { api: false } });
  });

  it("runs the pieces compiled from STACK_PROCESSES_DIR, and refuses a directory with no compiled devnode", () => {
    const dir = mkdtempSync(join(tmpdir(), "stack-processes-"));
    try {
      mkdirSync(join(dir, "devnode"));
      writeFileSync(join(dir, "devnode", "main.mjs"), "");
      const settings = loadStartOptions({ STACK_PROCESSES_DIR: dir }, [], PROJECT_ROOT).settings;
      expect(settings.compiledDir).toBe(dir);
      // A relative directory is the project's, as DATA_DIR is, wherever npm start was run from.
      expect(loadStartOptions({ STACK_PROCESSES_DIR: relative(PROJECT_ROOT, dir) }, [], PROJECT_ROOT).settings.compiledDir).toBe(dir);
      expect(pieceCommand("devnode", settings)?.args).toEqual([join(dir, "devnode", "main.mjs")]);
      expect(pieceCommand("api", settings)?.args).toEqual([join(dir, "api", "main.mjs")]);
      expect(loadStartOptions({}, [], PROJECT_ROOT).settings.compiledDir).toBeUndefined();
      expect(() => loadStartOptions({ STACK_PROCESSES_DIR: join(dir, "api") }, [], PROJECT_ROOT)).toThrow(/^invalid configuration: STACK_PROCESSES_DIR: no compiled devnode in /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the bad variable, and refuses unknown flags", () => {
    expect(() => loadStartOptions({ API_PORT: "-1" }, [], PROJECT_ROOT)).toThrow(/^invalid configuration: API_PORT: /);
    expect(() => loadStartOptions({ PRIVATE_KEY: "0x12" }, [], PROJECT_ROOT)).toThrow(/PRIVATE_KEY: /);
    expect(() => loadStartOptions({}, ["--rest"], PROJECT_ROOT)).toThrow(/unknown argument: --rest/);
  });

  it("--api-replicas N: replicas on their own ports and wallets, every wallet an admin of the dapp", () => {
    const { settings } = loadStartOptions({ PATH: process.env.PATH }, ["--api-replicas", "3"], PROJECT_ROOT);
    expect(settings.replicas).toMatchObject({ ports: [8101, 8102, 8103], redisPort: 6390, trustForwarded: false });
    const wallets = settings.dappAdmins.split(",");
    expect(wallets).toHaveLength(3);
    expect(wallets[0]).toBe(DEFAULTS.adminAddress);
    expect(new Set(wallets).size).toBe(3);
    expect(loadStartOptions({ PATH: process.env.PATH, API_REPLICAS: "2" }, [], PROJECT_ROOT).settings.replicas?.ports).toEqual([8101, 8102]);
    expect(loadStartOptions({}, ["--api-replicas=1"], PROJECT_ROOT).settings.replicas).toBeUndefined();
  });

  it("--readers N: validators inside the stack on ports and records of their own, which the api reads from", () => {
    const { settings } = loadStartOptions({}, ["--readers", "2"], PROJECT_ROOT);
    expect(settings.readers).toEqual({ nodePorts: [10101, 10102], rollupHttpPorts: [5101, 5102] });
    expect(stackPieces(settings).filter((p) => p.startsWith("reader"))).toEqual(["reader-1", "reader-2", "reader-dapp-1", "reader-dapp-2"]);
    const reader = pieceCommand("reader-2", settings);
    expect(reader?.env).toMatchObject({ DEVNODE_ROLE: "validator", DEVNODE_CHAIN: "external", NODE_PORT: "10102", ROLLUP_HTTP_PORT: "5102", RPC_URL: "http://127.0.0.1:8545" });
    expect(reader?.env.DATA_DIR).toMatch(/\.data\/reader-2$/);
    expect(pieceCommand("reader-dapp-2", settings)?.env).toMatchObject({ ROLLUP_HTTP_SERVER_URL: "http://127.0.0.1:5102", DAPP_ADMINS: settings.dappAdmins, DAPP_ADDRESS: settings.dappAddress });
    expect(pieceCommand("api", settings)?.env.READ_URLS).toBe("http://127.0.0.1:10101,http://127.0.0.1:10102");
    // Without readers the api reads the node, as before.
    const plain = loadStartOptions({}, [], PROJECT_ROOT).settings;
    expect([plain.readers, pieceCommand("api", plain)?.env.READ_URLS]).toEqual([undefined, undefined]);
    expect(loadStartOptions({ READERS: "1", READER_BASE_PORT: "12000" }, [], PROJECT_ROOT).settings.readers?.nodePorts).toEqual([12000]);
  });

  it("--validator: a devnode and a dapp on the local stack's chain, on ports and a record of their own, with the same admins", () => {
    const { settings } = loadStartOptions({}, ["--validator"], PROJECT_ROOT);
    expect(settings).toMatchObject({ externalRpcUrl: "http://127.0.0.1:8545", nodePort: 10001, rollupHttpPort: 5005, api: false, attestor: undefined, env: { DEVNODE_ROLE: "validator" } });
    expect(settings.dataDir).toMatch(/\.data-validator$/);
    expect(settings.dappAdmins).toBe(DEFAULTS.adminAddress);
    // Beside a stack of three replicas: their wallets are the dapp's admins there, so here too.
    const v2 = loadStartOptions({}, ["--validator", "--rollups=v2"], PROJECT_ROOT).settings;
    expect(v2).toMatchObject({ rollups: "v2", dappAddress: V2_DEFAULTS.applicationAddress, nodePort: 10001, env: { DEVNODE_ROLE: "validator" } });
    const beside = loadStartOptions({ API_REPLICAS: "3", NODE_PORT: "11000" }, ["--validator"], PROJECT_ROOT).settings;
    expect(beside.dappAdmins.split(",")).toEqual(loadStartOptions({ PATH: process.env.PATH }, ["--api-replicas", "3"], PROJECT_ROOT).settings.dappAdmins.split(","));
    expect([beside.nodePort, beside.replicas]).toEqual([11000, undefined]);
  });

  it("--rollups v2 (or ROLLUPS=v2) runs a v2 node, with the v2 addresses unless others are given", () => {
    for (const [env, argv] of [[{}, ["--rollups", "v2"]], [{ ROLLUPS: "v2" }, []]] as const) {
      const settings = loadStartOptions(env, argv, PROJECT_ROOT).settings;
      expect([settings.rollups, settings.inputBoxAddress, settings.dappAddress]).toEqual(["v2", V2_DEFAULTS.inputBoxAddress, V2_DEFAULTS.applicationAddress]);
    }
    const v1 = loadStartOptions({}, [], PROJECT_ROOT).settings;
    expect([v1.rollups, v1.inputBoxAddress, v1.dappAddress]).toEqual(["v1", DEFAULTS.inputBoxAddress, DEFAULTS.dappAddress]);
    const given = loadStartOptions({ DAPP_ADDRESS: "0x000000000000000000000000000000000000bEEF" }, ["--rollups=v2"], PROJECT_ROOT).settings;
    expect(given.dappAddress).toBe("0x000000000000000000000000000000000000bEEF");
  });

  it.each([
    [["--api-replicas"], {}, /--api-replicas: expected a number/],
    [["--api-replicas", "0"], {}, /API_REPLICAS: /],
    [["--api-replicas", "9"], {}, /API_REPLICAS: /],
    [["--api-replicas", "2"], { PATH: "/nonexistent" }, /needs haproxy and redis-server on PATH \(Debian: apt-get install haproxy redis-server\)/],
    [["--api-replicas", "3"], { API_REPLICA_KEYS: `0x${"1".repeat(64)}` }, /API_REPLICA_KEYS: 3 replicas need 2 keys beside PRIVATE_KEY, got 1/],
    [["--api-replicas", "2"], { RPC_URL: "http://10.0.0.1:8545" }, /API_REPLICA_KEYS: on an external chain/],
    [["--api-replicas", "2"], { API_REPLICA_BASE_PORT: "8000" }, /port 8001 is wanted by balancer \(API_PORT\) and by api-2 \(API_REPLICA_BASE_PORT \+ 1\)/],
    [["--rollups"], {}, /--rollups: expected v1 or v2/],
    [["--rollups", "v3"], {}, /ROLLUPS: /],
    [["--readers"], {}, /--readers: expected a number of readers, e.g. --readers 2/],
    [["--readers", "9"], {}, /READERS: /],
    [["--readers", "2", "--validator"], {}, /--readers runs validators inside the stack: leave out --validator/],
    [["--readers", "2"], { READER_BASE_PORT: "8000" }, /port 8001 is wanted by reader-2 \(READER_BASE_PORT \+ 1\) and by api \(API_PORT\)/],
    [["--readers", "2"], { READER_BASE_PORT: "5100" }, /port 5101 is wanted by reader-2 \(READER_BASE_PORT \+ 1\) and by reader-1's rollup HTTP server \(READER_ROLLUP_BASE_PORT\)/],
  ])("refuses %j with %j", (argv, env, message) => {
    expect(() => loadStartOptions({ PATH: process.env.PATH, ...env }, argv, PROJECT_ROOT)).toThrow(message);
  });
});

describe("wipeDataDir", () => {
  const scratch = mkdtempSync(join(tmpdir(), "wipe-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("empties a data directory", () => {
    const dir = join(scratch, "data");
    mkdirSync(join(dir, "logs"), { recursive: true });
    writeFileSync(join(dir, "devnode.sqlite"), "x");
    writeFileSync(join(dir, "logs", "chain.log"), "x");
    wipeDataDir(dir, PROJECT_ROOT);
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ["the filesystem root", "/"],
    ["the home directory", homedir()],
    ["the project", PROJECT_ROOT],
    ["a parent of the project", join(PROJECT_ROOT, "..")],
  ])("refuses %s", (_name, dir) => {
    expect(() => wipeDataDir(dir, PROJECT_ROOT)).toThrow(/refusing to wipe DATA_DIR/);
  });
});

describe("replay file", () => {
  it("reads wrapped and raw inputs, senders, and skips blank and comment lines", () => {
    const text = [
      "# comment",
      "",
      '{"input":{"type":"a","params":{}}}',
      '{"sender":3,"input":{"type":"b","params":{}}}',
      '{"sender":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","input":{"type":"c","params":{}}}',
      '{"type":"d","params":{}}',
    ].join("\n");
    expect(parseReplayFile(text, 0)).toEqual([
      { line: 3, sender: 0, input: { type: "a", params: {} } },
      { line: 4, sender: 3, input: { type: "b", params: {} } },
      { line: 5, sender: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", input: { type: "c", params: {} } },
      { line: 6, sender: 0, input: { type: "d", params: {} } },
    ]);
  });

  it("names the line that is not JSON or has a bad sender", () => {
    expect(() => parseReplayFile('{"type":"a"}\n{oops', 0)).toThrow(UsageError);
    expect(() => parseReplayFile('{"type":"a"}\n{oops', 0)).toThrow(/^line 2 is not JSON/);
    expect(() => parseReplayFile('{"sender":"me","input":{}}', 0)).toThrow(/^line 1: a sender is/);
  });
});
