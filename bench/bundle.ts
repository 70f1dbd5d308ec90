/**
 * The dapp the bench measures is the bundle the Cartesi machine runs (`npm run build`), not the tsx
 * sources: memory in particular depends on it. The bench builds its own copy, with scripts/build.ts's
 * esbuild settings, under the project (so `better-sqlite3` resolves from node_modules) and never touches
 * dist/, which other tools may be using.
 */
import { build } from "esbuild";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { NATIVE_EXTERNALS } from "../scripts/build.ts";

export interface DappBundle {
  /** `node <main>` runs the dapp. */
  main: string;
  dir: string;
  remove(): void;
}

export async function buildDappBundle(root: string, dir: string): Promise<DappBundle> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "dapp"), { recursive: true });
  const main = join(dir, "dapp", "main.js");
  // Keep in step with scripts/build.ts (same entry, format, target, externals, banner and minification).
  await build({
    entryPoints: [join(root, "dapp/main.ts")],
    outfile: main,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...NATIVE_EXTERNALS],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    legalComments: "none",
    minify: true,
    keepNames: true,
    logLevel: "warning",
  });
  cpSync(join(root, "migrations"), join(dir, "migrations"), { recursive: true });
  return { main, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
