/**
 * Sessions of libcmt's mock driver (@cartesi/rollup on a host): the requests written as the files the
 * mock reads (an advance as the ABI-encoded `EvmAdvance` call a v2 node feeds the machine, an inspect as its
 * raw payload), the dapp run over them with DAPP_TRANSPORT=libcmt, and what libcmt wrote back read from
 * the files beside them: each output (ABI-encoded, as it enters the outputs tree), report and exception,
 * and the outputs Merkle root libcmt computed when the dapp accepted the request.
 *
 * What the mock does, read from its source (io-mock.c, libcmt 0.18): CMT_INPUTS lists `<reason>:<path>`
 * separated by commas (reason 0 an advance, 1 an inspect); a path is at most 127 characters, and its
 * stem, up to the first `.`, names the files written for it (`<stem>.output-N.bin`, `.report-N.bin`,
 * `.exception-N.bin`, `.outputs_merkle_root.bin`); it reads each file only when the request is due, into a
 * 2 MiB buffer. It cannot go on after a rejected request (no machine to revert), so a rejection or an
 * exception must end its session: `runMockSessions` starts a new process after each (expected or not), and the dapp carries
 * the outputs tree across in DAPP_OUTPUTS_TREE_FILE and its state in its SQLite file, as the machine's
 * memory and drive would.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";

/**
 * One request as the mock reads it. An advance is the ABI-encoded `EvmAdvance` call a v2 node feeds the
 * machine, encoded by the caller (devnode/v2/inputs.ts, `encodeEvmAdvance`): the toolkit imports no other
 * room, and one encoder is enough.
 */
export type MockRequest =
  | { kind: "advance"; evmAdvance: Hex }
  | { kind: "inspect"; payload: Hex };

/** What libcmt wrote for one request. */
export interface MockAnswer {
  outputs: Hex[];
  reports: Hex[];
  exceptions: Hex[];
  /** Written when the dapp accepted the request: the outputs tree's root after it. */
  outputsRoot: Hex | null;
}

export interface MockSessionResult {
  /** One per request given, in order; a request the session never reached has nothing written. */
  answers: MockAnswer[];
  /** The sessions run, with their exit codes and what each printed on stderr. */
  sessions: { first: number; requests: number; exitCode: number | null; stderr: string }[];
}

export interface MockSessionOptions {
  /** A folder with no `.` or `,` in its path (the mock cuts file names at both). */
  dir: string;
  requests: readonly MockRequest[];
  /** Whether the session must end after request `i`: a rejection or an exception is expected there. */
  endsSession: (i: number) => boolean;
  /** The dapp's argv (`node dist/dapp/main.js`, or the sources through tsx). */
  command: readonly string[];
  cwd: string;
  /** The dapp's configuration (DAPP_ADMINS, DAPP_DB_PATH...); the transport's variables are set here. */
  env: Record<string, string>;
}

/** CMT_INPUTS is one environment variable, and Linux takes at most 128 KiB in one: a session's list stays under. */
const MAX_INPUTS_LIST = 120 * 1024;

/** The mock's buffer for one request; a longer file is refused by the mock (and by a real machine's 2 MiB). */
const MOCK_MAX_REQUEST_BYTES = 2 * 1024 * 1024;

export class MockSessionError extends Error {
  override readonly name = "MockSessionError";
}

/**
 * Writes every request's file, then runs the dapp over them in as many sessions as the rejections and
 * exceptions expected (and the environment's size) ask for. Settles when the last session ends.
 */
export async function runMockSessions(options: MockSessionOptions): Promise<MockSessionResult> {
  const { dir, requests } = options;
  if (options.command.length === 0) throw new MockSessionError("the dapp command is empty");
  if (/[.,]/.test(dir)) throw new MockSessionError(`libcmt's mock cannot use the folder ${dir}: its path must have no "." or ","`);
  const stems = requests.map((request, i) => join(dir, `${request.kind === "advance" ? "advance" : "inspect"}-${String(i).padStart(6, "0")}`));
  if ((stems[0] ?? "").length + 4 > 127) throw new MockSessionError(`libcmt's mock takes paths of at most 127 characters: ${dir} is too long`);
  requests.forEach((request, i) => writeMockRequest(`${stems[i]}.bin`, request));

  const sessions: MockSessionResult["sessions"] = [];
  let start = 0;
  while (start < requests.length) {
    const list = [mockEntry(`${stems[start]}.bin`, requests[start] as MockRequest)];
    let length = list[0]?.length ?? 0;
    let end = start;
    while (end < requests.length - 1 && !options.endsSession(end)) {
      const next = mockEntry(`${stems[end + 1]}.bin`, requests[end + 1] as MockRequest);
      if (length + 1 + next.length > MAX_INPUTS_LIST) break;
      list.push(next);
      length += 1 + next.length;
      end++;
    }
    const run = await runOne(options, list);
    // A request the dapp did not accept ends the session wherever it comes (the mock cannot go on after
    // it): the next session starts after the first one without a root, planned or not.
    let reached = start;
    while (reached <= end && existsSync(`${stems[reached]}.outputs_merkle_root.bin`)) reached++;
    const last = Math.min(reached, end);
    sessions.push({ first: start, requests: last - start + 1, ...run });
    start = last + 1;
  }
  return { answers: stems.map(readAnswer), sessions };
}

/** Writes one request as the file the mock reads; `mockEntry` names it in CMT_INPUTS. */
export function writeMockRequest(path: string, request: MockRequest): void {
  // Buffer's own hex: the toolkit imports nothing of common/ (docs/layout.md).
  const bytes = Buffer.from((request.kind === "advance" ? request.evmAdvance : request.payload).slice(2), "hex");
  if (bytes.length > MOCK_MAX_REQUEST_BYTES) throw new MockSessionError(`${path}: ${bytes.length} bytes, over the mock's ${MOCK_MAX_REQUEST_BYTES}`);
  writeFileSync(path, bytes);
}

/** `<reason>:<path>`, as CMT_INPUTS lists a request: reason 0 for an advance, 1 for an inspect. */
export function mockEntry(path: string, request: MockRequest): string {
  return `${request.kind === "advance" ? 0 : 1}:${path}`;
}

/** One session of the mock: the dapp on libcmt over `entries` (CMT_INPUTS, their files written); it exits when they run out. */
function runOne(options: MockSessionOptions, entries: readonly string[]): Promise<{ exitCode: number | null; stderr: string }> {
  const [file, ...args] = options.command as [string, ...string[]];
  // Only what the dapp is given: a ROLLUP_HTTP_SERVER_URL from the caller's shell would make it refuse to start.
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", ...options.env, DAPP_TRANSPORT: "libcmt", CMT_INPUTS: entries.join(",") };
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      // The tail is what explains a failure; a long run of mock chatter is not kept whole.
      stderr = (stderr + chunk).slice(-16_384);
    });
    child.on("error", reject);
    child.on("close", (exitCode) => resolve({ exitCode, stderr }));
  });
}

function readAnswer(stem: string): MockAnswer {
  return { outputs: numbered(stem, "output"), reports: numbered(stem, "report"), exceptions: numbered(stem, "exception"), outputsRoot: readHex(`${stem}.outputs_merkle_root.bin`) };
}

function numbered(stem: string, what: string): Hex[] {
  const found: Hex[] = [];
  for (let n = 0; ; n++) {
    const value = readHex(`${stem}.${what}-${n}.bin`);
    if (value === null) return found;
    found.push(value);
  }
}

function readHex(path: string): Hex | null {
  // Buffer's own hex, as in writeMockRequest: no common/ here.
  return existsSync(path) ? `0x${readFileSync(path).toString("hex")}` : null;
}
