/**
 * The stack's Node processes compiled once (the devnode, the indexer, the api, the publisher, the TLS
 * attestor, the demo provider), and the `npm run` commands, for the test suites (test/support/global-setup.ts,
 * issue 51): run
 * through tsx, each process's every import, of the project and of node_modules, goes through tsx's loader
 * hooks on a thread of their own, which cost a process seconds of CPU at start on a loaded two-core
 * machine; the suites start hundreds. `npm start` keeps tsx (the sources as they are edited).
 *
 * Each entry becomes one ES module of the project's own code; packages stay imports, resolved from the
 * project's node_modules (the output lies under the project). Every module keeps its own `import.meta.url`
 * (its source file's), so the files it finds beside itself (migrations, contracts, the explorer) are found
 * as from the sources, and `process.argv[1]` names the entry's source, as under tsx.
 */
import { build, type Plugin } from "esbuild";
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { compiledPath } from "./compiled-path.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The processes `scripts/lib/stack-pieces.ts` starts with tsx, by their source file, and the provers the api forks. */
export const PROCESS_ENTRIES = ["devnode/main.ts", "api/main.ts", "api/index/main.ts", "api/publisher/main.ts", "attestor/server.ts", "attestor/prover.ts", "scripts/demo-provider.ts"] as const;

/** The `npm run` commands (scripts/*.ts), which suites also start (their usage, their refusals, their work). */
export function scriptEntries(): string[] {
  return readdirSync(join(root, "scripts"))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `scripts/${name}`);
}


/** Where `source` reads `import.meta.url` (the expression, not the words in a string or a comment). */
function importMetaUrlSpans(path: string, source: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === "url" && ts.isMetaProperty(node.expression) && node.expression.keywordToken === ts.SyntaxKind.ImportKeyword) {
      spans.push({ start: node.getStart(), end: node.getEnd() });
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true));
  return spans;
}

const ownImportMetaUrl: Plugin = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      let source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta")) return { contents: source, loader: "ts" };
      const url = JSON.stringify(pathToFileURL(args.path).href);
      // From the end, so that earlier offsets stay right.
      for (const { start, end } of importMetaUrlSpans(args.path, source).reverse()) source = `${source.slice(0, start)}${url}${source.slice(end)}`;
      return { contents: source, loader: "ts" };
    });
  },
};

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
        plugins: [packagesExternal, ownImportMetaUrl],
        // The command line names the source, as under tsx: "am I the main module" checks compare it with
        // the entry's own import.meta.url, which is the source's too.
        banner: { js: `process.argv[1] = ${JSON.stringify(join(root, entry))};` },
        logLevel: "warning",
      }),
    ),
  );
}
