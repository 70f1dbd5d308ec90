/**
 * The api's request surface fuzzed through `app.request()` (the real hono app and services, wired to a
 * rollup and a chain that refuse connections): random and mutated bodies on every write endpoint, random
 * headers, forged tokens, body-size limits. Every answer is a specified error code with the error shape
 * (or, for a request valid enough to reach the rollup, the rollup's unavailability); never a 500, never
 * an unexpected fault logged, never a secret in a body.
 */
import fc from "fast-check";
import { SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PRIVATE_KEY } from "../../api/config.ts";
import { bearer, JSON_HEADERS, PROVIDER_SCHEMA_BODY, TEST_JWT_SECRET, tokenFor, USER_A, USER_B, type ErrorShape } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";
import { bytes32Arb, fcOptions, figure, scaledTimeout } from "./support.ts";

let api: OfflineApi;
let admin: Record<string, string>;
let user: Record<string, string>;
const texts: string[] = [];
let requests = 0;
const started = Date.now();
const PROVIDER_SECRET = "provider-secret-9f8e7d6c5b4a";

beforeAll(async () => {
  api = await offlineApi({ RATE_LIMITS: "off" });
  admin = bearer(await tokenFor("admin", USER_A));
  user = bearer(await tokenFor("user", USER_A));
});

afterAll(() => {
  figure(`api request fuzz: ${requests} requests through app.request() in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  api?.cleanup();
});

interface Answer {
  status: number;
  body: ErrorShape & { success: boolean };
  text: string;
  ms: number;
}

async function call(path: string, init: RequestInit): Promise<Answer> {
  requests++;
  const t = Date.now();
  const response = await api.app.request(path, init);
  const text = await response.text();
  texts.push(text);
  let body: ErrorShape & { success: boolean };
  try {
    body = JSON.parse(text) as ErrorShape & { success: boolean };
  } catch {
    throw new Error(`${init.method ?? "GET"} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: response.status, body, text, ms: Date.now() - t };
}

const post = (path: string, body: string, headers: Record<string, string>) =>
  call(path, { method: "POST", headers: { ...JSON_HEADERS, ...headers }, body });

/** The error shape of the specification: `{success: false, error: {code, message, details?}}`. */
function expectErrorShape(answer: Answer): void {
  expect(answer.body.success).toBe(false);
  expect(typeof answer.body.error.code).toBe("string");
  expect(typeof answer.body.error.message).toBe("string");
  expect(answer.text).not.toMatch(/\n\s+at /); // no stack trace
}

const VALID_BODIES: Record<string, () => Record<string, unknown>> = {
  "/api/core/provider-schema": () => structuredClone(PROVIDER_SCHEMA_BODY),
  "/api/core/encryption-key": () => ({ publicKey: Buffer.alloc(32, 9).toString("base64"), algorithm: "nacl-box" }),
  "/api/core/claim": () => ({
    provider: "http",
    params: { url: "https://bank.example/balance", method: "GET", headers: { authorization: `Bearer ${PROVIDER_SECRET}` } },
    bucketDefinition: { field: "data.balance", boundaries: [0, 100, 1000], labels: ["low", "mid"] },
  }),
  "/api/core/grant": () => ({ requester: USER_B, schemaId: `0x${"ab".repeat(32)}`, expiresAt: Math.floor(Date.now() / 1000) + 3600 }),
  "/api/core/auth/login": () => ({ message: "hello", signature: `0x${"11".repeat(65)}` }),
};
const ENDPOINTS = Object.keys(VALID_BODIES);

/**
 * What each endpoint may answer to a body: a validation error, or (a body valid enough to go on) the
 * failure of the next step: the rollup or chain down, no schema or key known, a login that does not verify.
 */
const ALLOWED: Record<string, [number, string][]> = {
  "/api/core/provider-schema": [[400, "INVALID_REQUEST"], [503, "RPC_UNAVAILABLE"]],
  "/api/core/encryption-key": [[400, "INVALID_REQUEST"], [400, "INVALID_KEY_FORMAT"], [503, "RPC_UNAVAILABLE"]],
  "/api/core/claim": [
    [400, "INVALID_REQUEST"],
    [400, "INVALID_PARAMETER"],
    [404, "SCHEMA_NOT_FOUND"],
    [503, "ROLLUP_UNAVAILABLE"],
  ],
  "/api/core/grant": [[400, "INVALID_REQUEST"], [503, "RPC_UNAVAILABLE"]],
  "/api/core/auth/login": [[400, "INVALID_REQUEST"], [401, "AUTH_INVALID"]],
};

function headersFor(path: string): Record<string, string> {
  if (path.endsWith("provider-schema") || path.endsWith("encryption-key")) return admin;
  if (path.endsWith("claim") || path.endsWith("grant")) return user;
  return {};
}

function expectAllowed(path: string, answer: Answer): void {
  expectErrorShape(answer);
  expect(ALLOWED[path]).toContainEqual([answer.status, answer.body.error.code]);
  if (answer.body.error.code === "INVALID_REQUEST") {
    expect(answer.body.error.details).toEqual({ field: expect.any(String), issue: expect.any(String) });
  }
  // Everything is local or refused at once: no request waits on anything.
  expect(answer.ms).toBeLessThan(10_000);
}

/** Leaves of a JSON value as [path, value] pairs, for replacing one. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== "object" || value === null) return [prefix];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([k, v]) => paths(v, [...prefix, k]))];
}

function replaced(value: unknown, path: string[], next: unknown): unknown {
  if (path.length === 0) return next;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) return value.map((v, i) => (String(i) === head ? replaced(v, rest, next) : v));
  if (typeof value === "object" && value !== null) return { ...value, [head]: replaced((value as Record<string, unknown>)[head], rest, next) };
  return value;
}

describe("bodies", () => {
  it("random JSON and random text on every write endpoint: a specified error, never a 500", { timeout: scaledTimeout(60_000) }, async () => {
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.constantFrom("", " ", "null", "{", "[]", '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}', "\u0000", "1e999"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), body, async (path, text) => {
        expectAllowed(path, await post(path, text, headersFor(path)));
      }),
      fcOptions(600),
    );
  });

  it("a valid body with one member replaced by a random value: a specified error naming a field, never a 500", { timeout: scaledTimeout(60_000) }, async () => {
    const endpointAndPath = fc.constantFrom(...ENDPOINTS).chain((endpoint) =>
      fc.tuple(fc.constant(endpoint), fc.constantFrom(...paths(VALID_BODIES[endpoint]?.()).filter((p) => p.length > 0))),
    );
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(null, -1, 0, 1e308, -1e308, "", "x".repeat(70_000), [], {}, true, "0x", "javascript:alert(1)", "http://169.254.169.254/"),
    );
    await fc.assert(
      fc.asyncProperty(endpointAndPath, value, fc.boolean(), async ([endpoint, path], next, remove) => {
        const original = VALID_BODIES[endpoint]?.();
        const mutated = remove ? replaced(original, path, undefined) : replaced(original, path, next);
        const answer = await post(endpoint, JSON.stringify(mutated), headersFor(endpoint));
        expectAllowed(endpoint, answer);
      }),
      fcOptions(1000),
    );
  });

  it("deeply nested bodies are refused cleanly", { timeout: scaledTimeout(60_000) }, async () => {
    for (const depth of [1_000, 10_000, 30_000]) {
      for (const path of ENDPOINTS) {
        const answer = await post(path, `${"[".repeat(depth)}${"]".repeat(depth)}`, headersFor(path));
        expectAllowed(path, answer);
        const inField = await post(path, `{"provider":${"[".repeat(depth)}${"]".repeat(depth)}}`, headersFor(path));
        expectAllowed(path, inField);
      }
    }
  });

  it("the body limit: 64 KiB passes to validation, one byte more (or 8 MiB, streamed or not) is INVALID_REQUEST", { timeout: scaledTimeout(60_000) }, async () => {
    const limit = 64 * 1024;
    const exact = JSON.stringify(VALID_BODIES["/api/core/grant"]?.());
    const padded = exact + " ".repeat(limit - exact.length);
    expect(Buffer.byteLength(padded)).toBe(limit);
    const atLimit = await post("/api/core/grant", padded, user);
    expect([atLimit.status, atLimit.body.error.code]).toEqual([503, "RPC_UNAVAILABLE"]);
    for (const size of [limit + 1, 8 * 1024 * 1024]) {
      for (const path of ENDPOINTS.filter((p) => !p.endsWith("login"))) {
        const answer = await post(path, exact + " ".repeat(size - exact.length), headersFor(path));
        expect([answer.status, answer.body.error.code, answer.body.error.details?.field]).toEqual([400, "INVALID_REQUEST", "body"]);
      }
    }
    // Without Content-Length: a chunked stream is cut off at the limit too.
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    let sentChunks = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sentChunks++ >= 64) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const streamed = await call("/api/core/grant", {
      method: "POST",
      headers: { ...JSON_HEADERS, ...user },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect([streamed.status, streamed.body.error.code]).toEqual([400, "INVALID_REQUEST"]);
    expect(sentChunks).toBeLessThan(64);
  });
});

describe("headers", () => {
  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });

  it("random Authorization values: 401 AUTH_MISSING or AUTH_INVALID, never a pass", { timeout: scaledTimeout(60_000) }, async () => {
    const authorization = fc.oneof(
      printable,
      printable.map((s) => `Bearer ${s}`),
      fc.tuple(printable, printable, printable).map(([a, b, c]) => `Bearer ${Buffer.from(a).toString("base64url")}.${Buffer.from(b).toString("base64url")}.${Buffer.from(c).toString("base64url")}`),
      fc.constantFrom("Bearer", "Bearer ", "bearer  x", "Basic dXNlcjpwYXNz", "Bearer a.b.c", "Bearer ..", `Bearer ${"A".repeat(8000)}`),
    );
    await fc.assert(
      fc.asyncProperty(authorization, fc.constantFrom("/api/core/grant", "/api/core/provider-schema", "/api/core/claim"), async (value, path) => {
        const answer = await post(path, JSON.stringify(VALID_BODIES[path]?.()), { authorization: value });
        expectErrorShape(answer);
        expect([[401, "AUTH_MISSING"], [401, "AUTH_INVALID"]]).toContainEqual([answer.status, answer.body.error.code]);
        expect(answer.body.error.details).toBeUndefined();
      }),
      fcOptions(400),
    );
  });

  it("random Content-Type values: refused unless JSON", { timeout: scaledTimeout(60_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(printable, async (contentType) => {
        const answer = await post("/api/core/grant", JSON.stringify(VALID_BODIES["/api/core/grant"]?.()), { ...user, "content-type": contentType });
        const json = /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
        if (json) expect([answer.status, answer.body.error.code]).toEqual([503, "RPC_UNAVAILABLE"]);
        else expect([answer.status, answer.body.error.code, answer.body.error.details?.field]).toEqual([400, "INVALID_REQUEST", "Content-Type"]);
      }),
      fcOptions(200),
    );
  });

  it("unknown methods and paths: 404 NOT_FOUND in the error shape", { timeout: scaledTimeout(60_000) }, async () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~%-]{0,30}$/);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"), fc.array(segment, { maxLength: 5 }), async (method, segments) => {
        const path = `/api/core/x-${segments.join("/")}`;
        const answer = await call(path, { method, headers: user });
        expectErrorShape(answer);
        expect([answer.status, answer.body.error.code]).toEqual([404, "NOT_FOUND"]);
      }),
      fcOptions(200),
    );
  });

  it("path parameters of every shape: INVALID_PARAMETER or a not-found, never a 500", { timeout: scaledTimeout(60_000) }, async () => {
    const raw = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{0,80}$/), bytes32Arb, fc.string({ maxLength: 60 }).map(encodeURIComponent));
    await fc.assert(
      fc.asyncProperty(raw, fc.constantFrom("attestation", "attestations", "access", "schemas", "grant"), async (value, what) => {
        const [path, method] =
          what === "access" ? [`/api/core/access/${value}/${value}`, "GET"] : what === "grant" ? [`/api/core/grant/${value}`, "DELETE"] : [`/api/core/${what}/${value}`, "GET"];
        const answer = await call(path, { method, headers: user });
        expectErrorShape(answer);
        expect([
          [400, "INVALID_PARAMETER"],
          [404, "NOT_FOUND"],
          [404, "ATTESTATION_NOT_FOUND"],
          [404, "SCHEMA_NOT_FOUND"],
          [503, "ROLLUP_UNAVAILABLE"],
          [503, "RPC_UNAVAILABLE"],
        ]).toContainEqual([answer.status, answer.body.error.code]);
      }),
      fcOptions(300),
    );
  });
});

describe("forged tokens", () => {
  const secret = new TextEncoder().encode(TEST_JWT_SECRET);
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: Record<string, unknown>, key: Uint8Array = secret, alg = "HS256", header: Record<string, unknown> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT", ...header }).sign(key);

  it("alg none, wrong secret, expired, not yet valid, other algorithms, tampered claims: 401 AUTH_INVALID", { timeout: scaledTimeout(60_000) }, async () => {
    const user = (await tokenFor("user", USER_A)).split(".");
    const adminPayload = Buffer.from(JSON.stringify({ sub: USER_A.toLowerCase(), role: "admin", exp: now() + 3600 })).toString("base64url");
    const forged: [string, string][] = [
      ["alg none", new UnsecuredJWT({ sub: USER_A.toLowerCase(), role: "admin" }).setExpirationTime(now() + 3600).encode()],
      ["alg none, signature kept", `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${adminPayload}.${user[2]}`],
      ["alg NONE", `${Buffer.from('{"alg":"NONE"}').toString("base64url")}.${adminPayload}.`],
      ["wrong secret", await sign({ sub: USER_A, role: "admin", exp: now() + 3600 }, new TextEncoder().encode("x".repeat(48)))],
      ["empty-ish secret", await sign({ sub: USER_A, role: "admin", exp: now() + 3600 }, new Uint8Array(32))],
      ["expired", await sign({ sub: USER_A, role: "admin", exp: now() - 1 })],
      ["not yet valid", await sign({ sub: USER_A, role: "admin", exp: now() + 3600, nbf: now() + 600 })],
      ["HS512 with the right secret", await sign({ sub: USER_A, role: "admin", exp: now() + 3600 }, secret, "HS512")],
      ["HS384 with the right secret", await sign({ sub: USER_A, role: "admin", exp: now() + 3600 }, secret, "HS384")],
      ["payload swapped, signature kept", `${user[0]}.${adminPayload}.${user[2]}`],
      ["signature stripped", `${user[0]}.${user[1]}.`],
      ["no exp", await sign({ sub: USER_A, role: "admin" })],
      ["no sub", await sign({ role: "admin", exp: now() + 3600 })],
      ["sub not an address", await sign({ sub: "admin", role: "admin", exp: now() + 3600 })],
      ["unknown role", await sign({ sub: USER_A, role: "root", exp: now() + 3600 })],
      ["role array", await sign({ sub: USER_A, role: ["admin"], exp: now() + 3600 })],
      ["exp as a string", await sign({ sub: USER_A, role: "admin", exp: String(now() + 3600) })],
      ["jku/kid pointing elsewhere", await sign({ sub: USER_A, role: "admin", exp: now() + 3600 }, new Uint8Array(32), "HS256", { kid: "../../etc/passwd", jku: "http://127.0.0.1:9/keys" })],
      ["two dots only", ".."],
      ["four segments", `${user.join(".")}.x`],
    ];
    for (const [what, token] of forged) {
      for (const path of ["/api/core/provider-schema", "/api/core/grant"]) {
        const answer = await post(path, JSON.stringify(VALID_BODIES[path]?.()), bearer(token));
        expect([what, answer.status, answer.body.error.code]).toEqual([what, 401, "AUTH_INVALID"]);
      }
      const revoke = await call(`/api/core/grant/0x${"ab".repeat(32)}`, { method: "DELETE", headers: bearer(token) });
      expect([what, revoke.status, revoke.body.error.code]).toEqual([what, 401, "AUTH_INVALID"]);
    }
  });

  it("a valid user token on admin calls: 403 AUTH_INSUFFICIENT", { timeout: scaledTimeout(60_000) }, async () => {
    for (const path of ["/api/core/provider-schema", "/api/core/encryption-key"]) {
      const answer = await post(path, JSON.stringify(VALID_BODIES[path]?.()), user);
      expect([answer.status, answer.body.error.code]).toEqual([403, "AUTH_INSUFFICIENT"]);
    }
  });
});

describe("secrets", () => {
  it("no answer carries the JWT secret, the wallet key, a token or a provider credential", { timeout: scaledTimeout(60_000) }, async () => {
    // A claim carrying a provider credential in a header value the api refuses (offline, it stops at the
    // schema look-up; the real-stack suite reaches the header check): no answer echoes it.
    const body = VALID_BODIES["/api/core/claim"]?.() as { params: { headers: Record<string, string> } };
    body.params.headers = { "x-api-key": `${PROVIDER_SECRET}\r\nInjected: yes` };
    const refused = await post("/api/core/claim", JSON.stringify(body), user);
    expect(refused.body.success).toBe(false);
    const userToken = (user.authorization ?? "").slice("Bearer ".length);
    const adminToken = (admin.authorization ?? "").slice("Bearer ".length);
    expect(texts.length).toBeGreaterThan(1000);
    for (const text of texts) {
      for (const secret of [TEST_JWT_SECRET, DEFAULT_PRIVATE_KEY, DEFAULT_PRIVATE_KEY.slice(2), PROVIDER_SECRET, userToken, adminToken]) {
        expect(text.includes(secret)).toBe(false);
      }
    }
    // Nothing above was an unexpected fault: the error log of the app stayed empty.
    expect(api.errors).toEqual([]);
  });
});
