/**
 * Where toolkit/process-build.ts puts an entry's compiled module: apart from the build, so that what only
 * runs a compiled process (the stack's supervisor) loads neither esbuild nor TypeScript's parser.
 */
import { join } from "node:path";

/** Where `entry`'s compiled module is under `outDir`. */
export function compiledPath(outDir: string, entry: string): string {
  return join(outDir, entry.replace(/\.ts$/, ".mjs"));
}
