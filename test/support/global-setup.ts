/**
 * Once per `npm test`, before any suite (vitest's globalSetup): the dapp built into a bundle with the
 * build `npm run build` and the image use (toolkit/dapp-build.ts), under the project so `better-sqlite3`
 * resolves from node_modules. The stacks the suites start, and libcmt's replays, run it as `node main.js`:
 * the same code tsx would run from the sources, what ships, and a dapp process ready in about half a
 * second where tsx takes three on a loaded two-core machine (tests start hundreds of dapp processes; issue
 * 51). TEST_DAPP_BUILT says where it is. Not built when a suite is told to run another dapp
 * (TEST_DAPP_COMMAND: the riscv64 one; TEST_DAPP_BUNDLE=1: dist/'s) or with TEST_DAPP_TSX=1 (the sources).
 */
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDapp } from "../../toolkit/dapp-build.ts";

const PROJECT_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

export default async function setup(): Promise<(() => void) | undefined> {
  const env = process.env;
  if ((env.TEST_DAPP_COMMAND ?? "") !== "" || env.TEST_DAPP_BUNDLE === "1" || env.TEST_DAPP_TSX === "1") return undefined;
  const dir = join(PROJECT_ROOT, ".test-build", String(process.pid));
  await buildDapp(dir);
  env.TEST_DAPP_BUILT = join(dir, "dapp", "main.js");
  return () => rmSync(dir, { recursive: true, force: true });
}
