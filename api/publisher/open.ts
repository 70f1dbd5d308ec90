/**
 * A publisher put together from its configuration: its state (refusing one kept for another application
 * or other contracts), the node it reads, the chain it writes. The process (main.ts) and the bench
 * (bench/sections/publisher.ts) open it the same way.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { GraphqlReader } from "../rollup/graphql.ts";
import { JsonRpcReader } from "../rollup/jsonrpc.ts";
import { PublisherChain } from "./chain.ts";
import { PublisherConfigError, type PublisherConfig } from "./config.ts";
import { Publisher, type PublisherNode, type PublisherOptions } from "./publisher.ts";
import { PublisherStore } from "./store.ts";

export interface OpenPublisher {
  publisher: Publisher;
  store: PublisherStore;
  chain: PublisherChain;
}

export function openPublisher(config: PublisherConfig, hooks: Pick<PublisherOptions, "log" | "onPublished" | "onBudgetWait">): OpenPublisher {
  mkdirSync(dirname(config.statePath), { recursive: true });
  const store = new PublisherStore(config.statePath);
  const owner = `${config.rollups}:${config.dappAddress}/${config.contracts.registry}/${config.contracts.gate}`.toLowerCase();
  const recorded = store.claimOwner(owner);
  if (recorded !== undefined && recorded !== owner) {
    store.close();
    throw new PublisherConfigError(`${config.statePath} publishes ${recorded}, not ${owner}: use another DATA_DIR`);
  }
  const node: PublisherNode =
    config.rollups === "v2" ? { rollups: "v2", reader: new JsonRpcReader(config.rollupUrl, config.dappAddress) } : { rollups: "v1", reader: new GraphqlReader(config.graphqlUrl) };
  const chain = new PublisherChain({ rpcUrl: config.rpcUrl, chainId: config.chainId, rollups: config.rollups, privateKey: config.privateKey, contracts: config.contracts });
  const publisher = new Publisher({ node, chain, store, batchMax: config.batchMax, gasPerHour: config.gasPerHour, txGasMax: config.txGasMax, pollMs: config.pollMs, ...hooks });
  return { publisher, store, chain };
}
