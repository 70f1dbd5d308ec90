/**
 * A bare local chain (the stack's hardhat node, nothing else) on a free port, with wallet and reader
 * clients for hardhat's funded accounts: for tests that deploy and call contracts directly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, createWalletClient, http, type Account, type Chain, type PublicClient, type Transport, type WalletClient } from "viem";
import { hardhatAccount } from "../../devnode/hardhat-keys.ts";
import { hardhat } from "viem/chains";
import { DEFAULTS } from "../../devnode/config.ts";
import { Supervisor } from "../../scripts/lib/stack-supervisor.ts";
import { freePorts, PROJECT_ROOT } from "./stack.ts";

export interface TestChain {
  rpcUrl: string;
  reader: PublicClient<Transport, Chain>;
  /** A wallet for hardhat account `n` (funded). */
  wallet(n: number): WalletClient<Transport, Chain, Account>;
  stop(): Promise<void>;
}

export async function startChain(): Promise<TestChain> {
  const [port] = await freePorts(1);
  const dataDir = mkdtempSync(join(tmpdir(), "test-chain-"));
  const supervisor = new Supervisor(
    {
      root: PROJECT_ROOT,
      dataDir,
      externalRpcUrl: undefined,
      chainPort: port as number,
      nodePort: 0,
      nodeHost: "127.0.0.1",
      rollupHttpPort: 0,
      apiPort: 0,
      rollups: "v1",
      inputBoxAddress: DEFAULTS.inputBoxAddress,
      dappAddress: DEFAULTS.dappAddress,
      privateKey: DEFAULTS.privateKey,
      dappAdmins: DEFAULTS.adminAddress,
      dappCommand: [],
      api: false,
      attestor: undefined,
      demoProvider: undefined,
      env: {},
      logDir: join(dataDir, "logs"),
    },
    { restarts: false, readyTimeoutMs: 60_000, log: () => {} },
  );
  await supervisor.start("chain");
  const rpcUrl = `http://127.0.0.1:${port}`;
  const transport = http(rpcUrl, { retryCount: 0 });
  const chain = { ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } } as Chain;
  return {
    rpcUrl,
    reader: createPublicClient({ chain, transport }),
    wallet: (n) => createWalletClient({ chain, transport, account: hardhatAccount(n) }),
    async stop() {
      await supervisor.stopAll();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
