/**
 * `npm run build`: the exact bundle that Dockerfile.cartesi copies into the Cartesi machine.
 *
 *   dist/dapp/main.js      the dapp and all its pure-JS dependencies in one ES module
 *   dist/migrations/       drizzle-kit's migrations, beside it so `../migrations` resolves as in the sources
 *   dist/package.json      the one native dependency (better-sqlite3), pinned to the lock file's version,
 *                          for the image's riscv64 stage to compile; it cannot live inside a bundle
 *   dist/explorer/         the explorer the api serves at /
 *
 * The dapp's build itself is toolkit/dapp-build.ts, shared with the bench.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runScript, UsageError } from "./lib/cli.ts";
import { bundleExplorer, EXPLORER_OUT } from "../api/explorer.ts";
import { buildDapp, NATIVE_EXTERNALS } from "../toolkit/dapp-build.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");

async function main(): Promise<void> {
  await buildDapp(out);
  process.stdout.write(`built ${join("dist", "dapp/main.js")} (+ migrations, package.json pinning ${NATIVE_EXTERNALS.join(", ")})\n`);
  // The explorer the api serves at / (the api bundles it itself when this is missing or stale).
  mkdirSync(EXPLORER_OUT, { recursive: true });
  for (const [name, body] of await bundleExplorer()) writeFileSync(join(EXPLORER_OUT, name), body);
  process.stdout.write(`built ${join("dist", "explorer")} (index.html, style.css, app.js)\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  runScript(async () => {
    const extra = process.argv.slice(2);
    if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")} (the build takes none)`);
    await main();
    return 0;
  }, "npm run build    (bundles the dapp into dist/: dapp/main.js, migrations/, package.json; and the explorer into dist/explorer/)");
}
