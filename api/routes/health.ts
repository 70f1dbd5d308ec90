/** Endpoints 1–3: liveness of the api and the health of what it depends on. */
import { createRoute, z } from "@hono/zod-openapi";
import type { HealthStatus } from "../../common/wire.ts";
import { addressOut, envelope, errorResponses, jsonContent, operationTraits, router } from "../operations.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { withTimeout } from "../timeout.ts";

const PROBE_TIMEOUT_MS = 2_000;

const healthStatus = z.enum(["ok", "degraded", "down"]);

export const healthcheckRoute = createRoute({
  method: "get",
  path: "/healthcheck",
  summary: "Liveness of the api (no envelope)",
  ...operationTraits({ group: "health" }),
  responses: {
    200: jsonContent(z.object({ status: z.literal("ok"), version: z.string(), core_enabled: z.boolean() }), "Alive"),
    ...errorResponses({ group: "health" }),
  },
});

export const statusRoute = createRoute({
  method: "get",
  path: "/api/core/status",
  summary: "Whether the core is enabled and the rollup reachable",
  ...operationTraits({ group: "health" }),
  responses: {
    200: jsonContent(envelope(z.object({ enabled: z.boolean(), rollupConnected: z.boolean(), dappAddress: addressOut })), "Status"),
    ...errorResponses({ group: "health" }),
  },
});

export const healthRoute = createRoute({
  method: "get",
  path: "/api/core/health",
  summary: "Health of the attestor, the rollup and the chain: ok | degraded | down",
  ...operationTraits({ group: "health" }),
  responses: {
    200: jsonContent(envelope(z.object({ attestor: healthStatus, rollup: healthStatus, blockchain: healthStatus })), "Health"),
    ...errorResponses({ group: "health" }),
  },
});

export function healthRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "health", clientOf);
  return router()
    .openapi({ ...healthcheckRoute, middleware: [limited] }, (c) =>
      c.json({ status: "ok" as const, version: services.version, core_enabled: true }, 200),
    )
    .openapi({ ...statusRoute, middleware: [limited] }, async (c) => {
      const rollup = await probeRollup(services);
      return c.json(
        {
          success: true as const,
          data: {
            enabled: true,
            rollupConnected: rollup !== "down",
            dappAddress: services.config.dappAddress.toLowerCase(),
          },
        },
        200,
      );
    })
    .openapi({ ...healthRoute, middleware: [limited] }, async (c) => {
      const [rollup, blockchain] = await Promise.all([probeRollup(services), probeChain(services)]);
      return c.json({ success: true as const, data: { attestor: attestorStatus(rollup, blockchain), rollup, blockchain } }, 200);
    });
}

/** The api can read with the rollup alone, and write only with both. */
function attestorStatus(rollup: HealthStatus, blockchain: HealthStatus): HealthStatus {
  if (rollup === "down") return "down";
  if (rollup === "ok" && blockchain === "ok") return "ok";
  return "degraded";
}

async function probeRollup(services: ApiServices): Promise<HealthStatus> {
  try {
    const health = await services.reader.query("health", {}, PROBE_TIMEOUT_MS);
    return health.status === "ok" && health.database === "ok" ? "ok" : "degraded";
  } catch {
    return "down";
  }
}

/** Down when unreachable; degraded on the wrong chain or when the wallet cannot pay for gas. */
async function probeChain(services: ApiServices): Promise<HealthStatus> {
  const client = services.submitter.publicClient;
  try {
    const [chainId, balance] = await withTimeout(
      Promise.all([client.getChainId(), client.getBalance({ address: services.submitter.wallet })]),
      PROBE_TIMEOUT_MS,
      "chain probe",
    );
    return chainId === services.config.chainId && balance > 0n ? "ok" : "degraded";
  } catch {
    return "down";
  }
}
