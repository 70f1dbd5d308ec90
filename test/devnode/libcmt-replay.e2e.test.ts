/**
 * Cartesi's own guest code judges the devnode: a log with every input kind (rejections and inspect
 * exceptions included) is sent through a real v1 and a real v2 stack, read back from the node's reader by
 * `npm run replay -- --libcmt`, and replayed through the dapp on libcmt's mock driver (@cartesi/rollup),
 * which must write exactly the outputs and reports the devnode recorded, and on v2 the outputs Merkle root
 * the devnode recorded after each input. A record changed by one byte is caught, naming the input and the
 * first differing output. Under `npm run riscv64 -- e2e` the stack's dapp runs on riscv64: the record made
 * there is judged by libcmt on the host.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INPUTS } from "../../dapp/inputs/index.ts";
import { parseInputLog, formatInputLog, type InputLog } from "../../scripts/lib/input-log.ts";
import { kindsOf, sendEveryKind, type EveryKindLog } from "../support/every-kind-log.ts";
import { processArgs, PROJECT_ROOT, SLOW_DAPP_FACTOR, startStack, type TestStack } from "../support/stack.ts";

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function replay(stack: TestStack, args: readonly string[]): Promise<Run> {
  // The dapp the stack ran, on libcmt too (the bundle built for the run, test/support/global-setup.ts); the
  // riscv64 pass's stack ran it under qemu, and libcmt on the host runs the sources.
  const built = process.env.TEST_DAPP_COMMAND ? undefined : process.env.TEST_DAPP_BUILT;
  const env = {
    ...process.env,
    ...(built === undefined || BUNDLE.length > 0 ? {} : { DAPP_COMMAND: `"${process.execPath}" "${built}"` }),
    NODE_PORT: String(stack.ports.node),
    CHAIN_PORT: String(stack.ports.chain),
    ROLLUPS: stack.rollups,
    DAPP_ADMINS: stack.replicaWallets.join(","),
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...processArgs("scripts/replay.ts"), "--libcmt", ...args], { cwd: PROJECT_ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** The bundle when the suite runs on it (TEST_DAPP_BUNDLE=1), so the replay judges what the stack ran. */
const BUNDLE = process.env.TEST_DAPP_BUNDLE === "1" ? ["--bundle"] : [];

describe.each(["v1", "v2"] as const)("the libcmt replay of a %s stack", (rollups) => {
  let stack: TestStack;
  let sent: EveryKindLog;
  let dir: string;
  let log: InputLog;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "libcmt-replay-test-"));
    stack = await startStack({ rollups });
    sent = await sendEveryKind(stack);
  }, 180_000 * SLOW_DAPP_FACTOR);

  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("libcmt writes exactly what the devnode recorded for every input and inspect", { timeout: 180_000 * SLOW_DAPP_FACTOR }, async () => {
    writeFileSync(join(dir, "queries.jsonl"), `${sent.queries.join("\n")}\n`);
    const run = await replay(stack, ["--queries", join(dir, "queries.jsonl"), "--save", join(dir, "log.jsonl"), ...BUNDLE]);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const what = rollups === "v2" ? "outputs, reports and outputs Merkle roots" : "notices and reports";
    expect(run.stdout).toContain(`libcmt agrees with the node: every verdict, ${what} and inspect answer`);

    // What was judged: every kind accepted, rejections, and inspects that raised exceptions.
    log = parseInputLog(readFileSync(join(dir, "log.jsonl"), "utf8"));
    expect(log.advances).toHaveLength(sent.verdicts.length);
    expect(kindsOf(sent)).toEqual([...Object.keys(INPUTS), "batch", "compact_batch"].sort());
    expect(log.advances.filter((a) => a.expected.status === "REJECTED").length).toBeGreaterThanOrEqual(8);
    expect(log.inspects.filter((q) => q.expected.status === "Exception").length).toBe(4);
    expect(log.inspects.filter((q) => q.expected.status === "Accepted").length).toBe(13);
    const outputs = log.advances.flatMap((a) => (rollups === "v2" ? (a.expected.outputs ?? []) : (a.expected.notices ?? [])));
    // Most kinds announce what they wrote (a role, a key or a shared key is silent).
    expect(outputs.length).toBeGreaterThanOrEqual(12);
    if (rollups === "v2") expect(log.advances.every((a) => a.expected.outputsRoot !== undefined)).toBe(true);
  });

  it("a record changed by one byte is caught, naming the input and the first differing output", { timeout: 180_000 * SLOW_DAPP_FACTOR }, async () => {
    const tampered = structuredClone(log);
    const victim = tampered.advances.find((a) => a.expected.status === "ACCEPTED" && (a.expected.outputs ?? a.expected.notices ?? []).length > 0);
    if (victim === undefined) throw new Error("no accepted input with an output");
    const list = (rollups === "v2" ? victim.expected.outputs : victim.expected.notices) as `0x${string}`[];
    const first = list[0] as string;
    list[0] = `${first.slice(0, -2)}${first.slice(-2) === "00" ? "01" : "00"}` as `0x${string}`;
    const rejected = tampered.advances.find((a) => a.expected.status === "REJECTED");
    if (rejected === undefined) throw new Error("no rejected input");
    rejected.expected.status = "ACCEPTED";
    const report = tampered.inspects.find((q) => q.expected.reports.length > 0);
    if (report !== undefined) report.expected.reports = [];
    if (rollups === "v2") victim.expected.outputsRoot = `0x${"11".repeat(32)}`;
    writeFileSync(join(dir, "tampered.jsonl"), formatInputLog(tampered));

    const run = await replay(stack, ["--log", join(dir, "tampered.jsonl"), ...BUNDLE]);
    expect(run.status, run.stderr).toBe(1);
    const kind = rollups === "v2" ? "output" : "notice";
    expect(run.stdout).toContain(`input ${victim.advance.index}: ${kind} 0 differs: the node recorded`);
    expect(run.stdout).toContain(`input ${rejected.advance.index}: the node recorded ACCEPTED, the dapp on libcmt REJECTED`);
    expect(run.stdout).toMatch(/inspect \d+: the node recorded 0 report\(s\), libcmt wrote 1/);
    if (rollups === "v2") expect(run.stdout).toContain(`input ${victim.advance.index}: outputs Merkle root: the node recorded 0x${"11".repeat(32)}, libcmt computed 0x`);
    expect(run.stdout).toMatch(/\d+ difference\(s\) between libcmt and the node/);
  });
});
