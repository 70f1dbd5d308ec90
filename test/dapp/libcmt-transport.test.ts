/**
 * The dapp on libcmt (DAPP_TRANSPORT=libcmt, @cartesi/rollup's mock driver on this host) against the same
 * dapp on the rollup HTTP server (the in-test server of harness.ts, through @deroll/app): a seeded log of
 * mixed inputs, accepted and rejected, and queries, some raising exceptions, give the same verdicts and the
 * same notices, reports and exceptions byte for byte. libcmt writes a notice as the `Notice(bytes)` call
 * that enters the outputs tree. The mock's own limits are met as the machine would meet them: a rejection
 * ends a session, and the outputs tree goes on across sessions through DAPP_OUTPUTS_TREE_FILE.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zeroHash, type Hex } from "viem";
import { decodeNotice } from "../../devnode/v2/outputs.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { evmAdvanceOf } from "../../scripts/lib/input-log.ts";
import { runMockSessions, type MockAnswer, type MockRequest } from "../../toolkit/libcmt-mock.ts";
import { HARDHAT_ADDRESSES, LOG_SCHEMA_ID, mixedLog } from "../hostile/mixed-log.ts";
import { PROJECT_ROOT } from "../support/stack.ts";
import { ADMIN, startHarness, T0, type Harness } from "./harness.ts";

// The bundle built once for the run (test/support/global-setup.ts) when there is one: the same code, ready sooner.
const DAPP = process.env.TEST_DAPP_BUILT ? [process.execPath, process.env.TEST_DAPP_BUILT] : [process.execPath, "--import", "tsx", "dapp/main.ts"];
const CHAIN_ID = 31337;
const APPLICATION = "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e";

const steps = mixedLog(60, 34);
const queries: Hex[] = [
  jsonToHex({ type: "all_provider_schemas", params: {} }),
  jsonToHex({ type: "provider_schema", params: { schema_id: LOG_SCHEMA_ID } }),
  jsonToHex({ type: "attestations_by_owner", params: { owner: HARDHAT_ADDRESSES[4] } }),
  jsonToHex({ type: "grants_by_owner", params: { owner: HARDHAT_ADDRESSES[5] } }),
  jsonToHex({ type: "check_access", params: { owner: HARDHAT_ADDRESSES[5], requester: HARDHAT_ADDRESSES[6] } }),
  jsonToHex({ type: "health", params: {} }),
  jsonToHex({ type: "no_such_query", params: {} }),
  jsonToHex({ type: "attestation", params: { attestation_id: "0x1234" } }),
  utf8ToHex("not json"),
];

function advance(index: number, payload: Hex, sender: number): MockRequest {
  const address = HARDHAT_ADDRESSES[sender] as `0x${string}`;
  const logged = { index, sender: address, blockNumber: 100 + index, blockTimestamp: T0 + index + 1, prevRandao: zeroHash, payload };
  return { kind: "advance", evmAdvance: evmAdvanceOf(CHAIN_ID, APPLICATION, logged) };
}

function noticePayload(output: Hex): Hex {
  const payload = decodeNotice(output);
  if (payload === undefined) throw new Error(`not a Notice(bytes): ${output.slice(0, 10)}`);
  return payload;
}

const dirs: string[] = [];
function workDir(): string {
  // No "." in the path: libcmt's mock cuts file names at the first one.
  const dir = mkdtempSync(join(tmpdir(), "libcmt-dapp-"));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the dapp on libcmt and on the rollup HTTP server", () => {
  let http: { status: string; notices: Hex[]; reports: Hex[] }[];
  let httpQueries: { status: string; reports: Hex[]; exception: Hex | null }[];
  let libcmt: MockAnswer[];

  beforeAll(async () => {
    const h: Harness = await startHarness();
    http = [];
    for (const [index, step] of steps.entries()) {
      const out = await h.raw(step.payload, { sender: HARDHAT_ADDRESSES[step.sender] as string, timestamp: T0 + index + 1, index });
      // Every notice, the batch notice after the JSON ones included.
      http.push({ status: out.status, notices: out.batch === null ? out.notices : [...out.notices, out.batch], reports: out.reports });
    }
    httpQueries = [];
    for (const payload of queries) httpQueries.push(await h.server.inspect(payload));
    await h.close();

    const requests: MockRequest[] = [...steps.map((s, i) => advance(i, s.payload, s.sender)), ...queries.map((payload): MockRequest => ({ kind: "inspect", payload }))];
    const dir = workDir();
    const ended = new Set(http.flatMap((o, i) => (o.status === "reject" ? [i] : [])));
    httpQueries.forEach((q, k) => {
      if (q.exception !== null) ended.add(steps.length + k);
    });
    const result = await runMockSessions({
      dir,
      requests,
      endsSession: (i) => ended.has(i),
      command: DAPP,
      cwd: PROJECT_ROOT,
      env: { DAPP_ADMINS: ADMIN, DAPP_DB_PATH: join(dir, "dapp.sqlite"), DAPP_OUTPUTS_TREE_FILE: join(dir, "tree.bin") },
    });
    expect(result.sessions.map((s) => s.exitCode)).toEqual(result.sessions.map(() => 0));
    libcmt = result.answers;
  }, 120_000);

  it("judge a log of mixed inputs alike: verdicts, notices and reports byte for byte", () => {
    expect(http.filter((o) => o.status === "reject").length).toBeGreaterThan(5);
    expect(http.filter((o) => o.status === "accept").length).toBeGreaterThan(20);
    http.forEach((o, i) => {
      const answer = libcmt[i] as MockAnswer;
      expect(answer.outputsRoot === null ? "reject" : "accept", `input ${i}`).toBe(o.status);
      if (o.status === "accept") expect(answer.outputs.map(noticePayload), `input ${i}`).toEqual(o.notices);
      expect(answer.reports, `input ${i}`).toEqual(o.reports);
    });
  });

  it("answer queries alike, and raise an exception where the HTTP path raises one", () => {
    expect(httpQueries.filter((q) => q.exception !== null).length).toBe(3);
    httpQueries.forEach((q, k) => {
      const answer = libcmt[steps.length + k] as MockAnswer;
      expect(answer.reports, `query ${k}`).toEqual(q.reports);
      expect(answer.exceptions, `query ${k}`).toEqual(q.exception === null ? [] : [q.exception]);
    });
  });
});

describe("libcmt's mock as the machine meets it", () => {
  const accepted = Array.from({ length: 6 }, (_, i) =>
    advance(i, jsonToHex({ type: "register_schema", params: { provider: "http", flowType: `f${i}`, domain: "bank.example", bucketDefinitions: { b: { boundaries: [0, 1, 2], labels: ["x", "y"] } }, dataKeys: ["k"], freshnessHalfLife: 60 } }), 0),
  );

  async function roots(split: number[], treeFile: boolean): Promise<(Hex | null)[]> {
    const dir = workDir();
    const result = await runMockSessions({
      dir,
      requests: accepted,
      endsSession: (i) => split.includes(i),
      command: DAPP,
      cwd: PROJECT_ROOT,
      env: { DAPP_ADMINS: ADMIN, DAPP_DB_PATH: join(dir, "dapp.sqlite"), ...(treeFile ? { DAPP_OUTPUTS_TREE_FILE: join(dir, "tree.bin") } : {}) },
    });
    return result.answers.map((a) => a.outputsRoot);
  }

  it("carries the outputs tree across sessions in DAPP_OUTPUTS_TREE_FILE, as the machine's memory does", { timeout: 60_000 }, async () => {
    const whole = await roots([], true);
    expect(whole.every((r) => r !== null)).toBe(true);
    expect(new Set(whole).size).toBe(whole.length);
    expect(await roots([1, 3], true)).toEqual(whole);
    // Without the file a new session starts an empty tree: its roots are no longer the application's.
    const lost = await roots([1, 3], false);
    expect(lost.slice(0, 2)).toEqual(whole.slice(0, 2));
    expect(lost[2]).not.toBe(whole[2]);
  });

  it("a rejection in the middle of a session stops the dapp with a clear error, since the mock cannot revert", { timeout: 60_000 }, async () => {
    const dir = workDir();
    const rejected = advance(1, utf8ToHex("not json"), 0);
    const result = await runMockSessions({
      dir,
      requests: [accepted[0] as MockRequest, rejected, accepted[2] as MockRequest],
      endsSession: () => false,
      command: DAPP,
      cwd: PROJECT_ROOT,
      env: { DAPP_ADMINS: ADMIN, DAPP_DB_PATH: join(dir, "dapp.sqlite") },
    });
    expect(result.sessions[0]?.exitCode).toBe(1);
    expect(result.sessions[0]?.stderr).toContain("libcmt's mock driver cannot go on after a rejected request (it has no machine to revert): end each host session at a rejection or an exception");
    // The runner starts the next session after the rejection, so what follows is still judged.
    expect(result.answers.map((a) => a.outputsRoot === null)).toEqual([false, true, false]);
    expect(result.sessions.map((s) => s.exitCode)).toEqual([1, 0]);
  });

  it.each([
    [{ DAPP_TRANSPORT: "libcmt", ROLLUP_HTTP_SERVER_URL: "http://127.0.0.1:5004" }, "ROLLUP_HTTP_SERVER_URL is for DAPP_TRANSPORT=http (with libcmt there is no rollup HTTP server)"],
    [{ DAPP_TRANSPORT: "grpc" }, 'DAPP_TRANSPORT: expected "http" (the rollup HTTP server) or "libcmt"'],
    [{ DAPP_OUTPUTS_TREE_FILE: "/tmp/tree" }, "DAPP_OUTPUTS_TREE_FILE is for DAPP_TRANSPORT=libcmt"],
  ])("refuses a transport set up wrong at start (%o), naming the variable", (env, message) => {
    const run = spawnSync(DAPP[0] as string, DAPP.slice(1), { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH, DAPP_DB_PATH: ":memory:", ...env }, encoding: "utf8", timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(message);
  });
});
