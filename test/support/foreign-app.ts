/**
 * A Cartesi application of the test's own, deployed from Cartesi's published artifacts on a bare chain
 * (test/support/chain.ts): v1's CartesiDApp under an Authority and a History (@cartesi/rollups 1.4), or v2's
 * Application under an Authority (@cartesi/rollups 2.2). The test owns the Authority, so it claims whatever
 * outputs it likes: it proves notices the honest dapp never emits, as an adversary with a rollup of its own
 * would, and the registry's check of the proof is the real one.
 */
import type { Account, Address, Chain, Hex, PublicClient, Transport, WalletClient } from "viem";
import { v1ContractProof } from "../../common/notice-check.ts";
import { AUTHORITY_ABI, deployV1Application } from "../../devnode/v1/contracts.ts";
import { buildEpochProofs, encodeClaim, encodeProofContext } from "../../devnode/v1/proofs.ts";
import { deployV2Application, v2Abi } from "../../devnode/v2/contracts.ts";
import { encodeNotice, OutputsTree } from "../../devnode/v2/outputs.ts";

type Wallet = WalletClient<Transport, Chain, Account>;
type Reader = PublicClient<Transport, Chain>;

export interface ForeignApplication {
  /** The application contract: what a registry of its version is deployed with. */
  address: Address;
  /** Claims one epoch whose outputs are these notices, in order, and answers each one's proof as the registry takes it. */
  prove(notices: readonly Hex[]): Promise<unknown[]>;
}

export async function deployForeignApplication(rollups: "v1" | "v2", wallet: Wallet, reader: Reader): Promise<ForeignApplication> {
  const mined = async (hash: Hex): Promise<void> => {
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error(`the claim transaction ${hash} reverted`);
  };

  if (rollups === "v1") {
    const app = await deployV1Application(wallet, reader);
    // The History takes claims of consecutive inputs: each notice is an input of its own.
    let nextInput = 0;
    let claims = 0;
    return {
      address: app.dapp,
      async prove(notices) {
        const epoch = buildEpochProofs(notices.map((notice) => ({ accepted: true, notices: [notice], vouchers: [] })));
        const first = nextInput;
        nextInput += notices.length;
        const claim = encodeClaim(app.dapp, epoch.epochHash, first, nextInput - 1);
        await mined(await wallet.writeContract({ address: app.authority, abi: AUTHORITY_ABI(), functionName: "submitClaim", args: [claim] }));
        const context = encodeProofContext(claims++);
        return notices.map((_, k) => v1ContractProof(epoch.noticeProof(k, 0), context));
      },
    };
  }

  // An epoch of one block: any past block closes one, so every claim names the newest block.
  const app = await deployV2Application(wallet, reader, 1);
  return {
    address: app.application,
    async prove(notices) {
      const tree = new OutputsTree(notices.map(encodeNotice));
      const lastBlock = await reader.getBlockNumber({ cacheTime: 0 });
      await mined(await wallet.writeContract({ address: app.authority, abi: v2Abi("Authority"), functionName: "submitClaim", args: [app.application, lastBlock, tree.root] }));
      return notices.map((_, k) => ({ outputIndex: BigInt(k), outputHashesSiblings: tree.siblings(k) }));
    },
  };
}
