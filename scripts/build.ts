/**
 * `npm run build`: the exact bundle that Dockerfile.cartesi copies into the Cartesi machine.
 *
 *   dist/dapp/main.js      the dapp and all its pure-JS dependencies in one ES module
 *   dist/migrations/       drizzle-kit's migrations, beside it so `../migrations` resolves as in the sources
 *   dist/package.json      the one native dependency (better-sqlite3), pinned to the lock file's version,
 *                          for the image's riscv64 stage to compile; it cannot live inside a bundle
 */
import { build } from "esbuild";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runScript, UsageError } from "./lib/cli.ts";
import { bundleExplorer, EXPLORER_OUT } from "../api/explorer.ts";
import { z } from "zod";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");

const lockSchema = z.object({
  packages: z.record(z.string(), z.object({ version: z.string().optional() })),
});

/** The version of a dependency exactly as package-lock.json resolved it. */
export function lockedVersion(name: string): string {
  const lock = lockSchema.parse(JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")));
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in package-lock.json`);
  return version;
}

/** Packages the bundle must not contain: native addons are compiled for the target machine instead. */
export const NATIVE_EXTERNALS = ["better-sqlite3"] as const;

/**
 * Writes the bundle, its migrations and the native manifest into `outDir` (emptied first): `dist/` for the
 * image, or a private folder for the benchmark, so both measure and ship the same build.
 */
export async function buildDapp(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, "dapp"), { recursive: true });

  await build({
    entryPoints: [join(root, "dapp/main.ts")],
    outfile: join(outDir, "dapp/main.js"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...NATIVE_EXTERNALS],
    // CommonJS dependencies bundled into an ES module still call require() for Node built-ins.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    legalComments: "none",
    // Smaller to parse and hold in a 128 MiB machine; names kept so error classes still read well.
    minify: true,
    keepNames: true,
    logLevel: "warning",
  });

  cpSync(join(root, "migrations"), join(outDir, "migrations"), { recursive: true });

  const manifest = {
    name: "rollup-attestation-dapp",
    private: true,
    type: "module",
    main: "dapp/main.js",
    dependencies: Object.fromEntries(NATIVE_EXTERNALS.map((name) => [name, lockedVersion(name)])),
  };
  writeFileSync(join(outDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

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
