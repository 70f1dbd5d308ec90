/** The example consumer contract of the stack's Rollups version (contracts/AttestationGate*.sol), deployed on its chain. */
import { createWalletClient, http, type Address } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { compiledContract } from "../../contracts/compile.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import type { TestStack } from "./stack.ts";

export async function deployAttestationGate(stack: TestStack, application: Address) {
  const gate = compiledContract(stack.rollups === "v2" ? "AttestationGateV2" : "AttestationGate");
  // Account #9: no other test sends from it, so its nonces are its own.
  const wallet = createWalletClient({ transport: http(stack.urls.rpc), account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 9 }) });
  const reader = stack.client.publicClient;
  const deployed = await reader.waitForTransactionReceipt({
    hash: await wallet.deployContract({ abi: gate.abi, bytecode: gate.bytecode, args: [application], chain: null }),
  });
  return { address: deployed.contractAddress as Address, abi: gate.abi, wallet, reader };
}
