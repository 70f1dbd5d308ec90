/**
 * `npm run contracts:build`: compiles contracts/*.sol (solc-js, offline) and writes the artifacts of the
 * contracts the stack deploys (the registries and gates of both Rollups versions) into common/contracts/,
 * where the deploy command, the publisher and the api read them without a compiler. A test checks that the
 * committed artifacts are what the sources compile to.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compiledContract } from "../contracts/compile.ts";
import { artifactFile, DEPLOYED_CONTRACTS, serializeArtifact } from "../common/contracts.ts";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

runScript(async () => {
  const { positional } = parseArgs(process.argv.slice(2), []);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  for (const name of DEPLOYED_CONTRACTS) {
    const { abi, bytecode } = compiledContract(name);
    writeFileSync(artifactFile(name), serializeArtifact({ contractName: name, abi, bytecode }));
    console.log(`wrote ${join("common", "contracts", `${name}.json`)}`);
  }
  return 0;
}, "npm run contracts:build");
