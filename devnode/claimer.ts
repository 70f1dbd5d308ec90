/**
 * The devnode's own wallet on the chain (CLAIMER_PRIVATE_KEY): what deploys the application contracts on
 * a managed chain and submits claims as the Authority's owner, for v1 (devnode/v1/application.ts) and v2
 * (devnode/v2/application.ts) alike.
 */
import { createPublicClient, createWalletClient, http, type Account, type Chain, type Hex, type PublicClient, type Transport, type WalletClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export class ClaimerClients {
  readonly account: Account;
  readonly reader: PublicClient<Transport, Chain>;
  readonly wallet: WalletClient<Transport, Chain, Account>;

  protected constructor(rpcUrl: string, chain: Chain, privateKey: Hex) {
    this.account = privateKeyToAccount(privateKey);
    // No retries: a claim that fails is retried by the epoch loop, with its own log line.
    const transport = http(rpcUrl, { retryCount: 0 });
    this.reader = createPublicClient({ chain, transport });
    this.wallet = createWalletClient({ chain, transport, account: this.account });
  }
}
