/** Writes client/schema.d.ts from the api's routes (`--check`: exit 1 when the committed file is stale). */
import { readFileSync, writeFileSync } from "node:fs";
import { runScript, UsageError } from "./lib/cli.ts";
import { CLIENT_SCHEMA_PATH, generateClientSchema } from "./lib/client-schema.ts";

const USAGE = "npm run client:generate [-- --check]    (--check: exit 1 when client/schema.d.ts is stale, write nothing)";

runScript(async () => {
  const args = process.argv.slice(2);
  const unknown = args.find((a) => a !== "--check");
  if (unknown !== undefined) throw new UsageError(`unknown argument: ${unknown}`);
  const text = await generateClientSchema();
  if (args.includes("--check")) {
    const current = readFileSync(CLIENT_SCHEMA_PATH, "utf8");
    if (current === text) return 0;
    console.error(`${CLIENT_SCHEMA_PATH} is stale: run npm run client:generate`);
    return 1;
  }
  writeFileSync(CLIENT_SCHEMA_PATH, text);
  console.log(`wrote ${CLIENT_SCHEMA_PATH}`);
  return 0;
}, USAGE);
