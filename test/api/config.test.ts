import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../api/config.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "api-config-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({ DATA_DIR: tempDir() });
    expect(config).toMatchObject({
      port: 8001,
      host: "0.0.0.0",
      rollupUrl: "http://127.0.0.1:10000",
      graphqlUrl: "http://127.0.0.1:10000/graphql",
      rpcUrl: "http://127.0.0.1:8545",
      chainId: 31337,
      inputBoxAddress: "0x59b22D57D4f067708AB0c00552767405926dc768",
      dappAddress: "0xab7528bb862fB57E8A2BCd567a2e929a0Be56a5e",
      privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
      providerAllowedHosts: [],
      rateLimits: true,
      trustProxy: false,
      writeBatch: { maxItems: 256, maxBytes: 122_880 },
    });
  });

  it("derives GRAPHQL_URL from ROLLUP_URL and parses lists and flags", () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      ROLLUP_URL: "http://node:10000/",
      PROVIDER_ALLOWED_HOSTS: " 127.0.0.1, Example.com ,",
      RATE_LIMITS: "off",
      TRUST_PROXY: "true",
      VERDICT_TIMEOUT_MS: "5000",
      PROVIDER_TIMEOUT_MS: "2500",
      ROLLUP_READ_TIMEOUT_MS: "1500",
      RPC_TIMEOUT_MS: "2000",
      WRITE_BATCH_MAX_ITEMS: "1",
      WRITE_BATCH_MAX_BYTES: "4096",
      WRITE_IN_FLIGHT: "2",
      REDIS_URL: "redis://:secret@cache:6379/0",
      API_REPLICA: "api-3",
    });
    expect(config.writeBatch).toEqual({ maxItems: 1, maxBytes: 4096, inFlight: 2 });
    expect([config.redisUrl, config.replica]).toEqual(["redis://:secret@cache:6379/0", "api-3"]);
    expect(loadConfig({ DATA_DIR: tempDir() })).toMatchObject({ writeBatch: { inFlight: 1 }, redisUrl: undefined, replica: "api" });
    expect(config.graphqlUrl).toBe("http://node:10000/graphql");
    expect(config.providerAllowedHosts).toEqual(["127.0.0.1", "example.com"]);
    expect(config.rateLimits).toBe(false);
    expect(config.trustProxy).toBe(true);
    expect(config.verdictTimeoutMs).toBe(5000);
    expect([config.providerTimeoutMs, config.rollupReadTimeoutMs, config.rpcTimeoutMs]).toEqual([2500, 1500, 2000]);
    expect(loadConfig({ DATA_DIR: tempDir() })).toMatchObject({ providerTimeoutMs: 10_000, rollupReadTimeoutMs: 10_000, rpcTimeoutMs: 10_000 });
  });

  it.each([
    ["API_PORT", "eighty"],
    ["API_PORT", "70000"],
    ["ROLLUP_URL", "ftp://node"],
    ["RPC_URL", "not a url"],
    ["CHAIN_ID", "-1"],
    ["DAPP_ADDRESS", "0x1234"],
    ["PRIVATE_KEY", "0xabc"],
    ["RATE_LIMITS", "sometimes"],
    ["JWT_SECRET", "short"],
    ["WRITE_BATCH_MAX_ITEMS", "257"],
    ["WRITE_BATCH_MAX_ITEMS", "0"],
    ["WRITE_BATCH_MAX_BYTES", "200000"],
    ["PROVIDER_TIMEOUT_MS", "50"],
    ["ROLLUP_READ_TIMEOUT_MS", "ten seconds"],
    ["RPC_TIMEOUT_MS", "600000"],
    ["ATTESTOR_URL", "http://127.0.0.1:8003"],
    ["ATTESTOR_MODE", "fast"],
    ["ATTESTOR_PROVERS", "0"],
    ["ATTESTOR_CA_FILES", "/no/such/ca.pem"],
    ["PROVER_PRIVATE_KEY", "0x12"],
    ["PROVER_MODULE", "/no/such/prover.mjs"],
    ["WRITE_IN_FLIGHT", "0"],
    ["REDIS_URL", "http://cache:6379"],
    ["API_REPLICA", "api 1"],
    ["READ_URLS", "reader-1:10101"],
    ["READ_URLS", "http://r1:10101,http://r1:10101"],
    ["READ_URLS", " , "],
    ["READ_WAIT_MS", "-5"],
    ["READER_POLL_MS", "5"],
    ["READER_TIMEOUT_MS", "soon"],
  ])("rejects a bad %s naming the variable", (variable, value) => {
    let thrown: unknown;
    try {
      loadConfig({ DATA_DIR: tempDir(), [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe(variable);
    expect((thrown as ConfigError).message).toContain(variable);
  });

  it("forks the compiled prover PROVER_MODULE names, else the source through tsx", () => {
    const dir = tempDir();
    expect(loadConfig({ DATA_DIR: dir }).attestor.proverModule).toBeUndefined();
    // Any file that is there: the pool forks it as node's module.
    const module = join(dir, "prover.mjs");
    writeFileSync(module, "");
    expect(loadConfig({ DATA_DIR: dir, PROVER_MODULE: module }).attestor.proverModule).toBe(module);
  });

  it("takes the registry and the gate together or not at all, naming the one missing", () => {
    const registry = "0x850EC3780CeDfdb116E38B009d0bf7a1ef1b8b38";
    const gate = "0x1ACcBD355245AbA93CE46D33ab1D0152CE33Fd00";
    expect(loadConfig({ DATA_DIR: tempDir() }).contracts).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tempDir(), REGISTRY_ADDRESS: registry, GATE_ADDRESS: gate }).contracts).toEqual({ registry, gate });
    for (const [env, missing] of [
      [{ REGISTRY_ADDRESS: registry }, "GATE_ADDRESS"],
      [{ GATE_ADDRESS: gate }, "REGISTRY_ADDRESS"],
    ] as const) {
      let thrown: unknown;
      try {
        loadConfig({ DATA_DIR: tempDir(), ...env });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).variable).toBe(missing);
      expect((thrown as ConfigError).message).toBe(`invalid configuration: ${missing}: the registry and the gate go together (npm run deploy-contracts deploys both)`);
    }
  });

  it("reads from the node unless READ_URLS names readers; then their list and waits", () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).reads).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tempDir(), READ_URLS: " http://r1:10101/, http://r2:10101 ", READ_WAIT_MS: "0" }).reads).toEqual({
      urls: ["http://r1:10101", "http://r2:10101"],
      waitMs: 0,
      pollMs: 250,
      timeoutMs: 3000,
    });
  });

  it("generates a JWT secret into DATA_DIR on first start and reuses it", () => {
    const dir = tempDir();
    const first = loadConfig({ DATA_DIR: dir });
    const file = join(dir, "jwt-secret");
    expect(existsSync(file)).toBe(true);
    const second = loadConfig({ DATA_DIR: dir });
    expect(Buffer.from(second.jwtSecret).toString()).toBe(Buffer.from(first.jwtSecret).toString());
    expect(Buffer.from(first.jwtSecret).toString()).toBe(readFileSync(file, "utf8").trim());
  });

  it("prefers JWT_SECRET and writes nothing then", () => {
    const dir = tempDir();
    const config = loadConfig({ DATA_DIR: dir, JWT_SECRET: "x".repeat(40) });
    expect(Buffer.from(config.jwtSecret).toString()).toBe("x".repeat(40));
    expect(existsSync(join(dir, "jwt-secret"))).toBe(false);
  });
});
