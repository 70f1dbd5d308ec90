/**
 * The stack's Node processes compiled once (the devnode, the indexer, the api, the publisher, the TLS
 * attestor, the demo provider), and the `npm run` commands, for the test suites (test/support/global-setup.ts,
 * issue 51): run
 * through tsx, each process's every import, of the project and of node_modules, goes through tsx's loader
 * hooks on a thread of their own, which cost a process seconds of CPU at start on a loaded two-core
 * machine; the suites start hundreds. `npm start` keeps tsx (the sources as they are edited).
 *
 * A process becomes one ES module of the project's code and the packages it uses, except those kept as
 * imports (KEPT_AS_IMPORTS), resolved from the project's node_modules (the output lies under the project);
 * the commands share chunks. Every module of the project keeps its own `import.meta.url`
 * (its source file's), so the files it finds beside itself (migrations, contracts, the explorer) are found
 * as from the sources, and `process.argv[1]` names the entry's source, as under tsx.
 */
import { build, type Metafile, type Plugin } from "esbuild";
import { readdirSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { compiledPath } from "./compiled-path.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The processes `scripts/lib/stack-pieces.ts` starts with tsx, by their source file, the v1 devnode's epoch hasher (a worker) and the provers the api forks. */
export const PROCESS_ENTRIES = ["devnode/main.ts", "devnode/v1/epoch-hasher-worker.ts", "api/main.ts", "api/index/main.ts", "api/publisher/main.ts", "attestor/server.ts", "attestor/prover.ts", "scripts/demo-provider.ts"] as const;

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
 * The packages that stay imports, resolved from node_modules at run time: native addons, packages that
 * find files beside their own modules (WebAssembly, circuits, workers) or run tools of their own, and
 * graphql, which must be one instance in a process (its types are checked with instanceof) where its
 * CommonJS and ES builds would both be bundled.
 */
export const KEPT_AS_IMPORTS = [
  "graphql",
  "better-sqlite3",
  "@electric-sql/pglite",
  "@reclaimprotocol/",
  "re2",
  "pg-native",
  "hardhat",
  "esbuild",
  "typescript",
  "tsx",
  "playwright-core",
  "snarkjs",
  "koffi",
  "zk-symmetric-crypto-stwo",
  "pino",
  "ioredis",
  "@redocly/openapi-core",
] as const;

function keptAsImport(specifier: string): boolean {
  return KEPT_AS_IMPORTS.some((name) => (name.endsWith("/") ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`)));
}

/**
 * Every other package is bundled into the process's module: node then reads, resolves and compiles one
 * file instead of hundreds (viem, zod, drizzle, hono...), which took a compiled devnode 0.5 s of its
 * 1.5 s of CPU to listening (issue 51).
 */
const packagesBundled: Plugin = {
  name: "packages-bundled",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (keptAsImport(args.path) ? { path: args.path, external: true } : undefined));
  },
};

/**
 * A bundled package that finds files beside its own modules would look beside the bundle instead, and fail
 * only when that code runs: the build is refused, naming the package to keep as an import.
 */
async function refuseFileBoundPackages(metafiles: readonly Metafile[]): Promise<void> {
  const files = new Set(metafiles.flatMap((metafile) => Object.keys(metafile.inputs)).filter((path) => /(^|[\\/])node_modules[\\/].*\.[cm]?js$/.test(path)));
  const refusals: string[] = [];
  for (const file of files) {
    const found = /\b__dirname\b|\b__filename\b|\bimport\.meta\.(url|dirname|filename)\b/.exec(await readFile(resolve(root, file), "utf8"));
    if (found !== null) refusals.push(`${packageOf(file)} reads ${found[0]} (${file})`);
  }
  if (refusals.length > 0) throw new Error(`bundled packages that find files beside themselves; add them to KEPT_AS_IMPORTS:\n${refusals.join("\n")}`);
}

/** The package a file of node_modules belongs to (`@scope/name` or `name`). */
function packageOf(path: string): string {
  const rest = path.slice(path.lastIndexOf("node_modules") + "node_modules".length + 1).split(/[\\/]/);
  return rest[0]?.startsWith("@") === true ? `${rest[0]}/${rest[1] ?? ""}` : (rest[0] ?? path);
}

/**
 * A bundled package written as CommonJS calls `require` for node's modules and its own files; an ES module
 * has none, so each compiled module makes one (esbuild's shim calls it).
 */
const REQUIRE_BANNER = `import { createRequire as __processBuildRequire } from "node:module"; const require = __processBuildRequire(import.meta.url);`;

const common = {
  bundle: true as const,
  platform: "node" as const,
  format: "esm" as const,
  target: "node20",
  plugins: [packagesBundled, ownImportMetaUrl],
  metafile: true as const,
  // The metafile's paths are relative to the project, whatever the caller's working directory.
  absWorkingDir: root,
  logLevel: "warning" as const,
};

/** The line that makes the command line name the entry's source (below). */
const argvLine = (entry: string): string => `process.argv[1] = ${JSON.stringify(join(root, entry))};`;

/**
 * Compiles every entry into `outDir` (see compiledPath): `own`, the long-lived processes, each into one
 * module of its own (a process started from shared chunks took a third more CPU to start: the chunks hold
 * what any entry uses); `shared`, the commands, in one build whose entries share chunks (one build instead
 * of one each: 10 s less before every run).
 */
export async function buildProcesses(outDir: string, own: readonly string[] = PROCESS_ENTRIES, shared: readonly string[] = []): Promise<void> {
  const [owned, sharing] = await Promise.all([
    Promise.all(
      own.map((entry) =>
        build({
          ...common,
          entryPoints: [join(root, entry)],
          outfile: compiledPath(outDir, entry),
          // The command line names the source, as under tsx: "am I the main module" checks compare it with
          // the entry's own import.meta.url, which is the source's too.
          banner: { js: `${REQUIRE_BANNER} ${argvLine(entry)}` },
        }),
      ),
    ),
    shared.length === 0 ? undefined : buildShared(outDir, shared),
  ]);
  await refuseFileBoundPackages([...owned.map((result) => result.metafile), ...(sharing === undefined ? [] : [sharing])]);
}

async function buildShared(outDir: string, entries: readonly string[]): Promise<Metafile> {
  const result = await build({
    ...common,
    entryPoints: entries.map((entry) => join(root, entry)),
    outdir: outDir,
    outbase: root,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    splitting: true,
    banner: { js: REQUIRE_BANNER },
    write: false,
  });
  const entryOf = new Map(Object.entries(result.metafile.outputs).flatMap(([path, output]) => (output.entryPoint === undefined ? [] : [[resolve(root, path), output.entryPoint] as const])));
  await Promise.all(
    result.outputFiles.map(async (file) => {
      await mkdir(dirname(file.path), { recursive: true });
      const entry = entryOf.get(file.path);
      if (entry === undefined) return writeFile(file.path, file.contents);
      // The command line names the source, set by a module imported first, so before any chunk's code runs.
      const argvModule = file.path.replace(/\.mjs$/, ".argv.mjs");
      await writeFile(argvModule, `${argvLine(entry)}\n`);
      return writeFile(file.path, `import ${JSON.stringify(`./${basename(argvModule)}`)};\n${file.text}`);
    }),
  );
  return result.metafile;
}
