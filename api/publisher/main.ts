/**
 * The publisher process (`npm run publish`, `npm start -- --publish`; docs/eas.md): validates its
 * configuration, opens its state, serves `GET /healthz` and Prometheus `GET /metrics` on PUBLISHER_PORT,
 * and brings the rollup's batch notices with their proofs to the registry, the store both the registry's and
 * the gate's faces read (api/publisher/publisher.ts), until SIGINT or SIGTERM.
 */
import { createServer } from "node:http";
import { Counter, Gauge, Registry } from "prom-client";
import { loadPublisherConfig, PublisherConfigError, type PublisherConfig } from "./config.ts";
import { openPublisher, type OpenPublisher } from "./open.ts";
import type { PublisherStore } from "./store.ts";
import { messageOf } from "../../common/errors.ts";

const log = (line: string): void => void process.stdout.write(`[publisher] ${line}\n`);

/** Counters the publisher's hooks move, made before the publisher so they can be handed to it. */
function counters(registry: Registry) {
  const registers = [registry];
  return {
    transactions: new Counter({ name: "publisher_transactions_total", help: "recordMany transactions of this process mined", registers }),
    waits: new Counter({ name: "publisher_budget_waits_total", help: "Times a batch waited because the hour's gas budget was spent", registers }),
  };
}

/** Gauges read from the publisher's state at each scrape. */
function gauges(registry: Registry, store: PublisherStore, gasPerHour: number): void {
  const registers = [registry];
  new Gauge({
    name: "publisher_pending",
    help: "Attestations and revocations in batch notices the registry does not hold yet, by kind and stage: proof (waiting for their epoch's claim) or send (proven, to be sent)",
    labelNames: ["kind", "stage"],
    registers,
    collect() {
      const { waitingForProof, ready } = store.counts();
      for (const [kind, n] of Object.entries(waitingForProof)) this.set({ kind, stage: "proof" }, n);
      for (const [kind, n] of Object.entries(ready)) this.set({ kind, stage: "send" }, n);
    },
  });
  new Gauge({
    name: "publisher_published",
    help: "Attestations and revocations the registry holds through this publisher's batches, by kind (from its store: it survives a restart)",
    labelNames: ["kind"],
    registers,
    collect() {
      const { published } = store.counts();
      for (const [kind, n] of Object.entries(published)) this.set({ kind }, n);
    },
  });
  new Gauge({ name: "publisher_gas_spent", help: "Gas this publisher's transactions used, all time", registers, collect() { this.set(store.gasSpent()); } });
  new Gauge({ name: "publisher_gas_last_hour", help: "Gas of the last hour (in-flight transactions at their limit)", registers, collect() { this.set(store.gasSince(Date.now() - 3_600_000)); } });
  new Gauge({ name: "publisher_gas_budget_per_hour", help: "PUBLISH_GAS_PER_HOUR", registers, collect() { this.set(gasPerHour); } });
}

async function main(): Promise<void> {
  const registry = new Registry();
  const metrics = counters(registry);
  let config: PublisherConfig;
  let opened: OpenPublisher;
  try {
    config = loadPublisherConfig(process.env);
    opened = openPublisher(config, {
      log,
      onPublished: () => metrics.transactions.inc(),
      onBudgetWait: () => metrics.waits.inc(),
    });
  } catch (error) {
    if (error instanceof PublisherConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const { publisher, store } = opened;
  gauges(registry, store, config.gasPerHour);
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/metrics") {
      void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text));
      return;
    }
    if (req.method === "GET" && req.url === "/healthz") {
      const body = JSON.stringify({ status: "ok", wallet: config.wallet, contracts: config.contracts, ...store.counts(), ...publisher.status() });
      res.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, () => resolve()));
  publisher.start();
  log(`publishing ${config.rollups} batch notices of ${config.dappAddress} to the registry ${config.contracts.registry} (its gate face at ${config.contracts.gate})`);
  log(`wallet ${config.wallet}; batches of up to ${config.batchMax}; at most ${config.gasPerHour} gas an hour; metrics http://${config.host}:${config.port}/metrics`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void publisher.stop().then(() => {
      server.close();
      store.close();
      process.exit(0);
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(`[publisher] failed to start: ${messageOf(error)}`);
  process.exit(1);
});
