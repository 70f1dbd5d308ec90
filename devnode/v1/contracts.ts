/**
 * The Cartesi Rollups v1 application contracts as the `@cartesi/rollups` 1.4.x package ships them
 * (export/artifacts): History, Authority and CartesiDApp, with the libraries CartesiDApp links
 * (Bitmask, MerkleV2 and its CartesiMathV2). Nothing is compiled here: the published bytecode is what a
 * real deployment runs, so what `validateNotice` accepts on the local chain it accepts there.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Abi, Account, Address, Chain, Hex, PublicClient, Transport, WalletClient } from "viem";
import { cartesiDAppAbi } from "../../common/notice-check.ts";

const require = createRequire(import.meta.url);

interface LinkReference {
  start: number;
  length: number;
}

export interface Artifact {
  contractName: string;
  sourceName: string;
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
  linkReferences: Record<string, Record<string, LinkReference[]>>;
}

/** Library source names as artifacts name them → their artifact path inside export/artifacts. */
const ARTIFACT_PATHS: Record<string, string> = {
  "@cartesi/util/contracts/Bitmask.sol": "@cartesi/util/contracts/Bitmask.sol/Bitmask.json",
  "@cartesi/util/contracts/MerkleV2.sol": "@cartesi/util/contracts/MerkleV2.sol/MerkleV2.json",
  "@cartesi/util/contracts/CartesiMathV2.sol": "@cartesi/util/contracts/CartesiMathV2.sol/CartesiMathV2.json",
  History: "contracts/history/History.sol/History.json",
  Authority: "contracts/consensus/authority/Authority.sol/Authority.json",
  CartesiDApp: "contracts/dapp/CartesiDApp.sol/CartesiDApp.json",
  LibOutputValidation: "contracts/library/LibOutputValidation.sol/LibOutputValidation.json",
};

export function loadArtifact(name: keyof typeof ARTIFACT_PATHS | string): Artifact {
  const path = ARTIFACT_PATHS[name];
  if (path === undefined) throw new Error(`no v1 artifact is known as ${name}`);
  const file = require.resolve(`@cartesi/rollups/export/artifacts/${path}`);
  return JSON.parse(readFileSync(file, "utf8")) as Artifact;
}

/** Writes library addresses into an artifact's creation bytecode at its link references. */
export function linkBytecode(artifact: Artifact, libraries: Readonly<Record<string, Address>>): Hex {
  let code = artifact.bytecode.slice(2);
  for (const [source, names] of Object.entries(artifact.linkReferences)) {
    for (const [name, references] of Object.entries(names)) {
      const address = libraries[source] ?? libraries[name];
      if (address === undefined) throw new Error(`${artifact.contractName} needs library ${name} (${source})`);
      for (const { start, length } of references) {
        code = code.slice(0, start * 2) + address.slice(2).toLowerCase().padStart(length * 2, "0") + code.slice((start + length) * 2);
      }
    }
  }
  return `0x${code}`;
}

export type DeployWallet = WalletClient<Transport, Chain | undefined, Account>;
export type DeployReader = PublicClient<Transport, Chain | undefined>;

async function deploy(wallet: DeployWallet, reader: DeployReader, artifact: Artifact, bytecode: Hex, args: readonly unknown[]): Promise<Address> {
  const hash = await wallet.deployContract({ abi: artifact.abi, bytecode, args, chain: wallet.chain ?? null });
  const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success" || receipt.contractAddress == null) {
    throw new Error(`deploying ${artifact.contractName} failed (transaction ${hash})`);
  }
  return receipt.contractAddress;
}

/** Deploys the libraries an artifact links (recursively), each once per `deployed` map. */
async function deployLinked(
  wallet: DeployWallet,
  reader: DeployReader,
  artifact: Artifact,
  deployed: Map<string, Address>,
): Promise<Hex> {
  const libraries: Record<string, Address> = {};
  for (const source of Object.keys(artifact.linkReferences)) {
    let address = deployed.get(source);
    if (address === undefined) {
      const library = loadArtifact(source);
      address = await deploy(wallet, reader, library, await deployLinked(wallet, reader, library, deployed), []);
      deployed.set(source, address);
    }
    libraries[source] = address;
  }
  return linkBytecode(artifact, libraries);
}

export interface V1Application {
  history: Address;
  authority: Address;
  dapp: Address;
  libraries: Record<string, Address>;
}

export const HISTORY_ABI = (): Abi => loadArtifact("History").abi;
export const AUTHORITY_ABI = (): Abi => loadArtifact("Authority").abi;
/** CartesiDApp's ABI with the errors its validateNotice reverts from (common/notice-check.ts, which the api and `npm run verify` judge with). */
export const CARTESI_DAPP_ABI = cartesiDAppAbi;

/**
 * Deploys an Authority and a History owned by `owner` (the Authority owns the History, as v1 wires them:
 * only the consensus may submit claims to its history) and a CartesiDApp governed by that Authority.
 * `wallet` pays and must be `owner` (Authority.setHistory is owner-only).
 */
export async function deployV1Application(
  wallet: DeployWallet,
  reader: DeployReader,
  options: { templateHash?: Hex; dappOwner?: Address } = {},
): Promise<V1Application> {
  const owner = wallet.account.address;
  const deployed = new Map<string, Address>();
  const authorityArtifact = loadArtifact("Authority");
  const authority = await deploy(wallet, reader, authorityArtifact, authorityArtifact.bytecode, [owner]);
  const historyArtifact = loadArtifact("History");
  const history = await deploy(wallet, reader, historyArtifact, historyArtifact.bytecode, [authority]);
  const setHistory = await wallet.writeContract({
    address: authority,
    abi: authorityArtifact.abi,
    functionName: "setHistory",
    args: [history],
    chain: wallet.chain ?? null,
  });
  const wired = await reader.waitForTransactionReceipt({ hash: setHistory, pollingInterval: 50 });
  if (wired.status !== "success") throw new Error(`Authority.setHistory failed (transaction ${setHistory})`);
  const dappArtifact = loadArtifact("CartesiDApp");
  const dappCode = await deployLinked(wallet, reader, dappArtifact, deployed);
  const dapp = await deploy(wallet, reader, dappArtifact, dappCode, [
    authority,
    options.dappOwner ?? owner,
    options.templateHash ?? `0x${"00".repeat(32)}`,
  ]);
  return { history, authority, dapp, libraries: Object.fromEntries(deployed) };
}
