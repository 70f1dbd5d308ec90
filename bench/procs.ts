/**
 * Child processes of the bench that are not part of startStack: the echo floor, the straight devnode
 * (bench/direct-node.ts) and its dapp. Each runs in its own process group with its output in a log file,
 * and is killed when the bench exits, even on a crash.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  logFile: string;
  exited: Promise<void>;
  /** SIGTERM the group, SIGKILL after `graceMs`, and wait for the exit. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves with the first IPC message that `accept` returns a value for. */
  message<T>(accept: (message: unknown) => T | undefined, timeoutMs?: number): Promise<T>;
}

const living = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of living) signalGroup(child, "SIGKILL");
});

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

export interface SpawnOptions {
  name: string;
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
  /** Open an IPC channel (the child reports readiness and results through process.send). */
  ipc?: boolean;
}

export function spawnChild(options: SpawnOptions): Child {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = openSync(options.logFile, "a");
  const child = spawn(options.file, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    // A file descriptor, not a pipe: a chatty child (one log line per input) never waits on the bench.
    stdio: options.ipc === true ? ["ignore", log, log, "ipc"] : ["ignore", log, log],
    detached: true,
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${options.name}`);
  living.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      living.delete(child);
      resolve();
    });
  });
  return {
    name: options.name,
    process: child,
    pid: child.pid,
    logFile: options.logFile,
    exited,
    async stop(graceMs = 5_000) {
      if (!living.has(child)) return;
      signalGroup(child, "SIGTERM");
      const killer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(killer);
      signalGroup(child, "SIGKILL");
    },
    message<T>(accept: (message: unknown) => T | undefined, timeoutMs = 120_000): Promise<T> {
      return new Promise((resolve, reject) => {
        const onMessage = (message: unknown): void => {
          const value = accept(message);
          if (value === undefined) return;
          cleanup();
          resolve(value);
        };
        const onExit = (): void => {
          cleanup();
          reject(new Error(`${options.name} exited (see ${options.logFile}):\n${tail(options.logFile)}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${options.name} sent no answer within ${timeoutMs} ms (see ${options.logFile})`));
        }, timeoutMs);
        function cleanup(): void {
          clearTimeout(timer);
          child.off("message", onMessage);
          child.off("exit", onExit);
        }
        child.on("message", onMessage);
        child.once("exit", onExit);
      });
    },
  };
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** A field of /proc/<pid>/status in KiB (VmHWM: peak resident set; VmRSS: current). */
export function procStatusKiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (match?.[1] === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}
