import { SignJWT, UnsecuredJWT } from "jose";
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyToken } from "../../api/auth/tokens.ts";
import { bearer, JSON_HEADERS, TEST_JWT_SECRET, tokenFor, USER_A, USER_A_KEY, type ErrorShape } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

let api: OfflineApi;
beforeAll(async () => {
  api = await offlineApi({ RATE_LIMITS: "off" });
});
afterAll(() => api.cleanup());

const secret = new TextEncoder().encode(TEST_JWT_SECRET);
const now = () => Math.floor(Date.now() / 1000);

async function postSchema(headers: Record<string, string>) {
  const response = await api.app.request("/api/core/provider-schema", {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({ provider: "http" }),
  });
  return { status: response.status, body: (await response.json()) as ErrorShape };
}

describe("bearer tokens", () => {
  it("no Authorization header: 401 AUTH_MISSING without details", async () => {
    const { status, body } = await postSchema({});
    expect(status).toBe(401);
    expect(body).toEqual({ success: false, error: { code: "AUTH_MISSING", message: expect.any(String) } });
  });

  const invalidTokens: [string, () => Promise<string>][] = [
    ["garbage", async () => "not-a-jwt"],
    ["expired", async () => new SignJWT({ role: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject(USER_A.toLowerCase()).setExpirationTime(now() - 10).sign(secret)],
    ["signed with another secret", () => tokenFor("admin", USER_A, 3600, "another-secret-another-secret-another-secret")],
    ["alg none", async () => new UnsecuredJWT({ role: "admin" }).setSubject(USER_A.toLowerCase()).setExpirationTime(now() + 600).encode()],
    ["HS512 instead of HS256", async () => new SignJWT({ role: "admin" }).setProtectedHeader({ alg: "HS512" }).setSubject(USER_A.toLowerCase()).setExpirationTime(now() + 600).sign(new TextEncoder().encode(TEST_JWT_SECRET.repeat(2)))],
    ["without exp", async () => new SignJWT({ role: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject(USER_A.toLowerCase()).sign(secret)],
    ["with an unknown role", async () => new SignJWT({ role: "root" }).setProtectedHeader({ alg: "HS256" }).setSubject(USER_A.toLowerCase()).setExpirationTime(now() + 600).sign(secret)],
    ["whose sub is not an address", async () => new SignJWT({ role: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("alice").setExpirationTime(now() + 600).sign(secret)],
  ];
  it.each(invalidTokens)("a token %s: 401 AUTH_INVALID", async (_name, make) => {
    const { status, body } = await postSchema(bearer(await make()));
    expect(status).toBe(401);
    expect(body.error.code).toBe("AUTH_INVALID");
    expect(body.error.details).toBeUndefined();
  });

  it("a header that is not Bearer: 401 AUTH_INVALID", async () => {
    const { status, body } = await postSchema({ authorization: "Basic dXNlcjpwYXNz" });
    expect(status).toBe(401);
    expect(body.error.code).toBe("AUTH_INVALID");
  });

  it("a user token on an admin call: 403 AUTH_INSUFFICIENT", async () => {
    const { status, body } = await postSchema(bearer(await tokenFor("user", USER_A)));
    expect(status).toBe(403);
    expect(body.error.code).toBe("AUTH_INSUFFICIENT");
  });

  it("an admin token passes to validation (which names the missing field)", async () => {
    const { status, body } = await postSchema(bearer(await tokenFor("admin", USER_A)));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "flowType", issue: "required" } });
  });

  it("user calls take user and admin tokens", async () => {
    for (const role of ["user", "admin"] as const) {
      const response = await api.app.request("/api/core/grant", {
        method: "POST",
        headers: { ...JSON_HEADERS, ...bearer(await tokenFor(role, USER_A)) },
        body: "{}",
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorShape).error.details).toEqual({ field: "requester", issue: "required" });
    }
    const missing = await api.app.request("/api/core/grant/0x" + "1".repeat(64), { method: "DELETE" });
    expect(missing.status).toBe(401);
  });

  it("tokens carry a lower-case sub, the role and exp", async () => {
    const claims = await verifyToken(secret, await tokenFor("user", USER_A, 60));
    expect(claims.sub).toBe(USER_A.toLowerCase());
    expect(claims.role).toBe("user");
    expect(claims.exp).toBeGreaterThan(now());
  });
});

describe("Sign-In with Ethereum", () => {
  const account = privateKeyToAccount(USER_A_KEY);

  async function nonce(): Promise<{ nonce: string; domain: string; chainId: number; expiresAt: number }> {
    const response = await api.app.request("http://api.test/api/core/auth/nonce");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { success: true; data: { nonce: string; domain: string; chainId: number; expiresAt: number } };
    expect(body.success).toBe(true);
    return body.data;
  }

  async function login(message: string, signature: string) {
    const response = await api.app.request("http://api.test/api/core/auth/login", {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ message, signature }),
    });
    return { status: response.status, body: (await response.json()) as { success: boolean; data: { token: string; expiresAt: number } } & ErrorShape };
  }

  function message(n: string, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}) {
    return createSiweMessage({
      address: account.address,
      chainId: 31337,
      domain: "api.test",
      nonce: n,
      uri: "http://api.test/",
      version: "1",
      statement: "Sign in to the attestation API",
      ...overrides,
    });
  }

  it("issues a user token for the signing address, once per nonce", async () => {
    const issued = await nonce();
    expect(issued).toMatchObject({ domain: "api.test", chainId: 31337 });
    expect(issued.nonce).toMatch(/^[0-9a-f]{32}$/);
    const text = message(issued.nonce);
    const signature = await account.signMessage({ message: text });
    const first = await login(text, signature);
    expect(first.status).toBe(200);
    expect(first.body.data.expiresAt).toBeGreaterThan(now());
    const claims = await verifyToken(secret, first.body.data.token);
    expect(claims).toMatchObject({ sub: USER_A.toLowerCase(), role: "user" });

    const replay = await login(text, signature);
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("AUTH_INVALID");
  });

  it("refuses a nonce the api never issued, another domain, another chain, a bad signature", async () => {
    const madeUp = message("abcdef0123456789");
    expect((await login(madeUp, await account.signMessage({ message: madeUp }))).body.error.code).toBe("AUTH_INVALID");

    const otherDomain = message((await nonce()).nonce, { domain: "evil.test" });
    expect((await login(otherDomain, await account.signMessage({ message: otherDomain }))).status).toBe(401);

    const otherChain = message((await nonce()).nonce, { chainId: 1 });
    expect((await login(otherChain, await account.signMessage({ message: otherChain }))).status).toBe(401);

    const good = message((await nonce()).nonce);
    const other = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
    const forged = await login(good, await other.signMessage({ message: good }));
    expect(forged.status).toBe(401);
    // The forged attempt did not burn the nonce: the real owner can still sign in with it.
    expect((await login(good, await account.signMessage({ message: good }))).status).toBe(200);
  });

  it("caps the token at the message's own expiry", async () => {
    const text = message((await nonce()).nonce, { expirationTime: new Date((now() + 120) * 1000) });
    const result = await login(text, await account.signMessage({ message: text }));
    expect(result.status).toBe(200);
    expect(result.body.data.expiresAt).toBeLessThanOrEqual(now() + 121);
  });

  it("a body without the fields is INVALID_REQUEST naming one", async () => {
    const result = await login(undefined as unknown as string, "0x00");
    expect(result.status).toBe(400);
    expect(result.body.error.details).toEqual({ field: "message", issue: "required" });
  });
});
