/**
 * `createApi(services)`: the attestation HTTP API as a hono app. One sub-app per resource, mounted with
 * `app.route()`; one `onError` that maps every failure to `{success: false, error}`.
 */
import { SealError } from "../common/seal.ts";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { ApiError, errorBody } from "./errors.ts";
import { requestLogging } from "./log.ts";
import { openApiDocument, openApiRoute } from "./openapi.ts";
import { router } from "./operations.ts";
import { clientAddress, type ClientAddressOf } from "./rate-limit.ts";
import { INPUT_INDEX_HEADER, MIN_INPUT_INDEX_HEADER, READ_FALLBACK_HEADER, readConsistency } from "./rollup/read-context.ts";
import { adminRoutes } from "./routes/admin.ts";
import { attestationRoutes } from "./routes/attestations.ts";
import { attestorRoutes } from "./routes/attestors.ts";
import { nullifierKeyRoutes } from "./routes/nullifier-keys.ts";
import { authRoutes } from "./routes/auth.ts";
import { graphqlRoutes } from "./routes/graphql.ts";
import { attestationDataRoutes } from "./routes/data.ts";
import { grantRoutes } from "./routes/grants.ts";
import { healthRoutes } from "./routes/health.ts";
import { proofRoutes } from "./routes/proofs.ts";
import { receiptRoutes } from "./routes/receipts.ts";
import { schemaRoutes } from "./routes/schemas.ts";
import { validityRoutes } from "./routes/validity.ts";
import { keyRoutes } from "./routes/keys.ts";
import type { ApiServices } from "./services.ts";

export interface ApiOptions {
  /** Where unexpected faults are logged (never sent to the client). */
  logError?: (error: unknown, c: Context) => void;
}

/** The rate-limit key of a request hono serves (api/rate-limit.ts, clientAddress). */
export function clientAddressResolver(trustProxy: boolean): ClientAddressOf {
  return (c) => {
    let peer: string | undefined;
    try {
      peer = getConnInfo(c).remote.address;
    } catch {
      // app.request() in tests has no socket: all such calls count as one client.
    }
    return clientAddress(trustProxy, c.req.header("x-forwarded-for"), peer);
  };
}

/** Behind a load balancer, which replica answered: for operators and the replica tests. */
export const REPLICA_HEADER = "X-Api-Replica";

/** The replica an answer names in X-Api-Replica, or undefined for a lone api (API_REPLICA left at `api`). */
export function answeringReplica(services: ApiServices): string | undefined {
  return services.config.replica === "api" ? undefined : services.config.replica;
}

/** Headers a browser reads on a cross-origin answer: CORS lets every origin read every answer. */
const EXPOSED_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "X-Request-Id", REPLICA_HEADER, INPUT_INDEX_HEADER, READ_FALLBACK_HEADER];
/** What every answer but a preflight's carries for CORS (here, and on kept answers: api/graphql/kept-listener.ts). */
export const CORS_HEADERS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED_HEADERS.join(",") } as const;

export function createApi(services: ApiServices, options: ApiOptions = {}) {
  const clientOf = clientAddressResolver(services.config.trustProxy);
  const logError =
    options.logError ??
    ((error: unknown, c: Context) =>
      services.logger.error({ err: error, reqId: c.get("requestId"), method: c.req.method, path: c.req.path }, "unexpected fault"));

  const app = router();
  app.use("*", requestLogging(services.logger));
  const replica = answeringReplica(services);
  if (replica !== undefined) {
    // What the process answers beside the api (/metrics, the explorer) names it too (api/main.ts).
    app.use("*", async (c, next) => {
      await next();
      c.res.headers.set(REPLICA_HEADER, replica);
    });
  }
  app.use("*", services.metrics.middleware);
  const preflight = cors({ origin: "*", allowHeaders: ["Authorization", "Content-Type", MIN_INPUT_INDEX_HEADER], allowMethods: ["GET", "POST", "DELETE", "OPTIONS"], exposeHeaders: EXPOSED_HEADERS });
  app.use("*", async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight(c, next);
    // hono's cors sets these on `c.res` before the route answers, which makes every answer be copied into
    // a full WHATWG Response (a fifth of a kept GraphQL answer's cost, measured); headers prepared on the
    // context go into the answer as it is made.
    for (const [name, value] of Object.entries(CORS_HEADERS)) c.header(name, value);
    await next();
  });
  // Read-your-writes: what a request's reads must see, and the headers that say what happened to it.
  app.use("*", readConsistency());
  // Each router declares full paths (api/openapi.ts lists the same declarations for the document).
  app.route("/", healthRoutes(services, clientOf));
  app.route("/", schemaRoutes(services, clientOf));
  app.route("/", adminRoutes(services, clientOf));
  app.route("/", attestorRoutes(services, clientOf));
  app.route("/", nullifierKeyRoutes(services, clientOf));
  app.route("/", attestationRoutes(services, clientOf));
  app.route("/", attestationDataRoutes(services, clientOf));
  app.route("/", proofRoutes(services, clientOf));
  app.route("/", receiptRoutes(services, clientOf));
  app.route("/", validityRoutes(services, clientOf));
  app.route("/", keyRoutes(services, clientOf));
  app.route("/", grantRoutes(services, clientOf));
  app.route("/", authRoutes(services, clientOf));
  app.route("/", graphqlRoutes(services, clientOf));
  const document = openApiDocument(services.version);
  app.openapi(openApiRoute, (c) => c.json(document, 200));

  app.notFound((c) =>
    c.json(errorBody(new ApiError("NOT_FOUND", `No route for ${c.req.method} ${c.req.path}`)), 404),
  );
  app.onError((thrown, c) => {
    // The shared sealing code says what went wrong in the specification's codes, outside the api's types.
    const error = thrown instanceof SealError ? new ApiError(thrown.code, thrown.message, thrown.details) : thrown;
    if (error instanceof ApiError) {
      for (const [k, v] of Object.entries(error.headers)) c.header(k, v);
      if (error.code === "INTERNAL_ERROR") logError(error, c);
      return c.json(errorBody(error), error.status);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // hono's own 4xx (e.g. a body it could not read): a client error, reported in our shape.
      return c.json(
        errorBody(new ApiError("INVALID_REQUEST", error.message || "Invalid request", { field: "body", issue: error.message })),
        400,
      );
    }
    logError(error, c);
    return c.json(errorBody(new ApiError("INTERNAL_ERROR", "Internal server error")), 500);
  });
  return app;
}
