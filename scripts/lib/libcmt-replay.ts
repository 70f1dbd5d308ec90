/**
 * Replays a recorded input log (scripts/lib/input-log.ts) through the dapp on libcmt's mock driver
 * (toolkit/libcmt-mock.ts) and compares what libcmt wrote with what the node recorded: each input's
 * verdict, every output (on v1 a notice's payload inside libcmt's `Notice(bytes)`; on v2 the output as
 * encoded in the tree), every report, the outputs Merkle root libcmt computed after each accepted input
 * (v2, whose tree libcmt builds), and the inspects' answers. Libcmt is Cartesi's own guest code, so this
 * is Cartesi's judgement of the devnode's record, not the devnode's judgement of itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { decodeNotice } from "../../devnode/v2/outputs.ts";
import { runMockSessions, type MockAnswer, type MockRequest } from "../../toolkit/libcmt-mock.ts";
import { evmAdvanceOf, type InputLog, type LoggedAdvance, type LoggedInspect } from "./input-log.ts";

export interface ReplayDifference {
  /** `input 7` or `inspect 2`. */
  where: string;
  what: string;
}

export interface LibcmtReplayResult {
  differences: ReplayDifference[];
  sessions: number;
  /** Where the session files are, when kept. */
  dir: string | undefined;
}

export interface LibcmtReplayOptions {
  /** The dapp's argv and working folder. */
  command: readonly string[];
  cwd: string;
  /** The permanent admins the node's dapp was started with: part of its configuration, not of the chain. */
  admins: string;
  /** Keep the session folder (requests, everything libcmt wrote, the dapp's database) for a look. */
  keep?: boolean;
}


export async function replayThroughLibcmt(log: InputLog, options: LibcmtReplayOptions): Promise<LibcmtReplayResult> {
  const dir = mkdtempSync(join(tmpdir(), "libcmt-replay-"));
  try {
    const requests: MockRequest[] = [
      ...log.advances.map(({ advance }): MockRequest => ({ kind: "advance", evmAdvance: evmAdvanceOf(log.chainId, log.application, advance) })),
      ...log.inspects.map(({ inspect }): MockRequest => ({ kind: "inspect", payload: inspect.payload })),
    ];
    const accepted = (i: number): boolean => {
      const advance = log.advances[i];
      if (advance !== undefined) return advance.expected.status === "ACCEPTED";
      return log.inspects[i - log.advances.length]?.expected.status === "Accepted";
    };
    const result = await runMockSessions({
      dir,
      requests,
      endsSession: (i) => !accepted(i),
      command: options.command,
      cwd: options.cwd,
      env: { DAPP_ADMINS: options.admins, DAPP_DB_PATH: join(dir, "dapp.sqlite"), DAPP_OUTPUTS_TREE_FILE: join(dir, "outputs-tree.bin") },
    });
    const differences: ReplayDifference[] = [];
    log.advances.forEach((advance, i) => differences.push(...compareAdvance(log, advance, result.answers[i] as MockAnswer)));
    log.inspects.forEach((inspect, k) => differences.push(...compareInspect(k, inspect, result.answers[log.advances.length + k] as MockAnswer)));
    for (const [n, session] of result.sessions.entries()) {
      if (session.exitCode !== 0) {
        const last = session.stderr.trim().split("\n").filter((line) => !line.includes("no revert for the mock")).slice(-3).join(" | ");
        const span = `requests ${session.first}..${session.first + session.requests - 1}`;
        differences.push({ where: `session ${n + 1} (${span})`, what: `the dapp exited with code ${session.exitCode}: ${last}` });
      }
    }
    return { differences, sessions: result.sessions.length, dir: options.keep === true ? dir : undefined };
  } finally {
    if (options.keep !== true) rmSync(dir, { recursive: true, force: true });
  }
}

function verdictOf(answer: MockAnswer): "ACCEPTED" | "REJECTED" | "EXCEPTION" {
  if (answer.exceptions.length > 0) return "EXCEPTION";
  return answer.outputsRoot === null ? "REJECTED" : "ACCEPTED";
}

function compareAdvance(log: InputLog, { advance, expected }: LoggedAdvance, answer: MockAnswer): ReplayDifference[] {
  const where = `input ${advance.index}`;
  const found: ReplayDifference[] = [];
  const verdict = verdictOf(answer);
  if (verdict !== expected.status) found.push({ where, what: `the node recorded ${expected.status}, the dapp on libcmt ${verdict}` });
  // A rejected input's outputs never reach the tree: the machine reverts them (libcmt's mock writes them anyway).
  if (expected.status === "ACCEPTED") {
    if (log.rollups === "v2") found.push(...compareLists(where, "output", expected.outputs ?? [], answer.outputs));
    else found.push(...compareLists(where, "notice", expected.notices ?? [], answer.outputs.map(noticePayload)));
  }
  found.push(...compareLists(where, "report", expected.reports, answer.reports));
  if (log.rollups === "v2" && expected.status === "ACCEPTED" && expected.outputsRoot !== undefined && answer.outputsRoot !== expected.outputsRoot) {
    found.push({ where, what: `outputs Merkle root: the node recorded ${expected.outputsRoot}, libcmt computed ${answer.outputsRoot ?? "none"}` });
  }
  return found;
}

function compareInspect(k: number, { expected }: LoggedInspect, answer: MockAnswer): ReplayDifference[] {
  const where = `inspect ${k}`;
  const found: ReplayDifference[] = [];
  const status = { ACCEPTED: "Accepted", REJECTED: "Rejected", EXCEPTION: "Exception" }[verdictOf(answer)];
  if (status !== expected.status) found.push({ where, what: `the node answered ${expected.status}, the dapp on libcmt ${status}` });
  found.push(...compareLists(where, "report", expected.reports, answer.reports));
  const exception = answer.exceptions[0] ?? null;
  if (expected.exception !== exception) found.push({ where, what: `exception: the node gave ${brief(expected.exception)}, libcmt wrote ${brief(exception)}` });
  return found;
}

/** The first difference between two lists of payloads, or their lengths when one is a prefix of the other. */
function compareLists(where: string, what: string, recorded: readonly Hex[], written: readonly Hex[]): ReplayDifference[] {
  for (let n = 0; n < Math.min(recorded.length, written.length); n++) {
    if (recorded[n] !== written[n]) return [{ where, what: `${what} ${n} differs: the node recorded ${brief(recorded[n] ?? null)}, libcmt wrote ${brief(written[n] ?? null)}` }];
  }
  if (recorded.length !== written.length) return [{ where, what: `the node recorded ${recorded.length} ${what}(s), libcmt wrote ${written.length}` }];
  return [];
}

/** A v1 notice is its payload; libcmt writes it as the `Notice(bytes)` call that enters the tree. */
function noticePayload(output: Hex): Hex {
  return (decodeNotice(output)?.toLowerCase() as Hex | undefined) ?? output;
}

function brief(value: Hex | null): string {
  if (value === null) return "none";
  const bytes = (value.length - 2) / 2;
  return value.length > 82 ? `${value.slice(0, 42)}…${value.slice(-16)} (${bytes} bytes)` : value;
}
