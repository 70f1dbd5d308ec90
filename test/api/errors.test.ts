/**
 * Validation and the mapping of failures to the wire, through app.request() against a rollup and a
 * chain that refuse connections (so every request fails at the step under test, or at them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../api/app.ts";
import { packageVersion } from "../../api/services.ts";
import { bearer, JSON_HEADERS, PROVIDER_SCHEMA_BODY, tokenFor, USER_A, type ErrorShape } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

let api: OfflineApi;
let admin: Record<string, string>;
let user: Record<string, string>;
beforeAll(async () => {
  api = await offlineApi({ RATE_LIMITS: "off" });
  admin = bearer(await tokenFor("admin", USER_A));
  user = bearer(await tokenFor("user", USER_A));
});
afterAll(() => api.cleanup());

async function call(path: string, init: RequestInit = {}) {
  const response = await api.app.request(path, init);
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as ErrorShape & { success: boolean; data?: unknown }, text };
}

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  call(path, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const validSchema = PROVIDER_SCHEMA_BODY;

describe("request validation", () => {
  it("malformed JSON: 400 INVALID_REQUEST with {field, issue}", async () => {
    const { status, body } = await post("/api/core/provider-schema", "{not json", admin);
    expect(status).toBe(400);
    expect(body.error.code).toBe("INVALID_REQUEST");
    expect(body.error.details).toEqual({ field: "body", issue: expect.stringMatching(/^malformed JSON/) });
  });

  it("an empty body is a missing body", async () => {
    const { status, body } = await post("/api/core/encryption-key", "", admin);
    expect(status).toBe(400);
    expect(body.error.details).toEqual({ field: "body", issue: "required" });
  });

  it("a non-JSON content type is refused", async () => {
    const { status, body } = await post("/api/core/provider-schema", "a=b", { ...admin, "content-type": "application/x-www-form-urlencoded" });
    expect(status).toBe(400);
    expect(body.error.details?.field).toBe("Content-Type");
  });

  it.each(["provider", "flowType", "domain", "bucketDefinitions", "dataKeys", "freshnessHalfLife"])(
    "registration without %s names the field",
    async (field) => {
      const partial: Record<string, unknown> = { ...validSchema };
      delete partial[field];
      const { status, body } = await post("/api/core/provider-schema", partial, admin);
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: "INVALID_REQUEST", details: { field, issue: "required" } });
    },
  );

  it.each([
    [{ boundaries: [0, 10], labels: ["a", "b", "c"] }, /labels must number/],
    [{ boundaries: [10, 0], labels: ["a"] }, /strictly ascending/],
    [{ boundaries: [0, 10], labels: ["a", "a"] }, /repeats/],
    [{ boundaries: [], labels: ["a"] }, /must not be empty/],
  ])("an invalid bucket definition is INVALID_REQUEST at its field (%j)", async (definition, issue) => {
    const { status, body } = await post(
      "/api/core/provider-schema",
      { ...validSchema, bucketDefinitions: { score: definition } },
      admin,
    );
    expect(status).toBe(400);
    expect(body.error.details).toEqual({ field: "bucketDefinitions.score", issue: expect.stringMatching(issue) });
  });

  it("a wrong type is INVALID_REQUEST with the issue", async () => {
    const { body } = await post("/api/core/provider-schema", { ...validSchema, freshnessHalfLife: "1h" }, admin);
    expect(body.error.details).toEqual({ field: "freshnessHalfLife", issue: expect.any(String) });
    expect(body.error.details?.issue).not.toBe("required");
  });

  it("a body over 64 KiB is INVALID_REQUEST", async () => {
    const { status, body } = await post("/api/core/provider-schema", { ...validSchema, description: "x".repeat(70 * 1024) }, admin);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "body" } });
  });

  it.each([
    ["publicKey", { publicKey: "not base64!", algorithm: "nacl-box" }, "publicKey that is not base64"],
    ["publicKey", { publicKey: Buffer.alloc(24).toString("base64"), algorithm: "nacl-box" }, "publicKey of 24 bytes"],
    ["algorithm", { publicKey: Buffer.alloc(32, 7).toString("base64"), algorithm: "rsa" }, 'algorithm "rsa"'],
    ["type", { publicKey: 42, algorithm: "nacl-box" }, "publicKey of type number"],
  ])("a malformed key (%s) is 400 INVALID_KEY_FORMAT {expected, received}", async (_what, key, received) => {
    const { status, body } = await post("/api/core/encryption-key", key, admin);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "INVALID_KEY_FORMAT", details: { expected: expect.any(String), received } });
  });

  it("a key request without publicKey is INVALID_REQUEST naming it", async () => {
    const { body } = await post("/api/core/encryption-key", { algorithm: "nacl-box" }, admin);
    expect(body.error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "publicKey", issue: "required" } });
  });

  it("claims validate provider, URL and bucket definition", async () => {
    const claim = {
      provider: "http",
      params: { url: "http://127.0.0.1:1/x", method: "GET", headers: {} },
      bucketDefinition: { field: "v", boundaries: [0, 10], labels: ["a"] },
    };
    expect((await post("/api/core/claim", { ...claim, provider: "ftp" }, user)).body.error.details).toMatchObject({ field: "provider" });
    expect((await post("/api/core/claim", { ...claim, params: { ...claim.params, url: "::" } }, user)).body.error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.url" } });
    expect((await post("/api/core/claim", { ...claim, bucketDefinition: { field: "v", boundaries: [1, 0], labels: ["a"] } }, user)).body.error.details).toMatchObject({ field: "bucketDefinition" });
    expect((await post("/api/core/claim", { provider: "http", params: claim.params }, user)).body.error.details).toEqual({ field: "bucketDefinition", issue: "required" });
    expect((await post("/api/core/claim", claim, {})).body.error.code).toBe("AUTH_MISSING");
  });

  it("grants validate requester, schemaId and a future expiresAt", async () => {
    const grant = { requester: USER_A, schemaId: "0x" + "ab".repeat(32), expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    expect((await post("/api/core/grant", { ...grant, requester: "bob" }, user)).body.error.details).toMatchObject({ field: "requester" });
    expect((await post("/api/core/grant", { ...grant, schemaId: "0x12" }, user)).body.error.details).toMatchObject({ field: "schemaId" });
    expect((await post("/api/core/grant", { ...grant, expiresAt: 1.5 }, user)).body.error.details).toMatchObject({ field: "expiresAt" });
    expect((await post("/api/core/grant", { ...grant, expiresAt: 1000 }, user)).body.error.details).toMatchObject({ field: "expiresAt" });
  });
});

describe("path parameters", () => {
  it.each([
    ["/api/core/attestations/0x1234", "address", "0x1234"],
    ["/api/core/access/nobody/0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "owner", "nobody"],
    ["/api/core/access/0x70997970C51812dc3A010C7d01b50e0d17dc79C8/0xZZ", "requester", "0xZZ"],
  ])("%s: 400 INVALID_PARAMETER {parameter, value, expected}", async (path, parameter, value) => {
    const { status, body } = await call(path);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter, value, expected: expect.any(String) } });
  });

  it("an id that cannot be a hash is not found without asking the rollup", async () => {
    const schema = await call("/api/core/schemas/no-such-schema");
    expect(schema.status).toBe(404);
    expect(schema.body.error).toMatchObject({ code: "SCHEMA_NOT_FOUND", details: { schema_id: "no-such-schema" } });
    const claim = await call("/api/core/attestation/nope");
    expect(claim.status).toBe(404);
    expect(claim.body.error).toMatchObject({ code: "ATTESTATION_NOT_FOUND", details: { claim_id: "nope" } });
    const grant = await call("/api/core/grant/nope", { method: "DELETE", headers: user });
    expect(grant.status).toBe(404);
    expect(grant.body.error.code).toBe("NOT_FOUND");
  });
});

describe("the on-chain state of an attestation", () => {
  it("with no registry configured: 404 NOT_FOUND naming REGISTRY_ADDRESS, before the rollup is asked", async () => {
    const { status, body } = await call(`/api/core/attestation/0x${"2".repeat(64)}/onchain`);
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("REGISTRY_ADDRESS") });
  });
});

describe("failures of what the api depends on", () => {
  it("reads with the rollup down: 503 ROLLUP_UNAVAILABLE {url, error}", async () => {
    for (const path of ["/api/core/schemas", "/api/core/schemas/0x" + "1".repeat(64), "/api/core/attestation/0x" + "2".repeat(64), `/api/core/attestations/${USER_A}`, `/api/core/access/${USER_A}/${USER_A}`]) {
      const { status, body } = await call(path);
      expect(status, path).toBe(503);
      expect(body.error).toMatchObject({
        code: "ROLLUP_UNAVAILABLE",
        details: { url: api.config.rollupUrl, error: expect.stringContaining("ECONNREFUSED") },
      });
    }
  });

  it("writes with the chain down: 503 RPC_UNAVAILABLE {url}", async () => {
    const { status, body } = await post("/api/core/encryption-key", { publicKey: Buffer.alloc(32, 9).toString("base64"), algorithm: "nacl-box" }, admin);
    expect(status).toBe(503);
    expect(body.error).toEqual({ code: "RPC_UNAVAILABLE", message: expect.any(String), details: { url: api.config.rpcUrl } });
    const grant = await post("/api/core/grant", { requester: USER_A, schemaId: "0x" + "ab".repeat(32), expiresAt: Math.floor(Date.now() / 1000) + 60 }, user);
    expect(grant.body.error.code).toBe("RPC_UNAVAILABLE");
  });

  it("a claim with no schema known for the host: 404 SCHEMA_NOT_FOUND", async () => {
    const { status, body } = await post(
      "/api/core/claim",
      {
        provider: "http",
        params: { url: "http://unknown.example/x", method: "GET", headers: {} },
        bucketDefinition: { field: "v", boundaries: [0, 10], labels: ["a"] },
      },
      user,
    );
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: "SCHEMA_NOT_FOUND", details: { schema_id: null, domain: "unknown.example" } });
  });

  it("health with everything down, and status", async () => {
    const health = await call("/api/core/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ success: true, data: { attestor: "down", rollup: "down", blockchain: "down", tlsAttestor: "down" } });
    const status = await call("/api/core/status");
    expect(status.body).toEqual({
      success: true,
      data: {
        enabled: true,
        rollupConnected: false,
        dappAddress: "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e",
        // The extensions say they could not be read, rather than failing the status.
        processedInputs: null,
        inputsPerMinute: [],
        latestClaim: null,
        contracts: null,
        receipts: { signer: expect.stringMatching(/^0x[0-9a-f]{40}$/), domain: null },
        consensus: null,
        readers: [],
        // Not in a stack (no supervisor's status file in its DATA_DIR).
        stack: null,
      },
    });
  });

  it("/healthcheck has no envelope and the package version", async () => {
    const { status, body } = await call("/healthcheck");
    expect(status).toBe(200);
    expect(body).toEqual({ status: "ok", version: packageVersion(), core_enabled: true });
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe("the one error mapping", () => {
  it("an unknown route is 404 NOT_FOUND", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/api/core/claim"], ["PUT", "/api/core/grant"]] as const) {
      const { status, body } = await call(path, { method });
      expect(status).toBe(404);
      expect(body.error.code).toBe("NOT_FOUND");
    }
  });

  it("an unexpected fault is 500 INTERNAL_ERROR without the stack", async () => {
    const logged: unknown[] = [];
    const app = createApi(api.services, { logError: (error) => logged.push(error) });
    // A route that faults the way a bug would: the real onError must hide it.
    app.get("/test-only/fault", () => {
      throw new Error("secret detail at /home/app/file.ts:12");
    });
    const response = await app.request("/test-only/fault");
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(JSON.parse(text)).toEqual({ success: false, error: { code: "INTERNAL_ERROR", message: "Internal server error" } });
    expect(text).not.toContain("secret detail");
    expect(logged).toHaveLength(1);
  });
});
