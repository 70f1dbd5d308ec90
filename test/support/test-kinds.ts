/**
 * Which test files start other processes (a chain, a node, a dapp, an api, an attestor, a browser, a
 * command) and which run only code of their own: vitest.config.ts runs the latter in threads that keep the
 * modules they loaded from one file to the next (issue 51: each file in a fresh process loaded viem, zod and
 * the project again, a minute and a half of CPU over the unit files), and the former each in a process of
 * its own, so that what one leaves running cannot touch the next.
 *
 * A file starts processes when it, or a helper of test/ it imports (at any depth), names one of the ways
 * the suites start them. Read from the sources at each run, so a new suite is placed without a list to keep.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** How the suites start processes: their own spawns and forks, and the helpers that start stacks and servers. */
const STARTS_PROCESSES = /(?<![.\w])(spawn|spawnSync|fork|execFile|execFileSync|execSync|exec)\(|\bstartStack\b|\bstartAttestorProcess\b|\bstartPostgres\b|\bprocessArgs\b|\bchromium\b|\brunProjectScript\b/;

function relativeImports(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    const target = resolve(dirname(file), match[1] as string);
    if (existsSync(target)) found.push(target);
  }
  return found;
}

/** Whether `file` (absolute), or a helper under `testDir` it imports, starts processes. */
function startsProcesses(file: string, testDir: string, seen: Map<string, boolean>): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false);
  const text = readFileSync(file, "utf8");
  const starts =
    STARTS_PROCESSES.test(text) ||
    relativeImports(file, text)
      .filter((target) => !relative(testDir, target).startsWith(".."))
      .some((target) => startsProcesses(target, testDir, seen));
  seen.set(file, starts);
  return starts;
}

/** Of `files` (relative to `root`), those that start processes. */
export function processSuites(root: string, files: readonly string[]): string[] {
  const seen = new Map<string, boolean>();
  const testDir = join(root, "test");
  return files.filter((file) => startsProcesses(join(root, file), testDir, seen));
}

/** The test files (`*.test.ts`) under `dirs` of `root`, relative to it. */
export function testFiles(root: string, dirs: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === "node_modules" ? [] : walk(path);
      return entry.name.endsWith(".test.ts") ? [path] : [];
    });
  return dirs.flatMap(walk).sort();
}
