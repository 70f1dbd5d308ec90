/**
 * `npm run replay`, two ways:
 *
 *   npm run replay -- file.jsonl [--sender N|0xaddress]
 *     sends the inputs of a JSON Lines file in order. Each line is `{"sender"?: N | "0x...", "input":
 *     {type, params}}` or a raw input `{type, params}`; blank lines and lines starting with `#` are skipped.
 *     The whole file is parsed before anything is sent. One line per input and a summary; exit 0 when every
 *     input was accepted, 1 otherwise.
 *
 *   npm run replay -- --libcmt [--log recorded.jsonl] [--save recorded.jsonl] [--queries queries.jsonl]
 *                     [--admins 0x..,0x..] [--bundle] [--keep]
 *     replays a recorded input log (read from the node's reader, or from --log) through the dapp on
 *     libcmt's mock driver, and compares every output, report and outputs Merkle root libcmt wrote with
 *     what the node recorded (scripts/lib/libcmt-replay.ts). --queries: inspect queries (one a line)
 *     answered by the node at the log's end and replayed too. One line per difference and a summary; exit
 *     0 when libcmt agrees with the node on everything, 1 otherwise. The dapp is `tsx dapp/main.ts`,
 *     dist/'s bundle with --bundle, or DAPP_COMMAND (a shell command, as `npm start` takes it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { privateKeyToAccount } from "viem/accounts";
import { DEFAULTS } from "../devnode/config.ts";
import { startProgress } from "../toolkit/progress.ts";
import { loadEndpoints, parseArgs, parseSender, runScript, UsageError } from "./lib/cli.ts";
import { formatInputLog, InputLogError, parseInputLog, readInputLog, type InputLog } from "./lib/input-log.ts";
import { replayThroughLibcmt } from "./lib/libcmt-replay.ts";
import { parseReplayFile, type ReplayStep } from "./lib/replay-file.ts";
import { decodePayload, RollupClient } from "./lib/rollup-client.ts";
import { defaultDappCommand } from "./lib/stack-pieces.ts";
import { messageOf } from "../common/errors.ts";
import { isAddress } from "../common/address.ts";

const USAGE =
  "npm run replay -- file.jsonl [--sender N|0xaddress]\n" +
  "       npm run replay -- --libcmt [--log recorded.jsonl] [--save recorded.jsonl] [--queries queries.jsonl] [--admins 0x..,0x..] [--bundle] [--keep]";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorCode(reports: readonly `0x${string}`[]): string {
  for (const report of reports) {
    const decoded = decodePayload(report);
    if (isObject(decoded) && isObject(decoded["error"])) return String(decoded["error"]["code"]);
  }
  return "";
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${messageOf(error)}`);
  }
}

async function sendInputs(file: string, sender: string): Promise<number> {
  const steps = parseReplayFile(readText(file, "the file"), parseSender(sender, "--sender"));
  const client = new RollupClient(loadEndpoints(process.env));

  // Each transaction is mined before the next is sent, so the inputs keep the file's order.
  const sent: { step: ReplayStep; index: number }[] = [];
  const sending = startProgress({ label: "inputs sent", total: steps.length });
  for (const step of steps) {
    sent.push({ step, index: (await client.addInput(step.input, step.sender)).index });
    sending.tick();
  }
  sending.done();

  const counts = new Map<string, number>();
  const judging = startProgress({ label: "verdicts read", total: sent.length });
  for (const { step, index } of sent) {
    const verdict = await client.waitForVerdict(index);
    judging.tick();
    counts.set(verdict.status, (counts.get(verdict.status) ?? 0) + 1);
    const code = errorCode(verdict.reports);
    console.log(`line ${step.line}: input ${index} ${verdict.status}${code === "" ? "" : ` ${code}`}`);
  }
  judging.done();
  const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  console.log(`${sent.length} input(s) replayed from ${file}: ${summary || "nothing to send"}`);
  return sent.length === (counts.get("ACCEPTED") ?? 0) ? 0 : 1;
}

/** The queries file: one query a line, sent as written (bad ones too: the dapp judges them); blank lines and `#` comments skipped. */
function parseQueries(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** Whom the node's dapp was started with as admins: configuration, so it cannot be read off the chain. */
function adminsOf(given: string | undefined): string {
  const value = given ?? process.env.DAPP_ADMINS;
  if (value !== undefined && value !== "") {
    if (!value.split(",").every((a) => isAddress(a.trim()))) throw new UsageError(`--admins: expected comma-separated 0x addresses, not ${value}`);
    return value;
  }
  // npm start's default: the api's wallet (PRIVATE_KEY) administers the dapp.
  return privateKeyToAccount((process.env.PRIVATE_KEY ?? DEFAULTS.privateKey) as `0x${string}`).address;
}

async function replayLibcmt(options: Map<string, string>, flags: Set<string>): Promise<number> {
  const logFile = options.get("--log");
  const saveFile = options.get("--save");
  const queriesFile = options.get("--queries");
  if (logFile !== undefined && queriesFile !== undefined) throw new UsageError("--queries asks the node: a --log file carries its own inspects");
  const admins = adminsOf(options.get("--admins"));
  let log: InputLog;
  try {
    if (logFile !== undefined) log = parseInputLog(readText(logFile, "the log"));
    else {
      const queries = queriesFile === undefined ? [] : parseQueries(readText(queriesFile, "the queries"));
      log = await readInputLog(new RollupClient(loadEndpoints(process.env)), queries);
    }
  } catch (error) {
    if (error instanceof InputLogError) throw new UsageError(`${logFile ?? "the node's log"}: ${error.message}`);
    throw error;
  }
  if (saveFile !== undefined) writeFileSync(saveFile, formatInputLog(log));
  const source = logFile ?? `the ${log.rollups} node`;
  console.log(`${log.advances.length} input(s) and ${log.inspects.length} inspect(s) from ${source}, through the dapp on libcmt's mock driver`);
  const dappCommand = process.env.DAPP_COMMAND ?? "";
  if (dappCommand !== "" && flags.has("--bundle")) throw new UsageError("--bundle or DAPP_COMMAND: one dapp at a time");
  const command = dappCommand === "" ? defaultDappCommand(flags.has("--bundle")) : ["/bin/sh", "-c", `exec ${dappCommand}`];
  const result = await replayThroughLibcmt(log, { command, cwd: root, admins, keep: flags.has("--keep") });
  for (const d of result.differences) console.log(`${d.where}: ${d.what}`);
  if (result.dir !== undefined) console.log(`session files kept in ${result.dir}`);
  const compared = log.rollups === "v2" ? "outputs, reports and outputs Merkle roots" : "notices and reports";
  if (result.differences.length === 0) {
    console.log(`libcmt agrees with the node: every verdict, ${compared} and inspect answer (${result.sessions} session(s))`);
    return 0;
  }
  console.log(`${result.differences.length} difference(s) between libcmt and the node`);
  return 1;
}

runScript(async () => {
  const { positional, options, flags } = parseArgs(process.argv.slice(2), ["--sender", "--log", "--save", "--queries", "--admins"], ["--libcmt", "--bundle", "--keep"]);
  if (flags.has("--libcmt")) {
    if (positional.length > 0) throw new UsageError(`--libcmt replays a recorded log (--log) or the node's, not ${positional.join(" ")}`);
    if (options.has("--sender")) throw new UsageError("--sender is for sending a file of inputs, not for --libcmt");
    return replayLibcmt(options, flags);
  }
  for (const name of ["--log", "--save", "--queries", "--admins"]) if (options.has(name)) throw new UsageError(`${name} goes with --libcmt`);
  for (const name of ["--bundle", "--keep"]) if (flags.has(name)) throw new UsageError(`${name} goes with --libcmt`);
  if (positional.length !== 1) throw new UsageError("expected one file");
  return sendInputs(positional[0] as string, options.get("--sender") ?? "0");
}, USAGE);
