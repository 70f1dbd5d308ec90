/**
 * `npm run replay -- file.jsonl [--sender N|0xaddress]`: sends the inputs of a JSON Lines file in order.
 * Each line is `{"sender"?: N | "0x...", "input": {type, params}}` or a raw input `{type, params}`; blank
 * lines and lines starting with `#` are skipped. The whole file is parsed before anything is sent. Prints
 * one line per input and a summary; exits 0 when every input was accepted, 1 otherwise.
 */
import { readFileSync } from "node:fs";
import { loadEndpoints, parseArgs, parseSender, runScript, UsageError } from "./lib/cli.ts";
import { startProgress } from "../toolkit/progress.ts";
import { parseReplayFile, type ReplayStep } from "./lib/replay-file.ts";
import { decodePayload, RollupClient } from "./lib/rollup-client.ts";

const USAGE = "npm run replay -- file.jsonl [--sender N|0xaddress]";

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

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--sender"]);
  if (positional.length !== 1) throw new UsageError("expected one file");
  const file = positional[0] as string;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const steps = parseReplayFile(text, parseSender(options.get("--sender") ?? 0, "--sender"));
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
}, USAGE);
