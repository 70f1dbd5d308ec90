import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/sequencer.ts";
import { processSuites, testFiles } from "./test/support/test-kinds.ts";

const ROOT = import.meta.dirname;
const FILES = testFiles(ROOT, ["test", "common", "dapp", "api", "devnode"]);
// Suites that start processes (test/support/test-kinds.ts): each in a process of its own.
const PROCESS_SUITES = processSuites(ROOT, FILES);
const UNIT_FILES = FILES.filter((file) => !PROCESS_SUITES.includes(file));

export default defineConfig({
  test: {
    // End-to-end suites start real processes (chain, devnode, dapp, api): give them room on a 2-core machine,
    // and four times as much with an emulated riscv64 dapp (TEST_DAPP_SLOW=1, npm run riscv64 -- e2e).
    testTimeout: process.env.TEST_DAPP_SLOW === "1" ? 240_000 : 60_000,
    hookTimeout: process.env.TEST_DAPP_SLOW === "1" ? 600_000 : 180_000,
    // Both projects share the two workers: the unit files fill a core while a suite waits on its stack.
    maxWorkers: 2,
    // The longest files first, by the last run's times (test/support/sequencer.ts): both workers busy to the end.
    sequence: { sequencer: LongestFirst },
    // The dapp built once for the whole run: stacks and libcmt's replays start it without tsx (TEST_DAPP_BUILT).
    globalSetup: ["test/support/global-setup.ts"],
    // TEST_TIMES_FILE: also vitest's JSON report there, for `npm run test:times` (where the time goes; .ci/run).
    reporters: process.env.TEST_TIMES_FILE ? ["default", ["json", { outputFile: process.env.TEST_TIMES_FILE }]] : ["default"],
    projects: [
      // Code in the test's own process only: threads that keep their modules from file to file (no fresh
      // process, no second load of viem, zod and the project per file: issue 51).
      { extends: true, test: { name: "unit", include: UNIT_FILES, pool: "threads", isolate: false } },
      // Suites that start chains, nodes, dapps, apis or commands: a process each. Kept apart because a suite's
      // libraries may change its globals: shared, one suite's `fetch` answered with a Response that was not
      // the next suite's `Response` (seen in a run; it saved 2% of the wall time).
      { extends: true, test: { name: "process", include: PROCESS_SUITES, pool: "forks" } },
    ],
  },
});
