/**
 * The publisher's configuration (api/publisher/config.ts): validated once at start, a bad value named
 * with the variable, the local stack's defaults filled in, the rollup's variables read as the api reads them.
 */
import { describe, expect, it } from "vitest";
import { LOCAL_ADDRESSES, loadConfig } from "../../api/config.ts";
import { LOCAL_PUBLISHER_KEY, loadPublisherConfig, PublisherConfigError } from "../../api/publisher/config.ts";
import { thrown } from "../support/thrown.ts";

const CONTRACTS = { REGISTRY_ADDRESS: "0x850EC3780CeDfdb116E38B009d0bf7a1ef1b8b38", GATE_ADDRESS: "0x1ACcBD355245AbA93CE46D33ab1D0152CE33Fd00" };

describe("loadPublisherConfig", () => {
  it("fills in the local stack's defaults; an empty variable counts as unset", () => {
    const config = loadPublisherConfig({ ...CONTRACTS, PUBLISH_BATCH_MAX: "", ROLLUPS: "v2" });
    expect(config).toMatchObject({
      rollups: "v2",
      rollupUrl: "http://127.0.0.1:10000",
      graphqlUrl: "http://127.0.0.1:10000/graphql",
      rpcUrl: "http://127.0.0.1:8545",
      chainId: 31337,
      dappAddress: LOCAL_ADDRESSES.v2.application,
      contracts: { registry: CONTRACTS.REGISTRY_ADDRESS, gate: CONTRACTS.GATE_ADDRESS },
      privateKey: LOCAL_PUBLISHER_KEY,
      batchMax: 32,
      txGasMax: 16_777_216,
      port: 8005,
      statePath: ".data/publisher-batches.sqlite",
    });
  });

  it("reads the rollup's variables as the api does", () => {
    const env = { ...CONTRACTS, ROLLUP_URL: "http://node.example:10000//", CHAIN_ID: "11155111", DAPP_ADDRESS: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" };
    const { rollups, rollupUrl, graphqlUrl, rpcUrl, chainId, dappAddress } = loadConfig(env);
    expect(loadPublisherConfig(env)).toMatchObject({ rollups, rollupUrl, graphqlUrl, rpcUrl, chainId, dappAddress });
    expect(rollupUrl).toBe("http://node.example:10000");
  });

  it.each([
    [{ GATE_ADDRESS: CONTRACTS.GATE_ADDRESS }, /^invalid publisher configuration: REGISTRY_ADDRESS: .* \(npm start prints them; npm run deploy-contracts deploys them\)$/],
    [{ ...CONTRACTS, GATE_ADDRESS: "0x1234" }, /^invalid publisher configuration: GATE_ADDRESS: .*\(npm start prints them/],
    [{ ...CONTRACTS, PUBLISH_BATCH_MAX: "0" }, /^invalid publisher configuration: PUBLISH_BATCH_MAX: /],
    [{ ...CONTRACTS, PUBLISH_TX_GAS_MAX: "lots" }, /^invalid publisher configuration: PUBLISH_TX_GAS_MAX: /],
    [{ ...CONTRACTS, PUBLISHER_PRIVATE_KEY: "0xabc" }, /^invalid publisher configuration: PUBLISHER_PRIVATE_KEY: expected a 0x-prefixed 32-byte hex private key$/],
    [{ ...CONTRACTS, ROLLUPS: "v3" }, /^invalid publisher configuration: ROLLUPS: /],
    [{ ...CONTRACTS, ROLLUP_URL: "ftp://node" }, /^invalid publisher configuration: ROLLUP_URL: /],
  ])("refuses %j, naming the variable", (env, message) => {
    const error = thrown(() => loadPublisherConfig(env));
    expect(error).toBeInstanceOf(PublisherConfigError);
    expect((error as Error).message).toMatch(message);
  });
});
