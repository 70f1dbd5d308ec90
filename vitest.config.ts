import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "common/**/*.test.ts", "dapp/**/*.test.ts", "api/**/*.test.ts", "devnode/**/*.test.ts"],
    // End-to-end suites start real processes (chain, devnode, dapp, api): give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    reporters: ["default"],
  },
});
