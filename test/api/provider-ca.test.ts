/**
 * The production trust path: a child Node process that trusts the test CA only through
 * NODE_EXTRA_CA_CERTS (read at process start) and calls the public fetchProviderJson, with no test seam.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderServer, startProviderServer } from "../support/provider-server.ts";
import { type TestPki, createTestPki } from "../support/tls.ts";

const PROVIDER_MODULE = fileURLToPath(new URL("../../api/provider/index.ts", import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Prints one JSON line: {ok, body, host} or {code, details}.
const CHILD_SCRIPT = `
const { fetchProviderJson } = await import(process.env.PROVIDER_MODULE);
try {
  const result = await fetchProviderJson({ url: process.env.PROVIDER_URL, method: "GET", headers: {} },
    { allowedHosts: ["localhost"], timeoutMs: 10000, maxBodyBytes: 1048576 });
  console.log(JSON.stringify({ ok: true, ...result }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, code: error.code, details: error.details }));
}
`;

let pki: TestPki;
let server: ProviderServer;

beforeAll(async () => {
  pki = createTestPki();
  server = await startProviderServer({ tls: pki.localhost });
  server.route("/balance", { kind: "json", value: { data: { balance: "12.5" } } });
});

afterAll(async () => {
  await server?.close();
  pki?.cleanup();
});

function runChild(extraEnv: Record<string, string>): Promise<unknown> {
  const env: NodeJS.ProcessEnv = { ...process.env, PROVIDER_MODULE, PROVIDER_URL: server.url("/balance") };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_TLS_REJECT_UNAUTHORIZED;
  Object.assign(env, extraEnv);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", CHILD_SCRIPT],
      { cwd: PROJECT_ROOT, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`child failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").pop() ?? "null") as unknown);
      },
    );
  });
}

describe("NODE_EXTRA_CA_CERTS", () => {
  it("makes a local CA trusted by the unmodified fetch", async () => {
    expect(await runChild({ NODE_EXTRA_CA_CERTS: pki.ca.certPath })).toEqual({ ok: true, body: { data: { balance: "12.5" } }, host: "localhost" });
  });

  const untrusted = () => ({
    ok: false,
    code: "PROVIDER_UNAVAILABLE",
    details: {
      provider: "http",
      url: server.url("/balance"),
      error: "TLS certificate of the provider is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
    },
  });

  it("is needed: without it the same server's certificate is refused", async () => {
    expect(await runChild({})).toEqual(untrusted());
  });

  it("cannot be bypassed with NODE_TLS_REJECT_UNAUTHORIZED=0", async () => {
    expect(await runChild({ NODE_TLS_REJECT_UNAUTHORIZED: "0" })).toEqual(untrusted());
  });
});
