import { defineConfig } from "vitest/config";
export default defineConfig({
  test: {
    root: "/work/main",
    include: [process.env.ONE_FILE ?? "test/api/https-claim.e2e.test.ts"],
    pool: "forks",
    globalSetup: ["test/support/global-setup.ts"],
    experimental: { importDurations: { print: true, limit: 30 } },
  },
});
