/** The replay file format of `npm run replay`: JSON Lines, one input per line (see scripts/replay.ts). */
import { parseJsonArgument, parseSender } from "./cli.ts";
import type { Sender } from "./rollup-client.ts";

export interface ReplayStep {
  line: number;
  sender: Sender;
  input: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses the whole file first, so a bad line stops the replay before anything is sent. */
export function parseReplayFile(text: string, defaultSender: Sender): ReplayStep[] {
  const steps: ReplayStep[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const value = parseJsonArgument(line, `line ${i + 1}`);
    if (isObject(value) && "input" in value) {
      const sender = value["sender"] === undefined ? defaultSender : parseSender(value["sender"], `line ${i + 1}`);
      steps.push({ line: i + 1, sender, input: value["input"] });
    } else {
      steps.push({ line: i + 1, sender: defaultSender, input: value });
    }
  });
  return steps;
}

