/**
 * Starts the attestation API: validates the configuration, opens the port, attaches the WebSocket hub
 * on /ws, follows the dapp's notices, and stops cleanly on SIGINT/SIGTERM.
 */
import { getRequestListener } from "@hono/node-server";
import { createServer, type Server } from "node:http";
import { pathToFileURL } from "node:url";
import { answeringReplica, createApi, REPLICA_HEADER } from "./app.ts";
import { explorerSite, isExplorerPath, loadExplorer } from "./explorer.ts";
import { keptAnswerListener } from "./graphql/kept-listener.ts";
import { ConfigError, loadConfig, type ApiConfig } from "./config.ts";
import { createServices, type ApiServices } from "./services.ts";
import { withTimeout } from "./timeout.ts";
import { WsHub } from "./ws.ts";

export interface RunningApi {
  url: string;
  wsUrl: string;
  port: number;
  services: ApiServices;
  hub: WsHub;
  stop(): Promise<void>;
}

/** `overrides`: what tests give the services instead (createServices): a clock, where the log goes. */
export async function startApi(config: ApiConfig, overrides: Parameters<typeof createServices>[1] = {}): Promise<RunningApi> {
  const services = createServices(config, overrides);
  const hub = new WsHub();
  services.setEventSink((event) => hub.broadcast(event));
  services.setWsClientCount(() => hub.clientCount);
  const app = createApi(services);
  const site = explorerSite(await loadExplorer());

  // Read the notice history before serving (bounded: a node that is still starting must not block us),
  // so the first requests already know the schemas and the key, and events flow from the start.
  await withTimeout(services.follower.sync(), 5_000, "reading the notice history").catch(() => undefined);
  services.follower.start();
  services.readPool?.start();

  // hono serves the api; kept GraphQL answers are sent before it (api/graphql/kept-listener.ts).
  const hono = getRequestListener(processFetch(services, app, site), { hostname: config.host });
  const server: Server = createServer(keptAnswerListener(services, hono));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  hub.attach(server);
  // Idle keep-alive connections stay open longer than clients keep them (undici: 4 s, proxies: 60 s), so the
  // server never closes a connection a client is about to reuse (the client would see "other side closed").
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = `http://${shownHost}:${port}`;

  return {
    url,
    wsUrl: `ws://${shownHost}:${port}/ws`,
    port,
    services,
    hub,
    async stop() {
      await services.follower.stop();
      await services.readPool?.stop();
      await services.attestor.close();
      await services.redis?.close();
      await services.index.close();
      await hub.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections would hold close() open; they carry no work once we are stopping.
        server.closeAllConnections();
      });
    },
  };
}

type Fetch = (request: Request, env: object | undefined) => Response | Promise<Response>;

/**
 * What the process answers: the scrape (`GET /metrics`) and the explorer beside the api, since neither is
 * an operation of the OpenAPI document nor rate limited, and everything else by the api. Behind a balancer
 * the answers beside the api name their replica (X-Api-Replica) as the api's own do.
 */
export function processFetch(services: ApiServices, app: { fetch: Fetch }, site: { fetch: Fetch }): Fetch {
  const replica = answeringReplica(services);
  const named = (response: Response): Response => {
    if (replica !== undefined) response.headers.set(REPLICA_HEADER, replica);
    return response;
  };
  return (request, env) => {
    const path = new URL(request.url).pathname;
    if (path === "/metrics" && request.method === "GET") return metricsResponse(services).then(named);
    return isExplorerPath(path) ? Promise.resolve(site.fetch(request, env)).then(named) : app.fetch(request, env);
  };
}

async function metricsResponse(services: ApiServices): Promise<Response> {
  return new Response(await services.metrics.text(), { headers: { "content-type": services.metrics.registry.contentType } });
}

async function main(): Promise<void> {
  let config: ApiConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const api = await startApi(config);
  const { logger } = api.services;
  logger.info({ url: api.url, ws: api.wsUrl, wallet: api.services.submitter.wallet }, "attestation api listening");
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    api.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "failed to stop cleanly");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error("[api] failed to start:", error);
    process.exit(1);
  });
}
