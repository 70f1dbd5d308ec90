import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "common/**/*.test.ts", "dapp/**/*.test.ts", "api/**/*.test.ts", "devnode/**/*.test.ts"],
    // End-to-end suites start real processes (chain, devnode, dapp, api): give them room on a 2-core machine,
    // and four times as much with an emulated riscv64 dapp (TEST_DAPP_SLOW=1, npm run riscv64 -- e2e).
    testTimeout: process.env.TEST_DAPP_SLOW === "1" ? 240_000 : 60_000,
    hookTimeout: process.env.TEST_DAPP_SLOW === "1" ? 600_000 : 180_000,
    maxWorkers: 2,
    // The longest files first, by the last run's times (test/support/sequencer.ts): both workers busy to the end.
    sequence: { sequencer: LongestFirst },
    // The dapp built once for the whole run: stacks and libcmt's replays start it without tsx (TEST_DAPP_BUILT).
    globalSetup: ["test/support/global-setup.ts"],
    // TEST_TIMES_FILE: also vitest's JSON report there, for `npm run test:times` (where the time goes; .ci/run).
    reporters: process.env.TEST_TIMES_FILE ? ["default", ["json", { outputFile: process.env.TEST_TIMES_FILE }]] : ["default"],
  },
});
