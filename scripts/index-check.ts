/**
 * `npm run index:check`: compares the index with the rollup (api/index/check.ts): every schema, and every
 * attestation of every owner the index knows (and of any `--owner` named), as EAS's GraphQL answers them
 * from the index and as the dapp's inspect reads answer them. Prints the counts; exit 0 when they are equal,
 * 1 with the first difference named. Run it when the index has caught up (its `/ready`, and no input sent
 * meanwhile): the index is a prefix of the rollup's outputs, so a newer input is a difference until read.
 */
import type { Address } from "viem";
import { compareIndex } from "../api/index/check.ts";
import { DEFAULT_INDEX_PORT } from "../api/index/location.ts";
import { RollupReader } from "../api/rollup/inspect.ts";
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run index:check [-- --owner 0x...]...    (INDEX_URL, default http://127.0.0.1:8002; the node from NODE_PORT / ROLLUP_URL)";

runScript(async () => {
  const args = process.argv.slice(2);
  const owners: Address[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== "--owner") continue;
    const owner = args[i + 1];
    if (owner === undefined || !/^0x[0-9a-fA-F]{40}$/.test(owner)) throw new UsageError(`--owner: expected a 0x address, not ${JSON.stringify(owner ?? "")}`);
    owners.push(owner as Address);
    args.splice(i, 2);
    i--;
  }
  const { positional } = parseArgs(args, []);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const { nodeUrl, rollups, dappAddress } = loadEndpoints(process.env);
  const indexUrl = (process.env.INDEX_URL ?? `http://127.0.0.1:${DEFAULT_INDEX_PORT}`).replace(/\/+$/, "");
  const rollup = new RollupReader({ rollupUrl: nodeUrl, ...(rollups === "v2" ? { v2Application: dappAddress } : {}) });
  const result = await compareIndex(`${indexUrl}/graphql`, rollup, owners);
  console.log(`${result.schemata} schemata, ${result.owners} owners, ${result.attestations} attestations (${result.revoked} revoked) compared`);
  if (result.difference === undefined) {
    console.log("the index equals the rollup");
    return 0;
  }
  console.log(`first difference: ${result.difference}`);
  return 1;
}, USAGE);
