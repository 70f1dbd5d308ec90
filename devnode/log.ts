/**
 * The devnode's log: plain `[<label>] ...` lines for a terminal (the default), or, with
 * `LOG_FORMAT=json`, pino JSON lines like the api's (docs/operations.md), for a log collector. Errors
 * (a validator's mismatch among them) go to stderr either way, at level error. The label
 * (DEVNODE_LOG_LABEL) names the node: `devnode` for the stack's node, `member-2` or `reader-2` for a
 * Quorum member or a reader, so a line that names a liar says which node names it.
 */
import { inspect } from "node:util";
import { destination, pino } from "pino";

/** One line of the ordinary log, as the parts of the devnode take it (main.ts gives them the logger's info). */
export type Log = (message: string) => void;

export const LOG_FORMATS = ["plain", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The label of a node the configuration names no other way. */
export const DEFAULT_LOG_LABEL = "devnode";

export interface DevnodeLog {
  info(message: string): void;
  error(message: string): void;
}

export function createDevnodeLog(format: LogFormat, label: string = DEFAULT_LOG_LABEL): DevnodeLog {
  if (format === "plain") {
    return {
      info: (message) => console.log(`[${label}] ${message}`),
      error: (message) => console.error(`[${label}] ${message}`),
    };
  }
  const options = { base: { service: "devnode", node: label }, timestamp: pino.stdTimeFunctions.isoTime };
  const out = pino(options, destination({ fd: 1, sync: true }));
  const err = pino(options, destination({ fd: 2, sync: true }));
  return {
    info: (message) => out.info(message),
    error: (message) => err.error(message),
  };
}

/** A server's unexpected failure as one error line: what failed, and the error with its stack. */
export function unexpected(logError: Log, what: string, error: unknown): void {
  logError(`${what}: ${inspect(error)}`);
}
