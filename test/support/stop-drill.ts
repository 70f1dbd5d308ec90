/**
 * The stop drill (issue 49; docs/operations.md, "Stopping"): `npm start` as an operator runs it, stopped from
 * outside on a machine the drill loads itself, then a look at what is left. Used by
 * test/devnode/stack-lifeline.e2e.test.ts (once per way) and by `npm run drill:stop` (many times in a row,
 * with figures).
 *
 * Two ways to end the stack:
 * - `sigkill`: the supervisor's own pid gets SIGKILL (the OOM killer, `kill -9`): nothing of it runs after;
 * - `term-then-kill`: SIGTERM to npm's whole process group, SIGKILL to it 2 s later, as a process manager
 *   stops a service (systemd's KillMode=mixed with a short TimeoutStopSec, a container runtime's grace);
 * - `busy-term-then-kill`: the same, with the supervisor's event loop unable to run at all (it is sent
 *   SIGSTOP first): the TERM is never handled, as with a supervisor busy past the grace.
 * Either way every process the stack started must be gone (zombies count as gone: they hold nothing), and
 * every port it claimed free, within `boundMs` of the last signal.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { loadStartOptions, stackPorts } from "../../scripts/lib/stack-config.ts";
import { isAlive, processesOf, type ProcessId } from "../../scripts/lib/stack-processes.ts";
import { loadCpus, type CpuLoad } from "./cpu-load.ts";
import { compiledDir, freePorts, PROJECT_ROOT, testDappShellCommand } from "./stack.ts";

export type StopWay = "sigkill" | "term-then-kill" | "busy-term-then-kill";

export interface DrillOptions {
  way: StopWay;
  /** `npm start`'s arguments. */
  args: readonly string[];
  /** Runnable CPU burners per core while the stack is stopped (the load the drill adds). */
  loadPerCore: number;
  /** How long after the last signal nothing may be left. */
  boundMs: number;
  /** Told npm's process group once it runs (a caller that is itself interrupted stops that group). */
  onGroup?: (group: number | undefined) => void;
}

export interface DrillResult {
  /** Processes of the stack (pieces, their keepers and children) just before the stop. */
  processes: number;
  /** From the last signal until no process was left, ms (undefined: some were still there at the bound). */
  cleanMs: number | undefined;
  /** What was still alive at the bound: pid and command line. */
  leftover: string[];
  /** Ports of the stack still bound at the bound. */
  boundPorts: number[];
  /** Runnable processes on the machine when the stack was stopped (/proc/stat's procs_running). */
  runnable: number;
  /** The supervisor's last line, when it had time to write one. */
  lastLine: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim().slice(0, 120);
  } catch {
    return "?";
  }
}

/** The process listening on `port`, as ss shows it (for the report). */
function holderOf(port: number): string {
  const shown = spawnSync("ss", ["-Hltnp", `sport = :${port}`], { encoding: "utf8" });
  return shown.status === 0 && shown.stdout.trim() !== "" ? shown.stdout.trim().replace(/\s+/g, " ") : "no listener seen";
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function stopDrill(options: DrillOptions): Promise<DrillResult> {
  const dataDir = mkdtempSync(join(tmpdir(), "stop-drill-"));
  const [chain, node, rollup, api, attestor, index, replicas, redis, publisher, provider, readers, readerRollups] = await freePorts(12);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    CHAIN_PORT: String(chain),
    NODE_PORT: String(node),
    ROLLUP_HTTP_PORT: String(rollup),
    API_PORT: String(api),
    ATTESTOR_PORT: String(attestor),
    INDEX_PORT: String(index),
    API_REPLICA_BASE_PORT: String(replicas),
    REDIS_PORT: String(redis),
    PUBLISHER_PORT: String(publisher),
    DEMO_PROVIDER_PORT: String(provider),
    READER_BASE_PORT: String(readers),
    READER_ROLLUP_BASE_PORT: String(readerRollups),
    // The run's compiled pieces and dapp when there are (test/support/global-setup.ts): what is drilled is the
    // supervisor's stop, not tsx, whose start costs each piece seconds of CPU (issue 51). `npm start` as a
    // user runs it, every piece through tsx, is test/devnode/restart.e2e.test.ts's.
    ...compiledPieces(),
  };
  // Every port the stack claims, as npm start itself computes them.
  const ports = stackPorts(loadStartOptions(env, options.args, PROJECT_ROOT).settings).map((claim) => claim.port);
  // npm leads a process group of its own, as under a terminal or a process manager.
  const npm = spawn("npm", ["start", "--", ...options.args], { cwd: PROJECT_ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  for (const stream of [npm.stdout, npm.stderr]) stream?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const group = npm.pid;
  if (group === undefined) throw new Error("npm start did not start");
  options.onGroup?.(group);
  let load: CpuLoad | undefined;
  let before: ProcessId[] = [];
  try {
    for (const deadline = Date.now() + 240_000; !output.includes("Local stack is up"); await sleep(200)) {
      if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up (exit ${npm.exitCode}):\n${output.slice(-3000)}`);
    }
    before = processesOf(group);
    const supervisor = before.find((p) => commandOf(p.pid).includes("scripts/start.ts") && commandOf(p.pid).startsWith(process.execPath.split("/").pop() ?? "node"));
    load = loadCpus(options.loadPerCore);
    // Let the burners take the run queue before the stop.
    await sleep(1_000);
    // The run queue now (the load average lags it by a minute).
    const runnable = Number(/^procs_running (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1] ?? 0);
    let lastSignalAt: number;
    if (options.way === "sigkill") {
      if (supervisor === undefined) throw new Error(`no supervisor among the stack's processes: ${before.map((p) => commandOf(p.pid)).join("; ")}`);
      process.kill(supervisor.pid, "SIGKILL");
      lastSignalAt = Date.now();
    } else {
      if (options.way === "busy-term-then-kill") {
        if (supervisor === undefined) throw new Error(`no supervisor among the stack's processes: ${before.map((p) => commandOf(p.pid)).join("; ")}`);
        process.kill(supervisor.pid, "SIGSTOP");
      }
      process.kill(-group, "SIGTERM");
      await sleep(2_000);
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // The group had already ended: the stop finished within the 2 s.
      }
      lastSignalAt = Date.now();
    }
    // Until nothing of the stack runs and no port of it is bound, or the bound has passed.
    let cleanMs: number | undefined;
    let leftover: string[] = [];
    let boundPorts: number[] = [];
    for (;;) {
      leftover = before.filter(isAlive).map((p) => `${p.pid} ${commandOf(p.pid)}`);
      boundPorts = [];
      if (leftover.length === 0) for (const port of ports) if (!(await portFree(port))) boundPorts.push(port);
      if (leftover.length === 0 && boundPorts.length === 0) {
        cleanMs = Date.now() - lastSignalAt;
        break;
      }
      if (Date.now() - lastSignalAt > options.boundMs) break;
      await sleep(100);
    }
    // Who holds a port still bound (a process the stack started after it came up, or another program).
    for (const port of boundPorts) leftover.push(`port ${port}: ${holderOf(port)}`);
    const lines = output.trimEnd().split("\n");
    return { processes: before.length, cleanMs, leftover, boundPorts, runnable, lastLine: lines[lines.length - 1] ?? "" };
  } finally {
    load?.stop();
    // Whatever a failed drill left is not left to the next test.
    for (const p of before.filter(isAlive)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Gone.
    }
    options.onGroup?.(undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** STACK_PROCESSES_DIR and DAPP_COMMAND for the run's compiled processes and dapp, or nothing (the sources). */
function compiledPieces(): Record<string, string> {
  const dir = compiledDir();
  return dir === undefined ? {} : { STACK_PROCESSES_DIR: dir, DAPP_COMMAND: testDappShellCommand() };
}
