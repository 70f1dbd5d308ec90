/**
 * Once per `npm test`, before any suite (vitest's globalSetup), two builds under `.test-build/<pid>/`.
 *
 * The stack's other Node processes (the devnode and its epoch hasher's worker, the indexer, the api, the
 * publisher, the attestor and the provers, the demo provider) and the processes suites and the bench start of
 * their own (TEST_PROCESS_ENTRIES), each bundled with its packages, and the `npm run` commands in one build
 * sharing chunks, by toolkit/process-build.ts: TEST_PROCESSES_BUILT says where; the suites' stacks run the
 * processes from there, and suites that start one themselves may (test/support/stack.ts, processArgs). One
 * starts with a third of the CPU tsx takes (the api: 1.1 s against 3.8 s here). TEST_PROCESSES_TSX=1 runs
 * the sources instead.
 *
 * The dapp built into a bundle with the
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
import { buildProcesses, PROCESS_ENTRIES, scriptEntries } from "../../toolkit/process-build.ts";
import { TEST_PROCESS_ENTRIES } from "./stack.ts";

const PROJECT_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

export default async function setup(): Promise<() => void> {
  const env = process.env;
  const dir = join(PROJECT_ROOT, ".test-build", String(process.pid));
  if (env.TEST_PROCESSES_TSX !== "1") {
    await buildProcesses(join(dir, "processes"), [...PROCESS_ENTRIES, ...TEST_PROCESS_ENTRIES], scriptEntries());
    env.TEST_PROCESSES_BUILT = join(dir, "processes");
  }
  if ((env.TEST_DAPP_COMMAND ?? "") === "" && env.TEST_DAPP_BUNDLE !== "1" && env.TEST_DAPP_TSX !== "1") {
    await buildDapp(join(dir, "bundle"));
    env.TEST_DAPP_BUILT = join(dir, "bundle", "dapp", "main.js");
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
