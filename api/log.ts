/**
 * The api's structured log (docs/operations.md): JSON lines through pino, one logger made at start from
 * LOG_LEVEL and handed to what logs. Every request gets an id (the client's sane `X-Request-Id`, else a new
 * one), answered in `X-Request-Id` and written on its lines, so a claim can be followed from its request to
 * its input index and notice.
 */
import { createMiddleware } from "hono/factory";
import { pino, type DestinationStream, type Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type ApiLogger = Logger;

export interface RequestIdVariables {
  requestId: string;
}

export function createApiLogger(level: LogLevel, destination?: DestinationStream, replica = "api"): ApiLogger {
  // Replicas write into one log stream: each line names the replica that wrote it.
  const base = replica === "api" ? { service: "api" } : { service: "api", replica };
  const options = { level, base, timestamp: pino.stdTimeFunctions.isoTime };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** Ids a client may choose: short tokens, so a header can neither flood a log nor forge its structure. */
const CLIENT_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Sets the request id (answered in `X-Request-Id`), then logs the request once answered: method, route
 * pattern, status, time. Put it first, so every answer is logged, errors included.
 */
export function requestLogging(logger: ApiLogger) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
    const offered = c.req.header("x-request-id");
    const reqId = offered !== undefined && CLIENT_ID_RE.test(offered) ? offered : crypto.randomUUID();
    c.set("requestId", reqId);
    c.header("X-Request-Id", reqId);
    const started = performance.now();
    await next();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const line = { reqId, method: c.req.method, route: c.req.routePath, status: c.res.status, ms };
    // A load balancer's health checks come every half second: worth a line only when debugging.
    if (c.req.routePath === "/healthcheck" && c.res.status === 200) logger.debug(line, "request");
    else logger.info(line, "request");
  });
}
