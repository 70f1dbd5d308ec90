import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineApi, type OfflineApi } from "../support/api-fixtures.ts";

let api: OfflineApi;
beforeAll(async () => {
  api = await offlineApi({ RATE_LIMITS: "off" });
});
afterAll(() => api.cleanup());

describe("GET /api/core/openapi.json", () => {
  it("is an OpenAPI 3.1 document describing every route the app serves", async () => {
    const response = await api.app.request("/api/core/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { openapi: string; info: { version: string }; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    const served = api.app.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    // The 13 endpoints of the specification, the two auth endpoints, the attestation-data and proof
    // extensions and the document itself.
    expect(new Set(served).size).toBe(18);
    for (const route of served) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method], route).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual([...new Set(served)].sort());
  });

  it("documents the error responses of each operation by status", async () => {
    const doc = (await (await api.app.request("/api/core/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const claim = doc.paths["/api/core/claim"]?.post?.responses ?? {};
    expect(claim["502"]?.description).toContain("PROVIDER_UNAVAILABLE");
    expect(claim["503"]?.description).toContain("ENCRYPTION_KEY_MISSING");
    expect(claim["401"]?.description).toContain("AUTH_MISSING");
    expect(claim["429"]?.description).toContain("RATE_LIMITED");
  });
});
