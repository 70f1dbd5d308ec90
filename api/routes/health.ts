/** Endpoints 1–3: liveness of the api and the health of what it depends on. */
import { Hono } from "hono";
import type { HealthStatus } from "../../common/wire.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { withTimeout } from "../timeout.ts";

const PROBE_TIMEOUT_MS = 2_000;

export function healthcheckRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  return new Hono().get("/healthcheck", rateLimit(services.limiter, "health", clientOf), (c) =>
    c.json({ status: "ok", version: services.version, core_enabled: true }),
  );
}

export function healthRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "health", clientOf);
  return new Hono()
    .get("/status", limited, async (c) => {
      const rollup = await probeRollup(services);
      return c.json({
        success: true,
        data: {
          enabled: true,
          rollupConnected: rollup !== "down",
          dappAddress: services.config.dappAddress.toLowerCase(),
        },
      });
    })
    .get("/health", limited, async (c) => {
      const [rollup, blockchain] = await Promise.all([probeRollup(services), probeChain(services)]);
      return c.json({ success: true, data: { attestor: attestorStatus(rollup, blockchain), rollup, blockchain } });
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
