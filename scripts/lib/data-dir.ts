/** DATA_DIR housekeeping shared by `npm start --reset` and the tests. */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, parse, relative, resolve } from "node:path";

/**
 * Empties DATA_DIR (every piece's state: chain log, devnode record, dapp database, api secrets).
 * Refuses a directory whose loss would hurt beyond the stack: a filesystem root, the home directory,
 * the project or one of its parents.
 */
export function wipeDataDir(dataDir: string, projectRoot: string): void {
  const dir = resolve(dataDir);
  const fromDirToRoot = relative(dir, resolve(projectRoot));
  const containsProject = fromDirToRoot === "" || !fromDirToRoot.startsWith("..");
  if (dir === parse(dir).root || dir === resolve(homedir()) || containsProject) {
    throw new Error(`refusing to wipe DATA_DIR=${dir}: it is not a dedicated data directory`);
  }
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
}
