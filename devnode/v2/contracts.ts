/**
 * The Cartesi Rollups v2 contracts (@cartesi/rollups 2.2.0, installed as `@cartesi/rollups-v2` beside
 * v1): their ABIs and bytecode from the package's Foundry artifacts, and the deployment a v2 devnode
 * makes on a local chain: an InputBox, an Authority owned by the claimer with an epoch length in blocks,
 * and an Application whose outputs that Authority validates.
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

export const V2_CONTRACTS = ["InputBox", "Authority", "Application", "Inputs", "Outputs", "DataAvailability"] as const;
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

/**
 * Where a v2 devnode puts the contracts on a fresh local chain: the InputBox at its canonical (CREATE2)
 * address of Rollups 2.2.0, the one @cartesi/viem sends inputs to; the Authority and the Application
 * deployed by the claimer (hardhat account #19) as its first two transactions, so at the same addresses
 * every time.
 */
export const V2_DEFAULTS = {
  inputBoxAddress: "0x1b51e2992A2755Ba4D6F7094032DF91991a0Cfac" as Address,
  authorityAddress: "0x73511669fd4dE447feD18BB79bAFeAC93aB7F31f" as Address,
  applicationAddress: "0xB581C9264f59BF0289fA76D61B2D0746dCE3C30D" as Address,
  /** One block per epoch: an epoch closes as soon as its block is mined, with no empty blocks to wait for. */
  epochLength: 1,
  /** How the node's JSON-RPC and inspect name the application besides its address. */
  applicationName: "attestation",
} as const;

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
