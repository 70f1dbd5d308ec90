/**
 * `npm run deploy-contracts -- --rpc <url> --application <address> [--rollups v1|v2] [--key 0x…]`: deploys
 * the attestation registry (EAS's read interface) and the gate beside an application, on any chain (a real
 * node's), from the artifacts shipped in common/contracts/, and prints their addresses. The key is
 * `--key`, else DEPLOYER_PRIVATE_KEY; on a local hardhat chain (chain id 31337) the stack's own deployer
 * will do. `npm start` deploys them by itself on its own chain (scripts/lib/deploy-contracts.ts).
 */
import { createPublicClient, http, type Address, type Hex } from "viem";
import { DeployError, deployContracts, STACK_DEPLOYER_KEY } from "./lib/deploy-contracts.ts";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run deploy-contracts -- --rpc <url> --application <address> [--rollups v1|v2] [--key 0x<private key>]   (or DEPLOYER_PRIVATE_KEY; ROLLUPS for the version)";
const KEY = /^0x[0-9a-fA-F]{64}$/;

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--rpc", "--application", "--rollups", "--key"]);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const rpcUrl = options.get("--rpc") ?? process.env.RPC_URL;
  if (rpcUrl === undefined || !/^https?:\/\/\S+$/.test(rpcUrl)) throw new UsageError(`--rpc: expected the chain's http(s) JSON-RPC URL${rpcUrl === undefined ? "" : `, not ${rpcUrl}`}`);
  const application = options.get("--application") ?? process.env.DAPP_ADDRESS;
  if (application === undefined || !/^0x[0-9a-fA-F]{40}$/.test(application)) throw new UsageError(`--application: expected the application contract's 0x address${application === undefined ? "" : `, not ${application}`}`);
  const rollups = options.get("--rollups") ?? process.env.ROLLUPS ?? "v1";
  if (rollups !== "v1" && rollups !== "v2") throw new UsageError(`--rollups: expected v1 or v2, not ${rollups}`);
  const given = options.get("--key") ?? process.env.DEPLOYER_PRIVATE_KEY;
  if (given !== undefined && !KEY.test(given)) throw new UsageError("--key: expected a 0x-prefixed 32-byte hex private key");
  let chainId: number;
  try {
    chainId = await createPublicClient({ transport: http(rpcUrl) }).getChainId();
  } catch (error) {
    console.error(`no chain answers at ${rpcUrl}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    return 3;
  }
  if (given === undefined && chainId !== 31337) throw new UsageError(`--key: chain ${chainId} is not a local hardhat chain, so the deployer's key must be given`);
  try {
    const deployed = await deployContracts({ rpcUrl, application: application as Address, rollups, privateKey: (given ?? STACK_DEPLOYER_KEY) as Hex, log: (line) => console.error(line) });
    console.log(JSON.stringify({ chainId, application, rollups, ...deployed }));
    return 0;
  } catch (error) {
    if (error instanceof DeployError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}, USAGE);
