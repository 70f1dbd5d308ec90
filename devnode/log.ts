/**
 * The devnode's log: plain `[devnode] ...` lines for a terminal (the default), or, with
 * `LOG_FORMAT=json`, pino JSON lines like the api's (docs/operations.md), for a log collector. Errors
 * (a validator's mismatch among them) go to stderr either way, at level error.
 */
import { destination, pino } from "pino";

/** One line of the ordinary log, as the parts of the devnode take it (main.ts gives them the logger's info). */
export type Log = (message: string) => void;

export const LOG_FORMATS = ["plain", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface DevnodeLog {
  info(message: string): void;
  error(message: string): void;
}

export function createDevnodeLog(format: LogFormat): DevnodeLog {
  if (format === "plain") {
    return {
      info: (message) => console.log(`[devnode] ${message}`),
      error: (message) => console.error(`[devnode] ${message}`),
    };
  }
  const options = { base: { service: "devnode" }, timestamp: pino.stdTimeFunctions.isoTime };
  const out = pino(options, destination({ fd: 1, sync: true }));
  const err = pino(options, destination({ fd: 2, sync: true }));
  return {
    info: (message) => out.info(message),
    error: (message) => err.error(message),
  };
}
