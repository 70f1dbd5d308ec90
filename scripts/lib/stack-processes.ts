/**
 * The processes a piece of the stack stands for: its process group (each piece is started as the leader
 * of one) and, on Linux, every descendant, read from /proc, so that one that left the group (a daemon's
 * setsid, a detached child) is found too. The supervisor (scripts/lib/stack-supervisor.ts) ends them all
 * when it stops a piece; the tests check that nothing is left.
 */
import { readdirSync, readFileSync } from "node:fs";

/** A process as /proc shows it: its start time tells it from a later one that got the same pid. */
export interface ProcessId {
  pid: number;
  startTime: string;
}

interface Stat extends ProcessId {
  ppid: number;
  pgid: number;
}

/** /proc/<pid>/stat: the fields after the command (which may hold spaces and parentheses). */
function statOf(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is the state (3rd field), so field n is fields[n - 3]; a zombie has ended already.
    if (fields[0] === "Z") return undefined;
    return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

function allProcesses(): Stat[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  return names.filter((name) => /^\d+$/.test(name)).flatMap((name) => statOf(Number(name)) ?? []);
}

/** Every live process of the group `pgid` (its leader included) and every descendant of them. */
export function processesOf(pgid: number): ProcessId[] {
  const all = allProcesses();
  const children = new Map<number, Stat[]>();
  for (const stat of all) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const found = new Map<number, Stat>();
  const visit = (stat: Stat): void => {
    if (found.has(stat.pid)) return;
    found.set(stat.pid, stat);
    for (const child of children.get(stat.pid) ?? []) visit(child);
  };
  for (const stat of all) if (stat.pgid === pgid || stat.pid === pgid) visit(stat);
  return [...found.values()].map(({ pid, startTime }) => ({ pid, startTime }));
}

/** Still the process it was (not ended, and its pid not taken by another). */
export function isAlive(known: ProcessId): boolean {
  const stat = statOf(known.pid);
  return stat !== undefined && stat.startTime === known.startTime;
}

/** Sends `signal` to the group, ignoring a group already gone. */
export function signalGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** Sends SIGKILL to each process still alive of `processes` (ones that left the group). */
export function killStragglers(processes: readonly ProcessId[]): ProcessId[] {
  const alive = processes.filter(isAlive);
  for (const straggler of alive) {
    try {
      process.kill(straggler.pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  }
  return alive;
}

/** Whether any process of the group is left (a zombie leader counts until its parent reaps it). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
