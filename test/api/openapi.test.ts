import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ERROR_STATUS } from "../../api/errors.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

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
    // The 13 endpoints of the specification, the two auth endpoints, the attestation-data, proof, input,
    // grants-of-an-address, attestor (register, list), nullifier key set (register, read) and user-proven claim extensions, the validity ones
    // (revoke, revocation proof, verify), the consent domain, the on-chain state (registry and gate), the
    // batch notices with their proofs (of the attestation's input and of its revocation's), the receipts (an attestation's, its revocation's, and their verify),
    // EAS's GraphQL (GET and POST) and the document.
    expect(new Set(served).size).toBe(40);
    for (const route of served) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method], route).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual([...new Set(served)].sort());
  });

  it("is valid by the OpenAPI 3.1 schema", async () => {
    const doc = (await (await api.app.request("/api/core/openapi.json")).json()) as Record<string, unknown>;
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("names every error code of the specification in some operation's responses, under its own status", async () => {
    const doc = (await (await api.app.request("/api/core/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const named = new Map<string, Set<string>>();
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const [status, response] of Object.entries(op.responses)) {
          for (const code of response.description.replace(/^Error: /, "").split(", ")) {
            named.set(code, (named.get(code) ?? new Set()).add(status));
          }
        }
      }
    }
    // Errors no route raises today (the specification lists them for completeness) are not required.
    const unraised = new Set(["UNAUTHORIZED", "FORBIDDEN", "ROLLUP_ERROR", "PROVIDER_ERROR"]);
    for (const [code, status] of Object.entries(API_ERROR_STATUS)) {
      if (unraised.has(code)) continue;
      expect([...(named.get(code) ?? [])], code).toEqual([String(status)]);
    }
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
