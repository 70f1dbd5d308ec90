/**
 * The api's log (docs/operations.md): pino, one logger made at start from LOG_LEVEL and LOG_FORMAT and
 * handed to what logs. `json` writes JSON lines for a log collector (the api's default: production runs it
 * alone); `plain` writes one readable line per event (`npm start` sets it, beside the devnode's and the
 * dapp's lines). Every request gets an id (the client's sane `X-Request-Id`, else a new one), answered in
 * `X-Request-Id` and written on its lines, so a claim can be followed from its request to its input index
 * and notice, in either format.
 */
import { createMiddleware } from "hono/factory";
import { destination, pino, type DestinationStream, type Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "plain"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export type ApiLogger = Logger;

export interface RequestIdVariables {
  requestId: string;
}

const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
/** pino's own fields, said once at the start of a plain line (or not at all). */
const FRAME = new Set(["level", "time", "pid", "hostname", "service", "replica", "msg", "err"]);

function plainValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One JSON record as a plain line: `[api] INFO request method=GET route=/api/core/claim status=200 ms=35.2
 * reqId=...`. An error adds its type and message, and at level error its stack on the lines below, which
 * is what a person reading a terminal needs to find the fault.
 */
export function plainLogLine(record: Record<string, unknown>): string {
  const who = typeof record.replica === "string" ? `[${record.replica}]` : "[api]";
  const level = LEVEL_NAMES[Number(record.level)] ?? String(record.level);
  const fields = Object.entries(record)
    .filter(([key]) => !FRAME.has(key))
    .map(([key, value]) => `${key}=${plainValue(value)}`);
  let line = [who, level, String(record.msg ?? ""), ...fields].filter((part) => part !== "").join(" ");
  const err = record.err as { type?: unknown; message?: unknown; stack?: unknown } | undefined;
  if (err !== undefined && err !== null) {
    line += ` err=${plainValue(`${String(err.type ?? "Error")}: ${String(err.message ?? "")}`)}`;
    if (Number(record.level) >= 50 && typeof err.stack === "string") line += `\n${err.stack.split("\n").slice(1).join("\n")}`;
  }
  return `${line}\n`;
}

/** A destination that turns pino's JSON lines into plain ones before they reach `out`. */
function plainDestination(out: DestinationStream): DestinationStream {
  return {
    write(chunk: string) {
      for (const text of chunk.split("\n")) {
        if (text === "") continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(text) as Record<string, unknown>;
        } catch {
          out.write(`${text}\n`);
          continue;
        }
        out.write(plainLogLine(record));
      }
    },
  };
}

/**
 * Standard output, written once per turn of the event loop: the lines of every request answered in one turn
 * go out in one write. Under load a turn answers many requests, and a write per line cost more than the
 * line (about a tenth of a kept GraphQL answer's time). A line waits for the end of its turn, never longer;
 * the lines of the last turn are written when the process exits. A SIGKILL loses at most that turn's lines.
 * One per process: every logger made here shares it, so their lines keep their order.
 */
let stdoutBatch: DestinationStream | undefined;
export function turnBatchedStdout(): DestinationStream {
  stdoutBatch ??= batchedStdout();
  return stdoutBatch;
}

function batchedStdout(): DestinationStream {
  const out = destination({ fd: 1, sync: true });
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join("");
    pending = [];
    out.write(text);
  };
  process.on("exit", flush);
  return {
    write(chunk: string) {
      pending.push(chunk);
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
  };
}

export function createApiLogger(level: LogLevel, options: { format?: LogFormat; destination?: DestinationStream; replica?: string } = {}): ApiLogger {
  const replica = options.replica ?? "api";
  // Replicas write into one log stream: each line names the replica that wrote it.
  const base = replica === "api" ? { service: "api" } : { service: "api", replica };
  const pinoOptions = { level, base, timestamp: pino.stdTimeFunctions.isoTime };
  const out = options.destination ?? turnBatchedStdout();
  return pino(pinoOptions, options.format === "plain" ? plainDestination(out) : out);
}

/** Ids a client may choose: short tokens, so a header can neither flood a log nor forge its structure. */
const CLIENT_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** A request's id: the one the client sent in `X-Request-Id` when it is sane, else a new one. */
export function requestIdOf(offered: string | undefined): string {
  return offered !== undefined && CLIENT_ID_RE.test(offered) ? offered : crypto.randomUUID();
}

export interface RequestLine {
  reqId: string;
  method: string;
  route: string;
  status: number;
  /** Since the request arrived, rounded to a tenth. */
  ms: number;
}

/** A request's line, once answered. */
export function logRequest(logger: ApiLogger, line: RequestLine): void {
  // A load balancer's health checks come every half second: worth a line only when debugging.
  if (line.route === "/healthcheck" && line.status === 200) logger.debug(line, "request");
  else logger.info(line, "request");
}

/**
 * Sets the request id (answered in `X-Request-Id`), then logs the request once answered: method, route
 * pattern, status, time. Put it first, so every answer is logged, errors included.
 */
export function requestLogging(logger: ApiLogger) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
    const reqId = requestIdOf(c.req.header("x-request-id"));
    c.set("requestId", reqId);
    c.header("X-Request-Id", reqId);
    const started = performance.now();
    await next();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    logRequest(logger, { reqId, method: c.req.method, route: c.req.routePath, status: c.res.status, ms });
  });
}
