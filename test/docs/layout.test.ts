/**
 * The house as docs/layout.md describes it: which room imports which, the devnode's core and its versions,
 * the dapp's transports,
 * no cycles inside the devnode, and no source file above 450 lines. Read from the sources themselves.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const ROOMS = ["api", "attestor", "bench", "client", "common", "contracts", "dapp", "devnode", "explorer", "scripts", "test", "toolkit"];
/** What each room may import besides itself (docs/layout.md). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  dapp: ["common"],
  devnode: ["common"],
  api: ["common"],
  attestor: ["common"],
  client: ["common"],
  explorer: ["common"],
  common: [],
  contracts: [],
  toolkit: [],
  scripts: ROOMS.filter((r) => r !== "test" && r !== "scripts"),
  bench: ROOMS.filter((r) => r !== "scripts" && r !== "bench"),
  test: ROOMS.filter((r) => r !== "test"),
};
const GENERATED = new Set(["client/schema.d.ts"]);

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist") return [];
    if (statSync(join(root, path)).isDirectory()) return sourcesUnder(path);
    return /\.(ts|tsx|mjs|cjs|js)$/.test(name) ? [path] : [];
  });
}

/** The project files a source imports, as paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(/(?:from|import\()\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) => relative(root, resolve(root, dirname(file), m[1] as string)));
}

const sources = ROOMS.flatMap(sourcesUnder);
const roomOf = (path: string): string => path.split("/")[0] as string;

describe("the house (docs/layout.md)", () => {
  it("each room imports only the rooms it may", () => {
    const stray = sources.flatMap((file) => {
      const room = roomOf(file);
      return importsOf(file)
        .filter((target) => roomOf(target) !== room && !(MAY_IMPORT[room] ?? []).includes(roomOf(target)))
        .map((target) => `${file} -> ${target}`);
    });
    expect(stray).toEqual([]);
  });

  it("the devnode's core imports no version, and no version imports the other (main.ts wires them)", () => {
    const versionOf = (path: string): string | undefined => /^devnode\/(v1|v2)\//.exec(path)?.[1];
    const stray = sources
      .filter((file) => file.startsWith("devnode/") && file !== "devnode/main.ts")
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => target.startsWith("devnode/") && versionOf(target) !== undefined && versionOf(target) !== versionOf(file))
          .map((target) => `${file} -> ${target}`),
      );
    expect(stray).toEqual([]);
  });

  it("the dapp's handlers know no transport: only main.ts picks one, and neither transport imports the other", () => {
    const transportOf = (path: string): string | undefined => /^dapp\/transports\/(libcmt|http)/.exec(path)?.[1];
    const stray = sources
      .filter((file) => file.startsWith("dapp/") && file !== "dapp/main.ts")
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => transportOf(target) !== undefined && transportOf(target) !== transportOf(file))
          .map((target) => `${file} -> ${target}`),
      );
    expect(stray).toEqual([]);
    // The addon is loaded by the libcmt transport alone, so a dapp on the rollup HTTP server never needs it.
    const addon = sources.filter((file) => file.startsWith("dapp/") && /["']@cartesi\/rollup["']/.test(readFileSync(join(root, file), "utf8")));
    expect(addon).toEqual(["dapp/transports/libcmt.ts"]);
  });

  it("there is no import cycle inside the devnode", () => {
    const graph = new Map(sources.filter((f) => f.startsWith("devnode/")).map((f) => [f, importsOf(f).filter((t) => t.startsWith("devnode/"))]));
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (node: string, path: string[]): void => {
      if (state.get(node) === "done") return;
      if (state.get(node) === "open") {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
        return;
      }
      state.set(node, "open");
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, "done");
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });

  it("no source file passes 450 lines (generated ones aside)", () => {
    const long = sources
      .filter((file) => !GENERATED.has(file))
      .map((file) => ({ file, lines: readFileSync(join(root, file), "utf8").split("\n").length - 1 }))
      .filter((f) => f.lines > 450)
      .map((f) => `${f.file}: ${f.lines}`);
    expect(long).toEqual([]);
  });
});
