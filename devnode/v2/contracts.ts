/**
 * The Cartesi Rollups v2 contracts (@cartesi/rollups 2.2.0, installed as `@cartesi/rollups-v2` beside
 * v1): their ABIs and bytecode from the package's Foundry artifacts, and the deployment a v2 devnode
 * makes on a local chain: an InputBox, an Authority owned by the claimer with an epoch length in blocks,
 * and an Application whose outputs that Authority validates. The addresses they land at on a fresh
 * chain are the configuration's defaults (V2_DEFAULTS, devnode/config.ts).
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { encodeFunctionData, getAddress, type Abi, type Account, type Address, type Chain, type Hex, type PublicClient, type Transport, type WalletClient } from "viem";

const require = createRequire(import.meta.url);

interface FoundryArtifact {
  abi: Abi;
  bytecode: { object: Hex };
  deployedBytecode: { object: Hex };
}

export const V2_CONTRACTS = ["InputBox", "Authority", "Quorum", "Application", "Inputs", "Outputs", "DataAvailability"] as const;
export type V2ContractName = (typeof V2_CONTRACTS)[number];

const cache = new Map<V2ContractName, FoundryArtifact>();

export function v2Artifact(name: V2ContractName): FoundryArtifact {
  let artifact = cache.get(name);
  if (artifact === undefined) {
    const file = require.resolve(`@cartesi/rollups-v2/out/${name}.sol/${name}.json`);
    artifact = JSON.parse(readFileSync(file, "utf8")) as FoundryArtifact;
    cache.set(name, artifact);
  }
  return artifact;
}

export const v2Abi = (name: V2ContractName): Abi => v2Artifact(name).abi;

export interface V2Deployment {
  inputBox: Address;
  authority: Address;
  application: Address;
  /** Blocks per epoch: a claim names the last block of its epoch. */
  epochLength: number;
}

/** The template hash of the machine the application runs; a devnode has no machine snapshot, so a fixed one. */
export const DEVNODE_TEMPLATE_HASH: Hex = `0x${"00".repeat(31)}01`;

/** The application's data availability: its inputs come from this InputBox (DataAvailability.InputBox). */
export function inputBoxAvailability(inputBox: Address): Hex {
  return encodeFunctionData({ abi: v2Abi("DataAvailability"), functionName: "InputBox", args: [inputBox] });
}

type Wallet = WalletClient<Transport, Chain, Account>;

async function deploy(wallet: Wallet, reader: PublicClient, name: V2ContractName, args: readonly unknown[]): Promise<Address> {
  const artifact = v2Artifact(name);
  const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode.object, args });
  const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success" || receipt.contractAddress === undefined || receipt.contractAddress === null) {
    throw new Error(`deploying the v2 ${name} failed (transaction ${hash})`);
  }
  return getAddress(receipt.contractAddress);
}

/** Deploys InputBox, Authority (owned by the wallet) and Application, in that order, from the wallet. */
export async function deployV2Application(wallet: Wallet, reader: PublicClient, epochLength: number): Promise<V2Deployment> {
  const owner = wallet.account.address;
  const inputBox = await deploy(wallet, reader, "InputBox", []);
  const authority = await deploy(wallet, reader, "Authority", [owner, BigInt(epochLength)]);
  const application = await deploy(wallet, reader, "Application", [authority, owner, DEVNODE_TEMPLATE_HASH, inputBoxAvailability(inputBox)]);
  return { inputBox, authority, application, epochLength };
}
