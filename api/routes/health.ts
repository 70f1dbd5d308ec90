/** Endpoints 1–3: liveness of the api and the health of what it depends on. */
import { consensusSchema, readConsensus } from "../consensus.ts";
import { readStackStatus } from "../stack-status.ts";
import { createRoute, z } from "@hono/zod-openapi";
import type { Hex } from "viem";
import { LatestClaimReader } from "../rollup/chain-reader.ts";
import type { HealthStatus } from "../../common/wire.ts";
import { addressOut, envelope, errorResponses, id32, jsonContent, operationTraits, router } from "../operations.ts";
import type { Context } from "hono";
import { BALANCER_CHECK_HEADER, rateLimit, type ClientAddressOf } from "../rate-limit.ts";
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
    200: jsonContent(
      envelope(
        z.object({
          enabled: z.boolean(),
          rollupConnected: z.boolean(),
          dappAddress: addressOut,
          // Extensions for operators: how far the dapp is, and the input rate over the last hour.
          processedInputs: z.number().int().nonnegative().nullable().describe("the dapp's health.processed_inputs; null when the rollup does not answer"),
          inputsPerMinute: z
            .array(z.number().int().nonnegative())
            .describe("inputs per minute over the last 60 minutes, oldest first, by block time (from the node's GraphQL; empty when it does not answer)"),
          latestClaim: z
            .object({ epochHash: id32, firstIndex: z.number().int(), lastIndex: z.number().int(), blockNumber: z.number().int() })
            .nullable()
            .describe("the application's latest claim (inputs firstIndex..lastIndex): v1, in its History, with its epoch hash; v2, its last accepted epoch, with its outputs Merkle root as epochHash; null before any, or when the chain does not answer"),
          contracts: z
            .object({ registry: addressOut, gate: addressOut })
            .nullable()
            .describe("extension: the attestation registry (EAS's read interface) and the gate beside the application (docs/eas.md); null when the api knows of none"),
          stack: z
            .array(
              z.object({
                piece: z.string(),
                running: z.boolean(),
                pid: z.number().int().nullable(),
                restarts: z.number().int().nonnegative().describe("times the stack restarted it after it exited on its own"),
                lastExit: z.object({ reason: z.string(), at: z.number().describe("Unix ms") }).nullable(),
              }),
            )
            .nullable()
            .describe("extension: the pieces of the stack this api runs in (npm start), as its supervisor last wrote them (docs/operations.md, \"When a piece dies\"); null outside a stack"),
          receipts: z
            .object({
              signer: addressOut.describe("the address that signs every receipt: the attester to give eas-sdk's verifyOffchainAttestationSignature"),
              domain: z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: z.string() }).nullable().describe("the EIP-712 domain receipts are signed in; null when the api knows no registry (no receipts)"),
            })
            .describe("extension: who signs receipts, and for which chain and registry (docs/receipts.md)"),
          consensus: consensusSchema
            .nullable()
            .describe("extension (v2): who claims the epochs, the Authority or a Quorum, its members and each epoch's votes, as the node says it (docs/quorum.md); null on v1 and when the node does not say"),
          readers: z
            .array(
              z.object({
                url: z.string(),
                kind: z.enum(["reader", "node", "unknown"]),
                health: z.enum(["serving", "down", "not-serving", "stale"]),
                processedInputCount: z.number().int().nonnegative(),
                reason: z.string().nullable(),
              }),
            )
            .describe("extension: the readers inspect reads go to (READ_URLS), as the api last saw each; empty when the node answers reads"),
        }),
      ),
      "Status (processedInputs, inputsPerMinute, latestClaim, contracts and readers are extensions)",
    ),
    ...errorResponses({ group: "health" }),
  },
});

export const healthRoute = createRoute({
  method: "get",
  path: "/api/core/health",
  summary: "Health of the attestor, the rollup and the chain: ok | degraded | down",
  ...operationTraits({ group: "health" }),
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          attestor: healthStatus,
          rollup: healthStatus,
          blockchain: healthStatus,
          tlsAttestor: healthStatus.describe("extension: whether the TLS attestor that proves claims (ATTESTOR_URL) answers: ok or down"),
        }),
      ),
      "Health (tlsAttestor is an extension)",
    ),
    ...errorResponses({ group: "health" }),
  },
});

export function healthRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "health", clientOf);
  // Only behind a trusted proxy, which strips the header from what clients send (api/rate-limit.ts).
  const balancerCheck = (c: Context): boolean => services.config.trustProxy && c.req.header(BALANCER_CHECK_HEADER) !== undefined;
  const liveness = rateLimit(services.limiter, "health", clientOf, balancerCheck);
  // v1: the History's logs on the chain; v2: the node's last accepted epoch (the Authority accepts a claim as it is made).
  const v1Claims = new LatestClaimReader(services.submitter.publicClient, services.config.dappAddress);
  const proofs = services.proofs;
  const blockOf = async (tx: Hex): Promise<number> => Number((await services.submitter.publicClient.getTransactionReceipt({ hash: tx })).blockNumber);
  const claims = { read: () => (proofs.rollups === "v2" ? proofs.reader.latestClaim(blockOf) : v1Claims.read()) };
  return router()
    .openapi({ ...healthcheckRoute, middleware: [liveness] }, (c) =>
      c.json({ status: "ok" as const, version: services.version, core_enabled: true }, 200),
    )
    .openapi({ ...statusRoute, middleware: [limited] }, async (c) => {
      const [rollup, processedInputs, inputsPerMinute, claim, consensus] = await Promise.all([
        probeRollup(services),
        services.reader.query("health", {}, PROBE_TIMEOUT_MS).then(
          (h) => h.processed_inputs,
          () => null,
        ),
        // Bounded like the probes: a hung node must not hold the status past them.
        services.node.recentInputTimes(1000, PROBE_TIMEOUT_MS).then(
          (times) => perMinute(times, services.now()),
          () => [],
        ),
        withTimeout(claims.read(), PROBE_TIMEOUT_MS, "latest claim").catch(() => null),
        services.config.rollups === "v2" ? readConsensus(services.config.rollupUrl, PROBE_TIMEOUT_MS) : Promise.resolve(null),
      ]);
      return c.json(
        {
          success: true as const,
          data: {
            enabled: true,
            rollupConnected: rollup !== "down",
            dappAddress: services.config.dappAddress.toLowerCase(),
            processedInputs,
            inputsPerMinute,
            latestClaim: claim,
            contracts: services.config.contracts === undefined ? null : { registry: services.config.contracts.registry.toLowerCase(), gate: services.config.contracts.gate.toLowerCase() },
            receipts: services.receipts.describe(),
            consensus,
            readers: services.readPool?.readers() ?? [],
            stack: readStackStatus(services.config.dataDir),
          },
        },
        200,
      );
    })
    .openapi({ ...healthRoute, middleware: [limited] }, async (c) => {
      const [rollup, blockchain, tlsAttestor] = await Promise.all([probeRollup(services), probeChain(services), probeTlsAttestor(services)]);
      return c.json({ success: true as const, data: { attestor: attestorStatus(rollup, blockchain), rollup, blockchain, tlsAttestor } }, 200);
    });
}

/** Counts of `times` in each of the 60 minutes before `now`, oldest first. */
export function perMinute(times: readonly number[], now: number): number[] {
  const counts = new Array<number>(60).fill(0);
  for (const t of times) {
    const minutesAgo = Math.floor((now - t) / 60);
    if (minutesAgo >= 0 && minutesAgo < 60) counts[59 - minutesAgo] = (counts[59 - minutesAgo] ?? 0) + 1;
    // A block stamped a moment ahead of the api's clock counts in the current minute.
    else if (minutesAgo < 0 && minutesAgo >= -1) counts[59] = (counts[59] ?? 0) + 1;
  }
  return counts;
}

/** The api can read with the rollup alone, and write only with both. */
function attestorStatus(rollup: HealthStatus, blockchain: HealthStatus): HealthStatus {
  if (rollup === "down") return "down";
  if (rollup === "ok" && blockchain === "ok") return "ok";
  return "degraded";
}

/**
 * attestor-core's HTTP server answers (404) outside its WebSocket path: any answer means it is up. Some
 * of several down is degraded: schemas whose quorum the others still make keep working.
 */
async function probeTlsAttestor(services: ApiServices): Promise<HealthStatus> {
  const up = await Promise.all(
    services.config.attestor.urls.map(async (url) => {
      try {
        await fetch(new URL("/", url.replace(/^ws/, "http")), { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        return true;
      } catch {
        return false;
      }
    }),
  );
  const count = up.filter(Boolean).length;
  return count === up.length ? "ok" : count === 0 ? "down" : "degraded";
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
