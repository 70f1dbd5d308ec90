/**
 * A secret kept in a file of DATA_DIR, made on first use: the api's development JWT secret, the attestor's
 * and the provers' signing keys. `wx` so two processes starting together never overwrite each other's.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The trimmed contents of `dataDir/name`, written first with `make()` when the file is missing. */
export function secretInDataDir(dataDir: string, name: string, make: () => string): { value: string; file: string } {
  const file = join(resolve(dataDir), name);
  if (!existsSync(file)) {
    mkdirSync(resolve(dataDir), { recursive: true });
    try {
      writeFileSync(file, `${make()}\n`, { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return { value: readFileSync(file, "utf8").trim(), file };
}
