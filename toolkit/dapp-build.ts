/**
 * The dapp as the image builds and runs it, for every tool that needs the same thing: `npm run build`
 * (scripts/build.ts) and the image's bundle stage (this file run alone) write the bundle with `buildDapp`;
 * the bench builds its own copy with it (bench/bundle.ts); the riscv64 root file system
 * (toolkit/riscv64.ts) and the bench start the dapp with the node flags the image sets (`imageNodeFlags`)
 * and check the node major it runs (`imageNodeMajor`), both read from Dockerfile.cartesi so there is one
 * place to change them.
 *
 *   <out>/dapp/main.js      the dapp and all its pure-JS dependencies in one ES module
 *   <out>/migrations/       drizzle-kit's migrations, beside it so `../migrations` resolves as in the sources
 *   <out>/package.json      the native dependencies (NATIVE_EXTERNALS), pinned to the lock file's versions,
 *                           for the image's riscv64 stage to install; they cannot live inside a bundle
 */
import { build } from "esbuild";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

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

/**
 * Packages the bundle must not contain: native addons, installed for the target machine instead
 * (better-sqlite3 compiled there; @cartesi/rollup, loaded only with DAPP_TRANSPORT=libcmt, from its prebuild).
 */
export const NATIVE_EXTERNALS = ["better-sqlite3", "@cartesi/rollup"] as const;

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

/**
 * The NODE_OPTIONS the image sets for the dapp (the last `ENV NODE_OPTIONS=` of Dockerfile.cartesi, the
 * runtime stage's), as separate flags. Read from the Dockerfile so the bench measures the dapp exactly
 * as the machine runs it, memory included, with one place to change.
 */
export function imageNodeFlags(root: string): string[] {
  const text = readFileSync(join(root, "Dockerfile.cartesi"), "utf8");
  const matches = [...text.matchAll(/^ENV\s+NODE_OPTIONS=(?:"([^"]*)"|(\S+))\s*$/gm)];
  const last = matches[matches.length - 1];
  const value = last?.[1] ?? last?.[2] ?? "";
  return value.split(/\s+/).filter((flag) => flag.length > 0);
}

/** The node major the image runs (Dockerfile.cartesi's `ARG NODE_VERSION`): the riscv64 recipe must match it. */
export function imageNodeMajor(root: string): number {
  const text = readFileSync(join(root, "Dockerfile.cartesi"), "utf8");
  const version = /^ARG\s+NODE_VERSION=(\d+)\./m.exec(text)?.[1];
  if (version === undefined) throw new Error("Dockerfile.cartesi has no ARG NODE_VERSION=<major>.<minor>.<patch>");
  return Number(version);
}

// The image's bundle stage runs this file alone (`npx tsx toolkit/dapp-build.ts dist`): it has only
// common/, dapp/ and migrations/ beside it, so it must import nothing else of the project.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outDir = process.argv[2];
  if (outDir === undefined || process.argv.length > 3) {
    process.stderr.write("usage: tsx toolkit/dapp-build.ts <out dir>\n");
    process.exit(2);
  }
  await buildDapp(resolve(outDir));
  process.stdout.write(`built ${join(outDir, "dapp/main.js")} (+ migrations, package.json pinning ${NATIVE_EXTERNALS.join(", ")})\n`);
}
