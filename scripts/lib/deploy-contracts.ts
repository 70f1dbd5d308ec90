/**
 * Deploys the attestation registry (the store, IEAS-shaped) and the gate (the store's gate face, bound to
 * the registry) beside an application, from the artifacts in
 * common/contracts/ (no compiler needed): `npm start` does it on its own chain with a wallet of its own, so
 * the two land at the same addresses on every fresh chain (the wallet's first two transactions, as the
 * devnode's application is the claimer's); `npm run deploy-contracts` does it beside any application on
 * any chain.
 */
import { createPublicClient, createWalletClient, getContractAddress, http, type Address, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";

/**
 * The local stack's deployer (hardhat account #18: the api uses #0, replicas #10 up, the publisher #17, the
 * devnode's claimer #19, tests the low ones): its nonces 0 and 1 are the registry and the gate.
 */
export const STACK_DEPLOYER_KEY: Hex = hardhatPrivateKey(18);

export interface StackContracts {
  registry: Address;
  gate: Address;
}

export class DeployError extends Error {
  override readonly name = "DeployError";
}

/** Where `deployer`'s first two transactions put the registry and the gate. */
export function predictedContracts(deployer: Address): StackContracts {
  return { registry: getContractAddress({ from: deployer, nonce: 0n }), gate: getContractAddress({ from: deployer, nonce: 1n }) };
}

export interface DeployOptions {
  rpcUrl: string;
  application: Address;
  rollups: "v1" | "v2";
  privateKey: Hex;
  log?: (line: string) => void;
}

async function hasCode(client: PublicClient, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== "0x";
}

/** Deploys the registry, bound to `application`, and then the gate, bound to the registry, from `privateKey`'s next nonces. */
export async function deployContracts(options: DeployOptions): Promise<StackContracts> {
  const client = createPublicClient({ transport: http(options.rpcUrl) });
  if (!(await hasCode(client, options.application))) {
    throw new DeployError(`no contract at ${options.application} on ${options.rpcUrl}: the registry and the gate are bound to an application deployed there`);
  }
  const account = privateKeyToAccount(options.privateKey);
  const wallet = createWalletClient({ account, transport: http(options.rpcUrl) });
  const names = stackContracts(options.rollups);
  const deploy = async (name: (typeof names)["registry"], boundTo: Address): Promise<Address> => {
    const { abi, bytecode } = contractArtifact(name);
    const hash = await wallet.deployContract({ abi, bytecode, args: [boundTo], chain: null });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success" || receipt.contractAddress == null) throw new DeployError(`deploying ${name} reverted (transaction ${hash})`);
    options.log?.(`${name} at ${receipt.contractAddress} (transaction ${hash})`);
    return receipt.contractAddress;
  };
  const registry = await deploy(names.registry, options.application);
  return { registry, gate: await deploy(names.gate, registry) };
}

/**
 * The stack's registry and gate at their fixed addresses: deployed by STACK_DEPLOYER_KEY's first two
 * transactions, or found there already (a restart on the same chain). A deployer that already sent other
 * transactions on this chain would put them elsewhere: refused, with what to do.
 */
export async function ensureStackContracts(options: Omit<DeployOptions, "privateKey">): Promise<StackContracts & { deployed: boolean }> {
  const deployer = privateKeyToAccount(STACK_DEPLOYER_KEY).address;
  const expected = predictedContracts(deployer);
  const client = createPublicClient({ transport: http(options.rpcUrl) });
  if ((await hasCode(client, expected.registry)) && (await hasCode(client, expected.gate))) return { ...expected, deployed: false };
  const nonce = await client.getTransactionCount({ address: deployer });
  if (nonce !== 0) {
    throw new DeployError(`the stack's deployer ${deployer} has sent ${nonce} transaction(s) on ${options.rpcUrl}: the registry and the gate would not land at ${expected.registry} and ${expected.gate} (start a fresh chain, or use npm run deploy-contracts)`);
  }
  const deployed = await deployContracts({ ...options, privateKey: STACK_DEPLOYER_KEY });
  if (deployed.registry.toLowerCase() !== expected.registry.toLowerCase() || deployed.gate.toLowerCase() !== expected.gate.toLowerCase()) {
    throw new DeployError(`the registry and the gate landed at ${deployed.registry} and ${deployed.gate}, not at ${expected.registry} and ${expected.gate}`);
  }
  return { ...deployed, deployed: true };
}
