/**
 * The stack's Node processes compiled once (the devnode, the indexer, the api, the publisher, the TLS
 * attestor, the demo provider), for the test suites' stacks (test/support/global-setup.ts, issue 51): run
 * through tsx, each process's every import, of the project and of node_modules, goes through tsx's loader
 * hooks on a thread of their own, which cost a process seconds of CPU at start on a loaded two-core
 * machine; the suites start hundreds. `npm start` keeps tsx (the sources as they are edited).
 *
 * Each entry becomes one ES module of the project's own code; packages stay imports, resolved from the
 * project's node_modules (the output lies under the project). Every module keeps its own `import.meta.url`
 * (its source file's), so the files it finds beside itself (migrations, contracts, the explorer) are found
 * as from the sources; the entry keeps the bundle's, which its "am I the main module" check compares with
 * the command line.
 */
import { build, type Plugin } from "esbuild";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The processes `scripts/lib/stack-pieces.ts` starts with tsx, by their source file. */
export const PROCESS_ENTRIES = ["devnode/main.ts", "api/main.ts", "api/index/main.ts", "api/publisher/main.ts", "attestor/server.ts", "scripts/demo-provider.ts"] as const;

/** Where `entry`'s compiled module is under `outDir`. */
export function compiledPath(outDir: string, entry: string): string {
  return join(outDir, entry.replace(/\.ts$/, ".mjs"));
}

function ownImportMetaUrl(entry: string): Plugin {
  return {
    name: "own-import-meta-url",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        if (args.path === entry || !source.includes("import.meta.url")) return { contents: source, loader: "ts" };
        return { contents: source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" };
      });
    },
  };
}

/**
 * Packages stay imports, as `packages: "external"` would keep them, except their JSON files (contract
 * artifacts): node does not import JSON without an import attribute, which the sources (run by tsx) omit.
 */
const packagesExternal: Plugin = {
  name: "packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.endsWith(".json") ? undefined : { path: args.path, external: true }));
  },
};

/** Compiles every entry into `outDir` (see compiledPath). */
export async function buildProcesses(outDir: string, entries: readonly string[] = PROCESS_ENTRIES): Promise<void> {
  await Promise.all(
    entries.map((entry) =>
      build({
        entryPoints: [join(root, entry)],
        outfile: compiledPath(outDir, entry),
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        plugins: [packagesExternal, ownImportMetaUrl(join(root, entry))],
        logLevel: "warning",
      }),
    ),
  );
}
