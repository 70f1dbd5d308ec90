/**
 * The api in the test's own process: the app wired to nothing (offlineApi) or a second api beside a
 * running stack (startApiOn). Apart from test/support/api-fixtures.ts because importing the api costs a
 * suite's process about 2 s (issue 51): only the suites that run one pay it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../api/app.ts";
import { loadConfig, type ApiConfig } from "../../api/config.ts";
import { startApi, type RunningApi } from "../../api/main.ts";
import { createServices, type ApiServices } from "../../api/services.ts";
import { closedPort, TEST_JWT_SECRET } from "./api-fixtures.ts";

export interface OfflineApi {
  config: ApiConfig;
  services: ApiServices;
  app: ReturnType<typeof createApi>;
  errors: unknown[];
  cleanup(): void;
}

/** The real app wired to a rollup and a chain that refuse connections: for everything that fails before or at them. */
export async function offlineApi(env: Record<string, string> = {}): Promise<OfflineApi> {
  const dataDir = mkdtempSync(join(tmpdir(), "api-test-"));
  const down = await closedPort();
  const config = loadConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: dataDir,
    ROLLUP_URL: `http://127.0.0.1:${down}`,
    RPC_URL: `http://127.0.0.1:${down}`,
    ATTESTOR_URL: `ws://127.0.0.1:${down}/ws`,
    INDEX_URL: `http://127.0.0.1:${down}`,
    // In-process apis would write their request lines into the test runner's output.
    LOG_LEVEL: "silent",
    ...env,
  });
  const services = createServices(config);
  const errors: unknown[] = [];
  const app = createApi(services, { logError: (error) => errors.push(error) });
  return { config, services, app, errors, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/**
 * A second api process-in-the-test against a running stack's node and chain, on a free port, with the
 * test secret and no rate limits; `env` overrides (another wallet, a broken URL...). Stop it after use.
 */
export function startApiOn(stack: { urls: { node: string; rpc: string }; dataDir: string; rollups?: "v1" | "v2" }, env: Record<string, string> = {}): Promise<RunningApi> {
  return startApi(
    loadConfig({
      ROLLUPS: stack.rollups ?? "v1",
      API_PORT: "0",
      HOST: "127.0.0.1",
      ROLLUP_URL: stack.urls.node,
      RPC_URL: stack.urls.rpc,
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: stack.dataDir,
      RATE_LIMITS: "off",
      LOG_LEVEL: "warn",
      ...env,
    }),
  );
}
