/**
 * Every `npm run` script answers `--help` with its usage (exit 0), and a bad argument with one line saying
 * what is wrong plus the usage (exit 2, no stack trace), before it touches a chain, a node or a file.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(script: string, args: readonly string[], more: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // Nothing listens on these: a script that tried to connect instead of refusing its arguments would fail differently.
    const env = { ...process.env, NODE_PORT: "9", CHAIN_PORT: "9", API_URL: "http://127.0.0.1:9", ...more };
    const child = spawn(process.execPath, [...processArgs(`scripts/${script}.ts`), ...args], { cwd: PROJECT_ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Script file → a bad command line and a fragment of the one-line complaint. */
const SCRIPTS: Record<string, { bad: string[]; says: RegExp }> = {
  start: { bad: ["--bogus"], says: /unknown argument: --bogus/ },
  input: { bad: ["--bogus"], says: /unknown option --bogus/ },
  inspect: { bad: ["--bogus"], says: /unknown option --bogus/ },
  replay: { bad: ["--bogus"], says: /unknown option --bogus/ },
  token: { bad: ["guest"], says: /unknown role guest/ },
  build: { bad: ["now"], says: /unexpected argument: now/ },
  bench: { bad: ["--size", "small"], says: /--size/ },
  soak: { bad: ["--bogus"], says: /unknown argument --bogus/ },
  "db-digest": { bad: [], says: /expected the path of a dapp database/ },
  epoch: { bad: ["now"], says: /unexpected argument: now/ },
  validate: { bad: ["--node", "ftp://x"], says: /--node: expected an http\(s\) URL/ },
  snapshot: { bad: ["--node", "ftp://x"], says: /--node: expected an http\(s\) URL/ },
  "deploy-contracts": { bad: ["--rpc", "http://127.0.0.1:9", "--application", "0x12"], says: /--application: expected the application contract's 0x address, not 0x12/ },
  verify: { bad: ["0x12"], says: /a claim id is 0x and 64 hex digits/ },
  prove: { bad: ["--url", "https://localhost/x", "--schema", "0x12"], says: /--schema must be a schema id/ },
  "inspect-adapter": { bad: ["--node", "ftp://x"], says: /--node: expected the v2 node's http\(s\) URL/ },
  riscv64: { bad: ["bogus"], says: /unknown step: bogus/ },
  "client-generate": { bad: ["--force"], says: /unknown argument: --force/ },
  "test-times": { bad: ["/nonexistent/report.json"], says: /not vitest's JSON report/ },
  "test-calibrate": { bad: ["now"], says: /unexpected argument: now/ },
  "nullifier-keys": { bad: ["mint"], says: /unknown command mint: deal or reshare/ },
};

describe("every npm run script", () => {
  it("answers --help with its usage and exit 0", { timeout: 120_000 }, async () => {
    const runs = await Promise.all(Object.keys(SCRIPTS).map(async (script) => [script, await run(script, ["--help"])] as const));
    for (const [script, result] of runs) {
      expect(result.status, `${script}: ${result.stderr}`).toBe(0);
      expect(result.stdout, script).toMatch(/^usage: (npm start|npm run )/);
    }
  });

  it("answers a bad argument with what is wrong and the usage, exit 2, no stack trace", { timeout: 120_000 }, async () => {
    const runs = await Promise.all(Object.entries(SCRIPTS).map(async ([script, c]) => [script, c, await run(script, c.bad)] as const));
    for (const [script, c, result] of runs) {
      expect(result.status, `${script}: ${result.stderr}`).toBe(2);
      expect(result.stderr, script).toMatch(c.says);
      expect(result.stderr, script).toMatch(/usage: /);
      expect(result.stderr, script).not.toMatch(/\n\s+at /);
    }
  });
});

describe("npm run prove", () => {
  it("refuses a PROVER_MODULE that is not there before it proves anything, exit 2", { timeout: 60_000 }, async () => {
    const schema = `0x${"ab".repeat(32)}`;
    const result = await run("prove", ["--url", "https://localhost/x", "--schema", schema, "--sender", "1"], { PROVER_MODULE: "/no/such/prover.mjs" });
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/PROVER_MODULE: no such file: \/no\/such\/prover\.mjs/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("npm run replay -- --libcmt", () => {
  it.each([
    [["--libcmt", "inputs.jsonl"], /--libcmt replays a recorded log \(--log\) or the node's, not inputs\.jsonl/],
    [["--libcmt", "--log", "/nonexistent/log.jsonl"], /cannot read the log \/nonexistent\/log\.jsonl/],
    [["--libcmt", "--log", "package.json"], /package\.json: line 1: not JSON/],
    [["--libcmt", "--admins", "0x12"], /--admins: expected comma-separated 0x addresses, not 0x12/],
    [["--libcmt", "--log", "x.jsonl", "--queries", "q.jsonl"], /--queries asks the node: a --log file carries its own inspects/],
    [["inputs.jsonl", "--save", "log.jsonl"], /--save goes with --libcmt/],
  ])("refuses %j with what is wrong, exit 2", { timeout: 60_000 }, async (args, says) => {
    const result = await run("replay", args);
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toMatch(says);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
