/**
 * Provider fetch against real local servers: status mapping, TLS rules, SSRF refusals, redirects,
 * limits and secrecy of errors. Traffic goes only to 127.0.0.1 and ::1; the CA of test/support/tls.ts
 * is trusted through the internal `ca` seam (test/api/provider-ca.test.ts proves NODE_EXTRA_CA_CERTS).
 */
import type { LookupAddress } from "node:dns";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors.ts";
import { fetchJson, type HttpProviderParams, type ProviderFetchConfig, type ProviderFetchInternals } from "../../api/provider/fetch.ts";
import { DEFAULT_PROVIDER_MAX_BODY_BYTES, DEFAULT_PROVIDER_TIMEOUT_MS, fetchProviderJson } from "../../api/provider/index.ts";
import { URL_EXPECTATION } from "../../api/provider/target.ts";
import { type ProviderReply, type ProviderServer, TLS_1_1_ONLY, startProviderServer } from "../support/provider-server.ts";
import { type TestPki, createTestPki } from "../support/tls.ts";

let pki: TestPki;
let secure: ProviderServer; // https, certificate for localhost from the test CA
let plain: ProviderServer; // http
let other: ProviderServer; // a second https origin, for cross-origin redirects
let tls11: ProviderServer;
let selfSigned: ProviderServer;
let wrongName: ProviderServer;
let v6: ProviderServer; // https on ::1
let garbage: net.Server; // answers anything with bytes that are not HTTP
let garbagePort: number;

const BASE: ProviderFetchConfig = { allowedHosts: ["localhost"], timeoutMs: 5_000, maxBodyBytes: DEFAULT_PROVIDER_MAX_BODY_BYTES };
let internals: ProviderFetchInternals;

beforeAll(async () => {
  pki = createTestPki();
  internals = { ca: pki.ca.cert };
  secure = await startProviderServer({ tls: pki.localhost });
  plain = await startProviderServer();
  other = await startProviderServer({ tls: pki.localhost });
  tls11 = await startProviderServer({ tls: { ...pki.localhost, ...TLS_1_1_ONLY } });
  selfSigned = await startProviderServer({ tls: pki.selfSigned });
  wrongName = await startProviderServer({ tls: pki.wrongName });
  v6 = await startProviderServer({ tls: pki.localhost, host: "::1" });
  garbage = net.createServer((socket) => {
    // Reading keeps the socket flowing, so it sees the client's close and the server can shut down.
    socket.resume();
    socket.end("this is not HTTP at all\r\n\r\n");
  });
  await new Promise<void>((resolve) => garbage.listen(0, "127.0.0.1", resolve));
  garbagePort = (garbage.address() as net.AddressInfo).port;

  for (const server of [secure, plain, other, tls11, selfSigned, wrongName, v6]) {
    server.route("/ok", { kind: "json", value: { data: { balance: 42 } } });
  }
});

afterAll(async () => {
  await Promise.all([secure, plain, other, tls11, selfSigned, wrongName, v6].map((s) => s?.close()));
  await new Promise<void>((resolve) => (garbage ? garbage.close(() => resolve()) : resolve()));
  pki?.cleanup();
});

function get(url: string, headers: Record<string, string> = {}): HttpProviderParams {
  return { url, method: "GET", headers };
}

/** The ApiError a failing fetch throws (fails the test if it resolves or throws something else). */
async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the fetch to fail");
}

/** A resolver that serves fixed answers and records which names it was asked for. */
function fakeResolver(answers: Record<string, string[]>): { resolve: (host: string) => Promise<LookupAddress[]>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      const list = answers[host];
      if (!list) throw Object.assign(new Error(`no answer for ${host}`), { code: "ENOTFOUND" });
      return list.map((address) => ({ address, family: net.isIP(address) }));
    },
  };
}

describe("defaults", () => {
  it("are 10 s and 1 MiB", () => {
    expect(DEFAULT_PROVIDER_TIMEOUT_MS).toBe(10_000);
    expect(DEFAULT_PROVIDER_MAX_BODY_BYTES).toBe(1_048_576);
  });
});

describe("successful fetches", () => {
  it("returns the parsed body and the URL's host over https", async () => {
    const result = await fetchJson(get(secure.url("/ok")), BASE, internals);
    expect(result).toEqual({ body: { data: { balance: 42 } }, host: "localhost" });
  });

  it("sends the caller's headers, the query string and URL credentials as Basic auth", async () => {
    secure.route("/echo", { kind: "json", value: { ok: true } });
    const before = secure.requests.length;
    const url = secure.url("/echo?account=7").replace("https://", "https://alice:s%40cret@");
    await fetchJson(get(url, { "X-Api-Key": "k-123", Accept: "application/vnd.test+json" }), BASE, internals);
    const seen = secure.requests[before];
    expect(seen?.path).toBe("/echo?account=7");
    expect(seen?.headers["x-api-key"]).toBe("k-123");
    expect(seen?.headers.accept).toBe("application/vnd.test+json");
    expect(seen?.headers.authorization).toBe(`Basic ${Buffer.from("alice:s@cret").toString("base64")}`);
    expect(seen?.headers["accept-encoding"]).toBe("identity");
  });

  it.each(["GET", "get", "POST", "post"])("accepts method %s", async (method) => {
    secure.route("/method", { kind: "handler", handle: (req, res) => res.end(JSON.stringify({ method: req.method })) });
    const result = await fetchJson({ url: secure.url("/method"), method, headers: {} }, BASE, internals);
    expect(result.body).toEqual({ method: method.toUpperCase() });
  });

  it("accepts JSON labelled text/plain", async () => {
    secure.route("/plain-label", { kind: "text", body: '{"v":"1.5"}', contentType: "text/plain" });
    expect((await fetchJson(get(secure.url("/plain-label")), BASE, internals)).body).toEqual({ v: "1.5" });
  });

  it("allows plain http and loopback for an allow-listed host (case-insensitive)", async () => {
    const result = await fetchJson(get(plain.url("/ok")), { ...BASE, allowedHosts: ["LOCALHOST"] }, internals);
    expect(result.body).toEqual({ data: { balance: 42 } });
  });

  it("allows an allow-listed IPv4 literal over http", async () => {
    const result = await fetchJson(get(plain.url("/ok", "127.0.0.1")), { ...BASE, allowedHosts: ["127.0.0.1"] }, internals);
    expect(result).toEqual({ body: { data: { balance: 42 } }, host: "127.0.0.1" });
  });

  it("allows an allow-listed IPv6 literal over https", async () => {
    const result = await fetchJson(get(v6.url("/ok", "[::1]")), { ...BASE, allowedHosts: ["[::1]"] }, internals);
    expect(result).toEqual({ body: { data: { balance: 42 } }, host: "::1" });
  });

  it("connects to the address it vetted even if DNS answers differently later (rebinding)", async () => {
    let calls = 0;
    const resolve = async (): Promise<LookupAddress[]> => {
      calls++;
      return calls === 1 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "10.9.9.9", family: 4 }];
    };
    const before = plain.requests.length;
    const result = await fetchJson(get(plain.url("/ok", "rebind.test")), { ...BASE, allowedHosts: ["rebind.test"] }, { resolve });
    expect(result).toEqual({ body: { data: { balance: 42 } }, host: "rebind.test" });
    expect(calls).toBe(1);
    expect(plain.requests[before]?.headers.host).toBe(`rebind.test:${plain.port}`);
  });
});

describe("status and body mapping", () => {
  const cases: { name: string; reply: ProviderReply; code: string; details: Record<string, unknown> }[] = [
    { name: "401", reply: { kind: "status", status: 401 }, code: "PROVIDER_AUTH_FAILED", details: { provider: "http", status: 401 } },
    { name: "403", reply: { kind: "status", status: 403 }, code: "PROVIDER_AUTH_FAILED", details: { provider: "http", status: 403 } },
    { name: "500", reply: { kind: "status", status: 500 }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "HTTP 500" } },
    { name: "503", reply: { kind: "status", status: 503 }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "HTTP 503" } },
    { name: "404", reply: { kind: "status", status: 404 }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "HTTP 404" } },
    { name: "429", reply: { kind: "status", status: 429 }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "HTTP 429" } },
    { name: "304", reply: { kind: "status", status: 304 }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "HTTP 304" } },
    {
      name: "redirect without Location",
      reply: { kind: "handler", handle: (_req, res) => res.writeHead(302).end() },
      code: "PROVIDER_UNAVAILABLE",
      details: { provider: "http", error: "HTTP 302 without a usable Location" },
    },
    {
      name: "HTML page",
      reply: { kind: "text", body: "<html>hi</html>", contentType: "text/html; charset=utf-8" },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "JSON body", received: "text/html" },
    },
    {
      name: "garbage labelled JSON",
      reply: { kind: "text", body: "{not json", contentType: "application/json" },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "JSON body", received: "invalid JSON" },
    },
    {
      name: "garbage without a content type",
      reply: { kind: "handler", handle: (_req, res) => res.end("\u0000\u0001garbage") },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "JSON body", received: "invalid JSON" },
    },
    {
      name: "invalid UTF-8",
      reply: { kind: "handler", handle: (_req, res) => res.end(Buffer.from([0x22, 0xff, 0xfe, 0x22])) },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "JSON body", received: "invalid JSON" },
    },
    { name: "empty 200", reply: { kind: "text", body: "", contentType: "application/json" }, code: "PROVIDER_INVALID_RESPONSE", details: { expected: "JSON body", received: "empty body" } },
    { name: "204", reply: { kind: "handler", handle: (_req, res) => res.writeHead(204).end() }, code: "PROVIDER_INVALID_RESPONSE", details: { expected: "JSON body", received: "empty body" } },
    {
      name: "body over the cap with Content-Length",
      reply: { kind: "huge", bytes: 2 * 1024 * 1024, declareLength: true },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "a body of at most 1048576 bytes", received: "more than 1048576 bytes" },
    },
    {
      name: "body over the cap, chunked",
      reply: { kind: "huge", bytes: 2 * 1024 * 1024, declareLength: false },
      code: "PROVIDER_INVALID_RESPONSE",
      details: { expected: "a body of at most 1048576 bytes", received: "more than 1048576 bytes" },
    },
    { name: "reset before answering", reply: { kind: "reset" }, code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "connection closed before a response" } },
    {
      name: "reset in the middle of the body",
      reply: { kind: "handler", handle: (req, res) => (res.writeHead(200, { "content-length": "100" }), res.write("[1,"), setTimeout(() => req.socket.destroy(), 20)) },
      code: "PROVIDER_UNAVAILABLE",
      details: { provider: "http", error: "connection closed while reading the body" },
    },
  ];

  it.each(cases)("$name → $code", async ({ name, reply, code, details }) => {
    const path = `/case/${encodeURIComponent(name)}`;
    secure.route(path, reply);
    const error = await failure(fetchJson(get(secure.url(path)), BASE, internals));
    expect(error.code).toBe(code);
    expect(error.details).toMatchObject(details);
    if (code === "PROVIDER_UNAVAILABLE") expect(error.details?.url).toBe(secure.url(path));
  });

  it("stops at a small cap too", async () => {
    secure.route("/small-cap", { kind: "json", value: { pad: "x".repeat(200) } });
    const error = await failure(fetchJson(get(secure.url("/small-cap")), { ...BASE, maxBodyBytes: 100 }, internals));
    expect(error).toMatchObject({ code: "PROVIDER_INVALID_RESPONSE", details: { expected: "a body of at most 100 bytes", received: "more than 100 bytes" } });
  });

  it.each([
    { name: "hang", reply: { kind: "hang" } as ProviderReply },
    { name: "slow drip", reply: { kind: "drip", intervalMs: 20 } as ProviderReply },
  ])("times out on a $name", async ({ name, reply }) => {
    secure.route(`/slow/${encodeURIComponent(name)}`, reply);
    const error = await failure(fetchJson(get(secure.url(`/slow/${encodeURIComponent(name)}`)), { ...BASE, timeoutMs: 300 }, internals));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { provider: "http", error: "no complete answer within 300 ms" } });
  });

  it("maps a refused connection", async () => {
    const gone = await startProviderServer();
    const url = gone.url("/ok");
    await gone.close();
    const error = await failure(fetchJson(get(url), BASE, internals));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { provider: "http", url, error: "connection refused" } });
  });

  it("maps an answer that is not HTTP", async () => {
    const error = await failure(fetchJson(get(`http://localhost:${garbagePort}/x`), BASE, internals));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { error: "malformed HTTP response" } });
  });

  it("times out while DNS does not answer", async () => {
    const resolve = () => new Promise<LookupAddress[]>(() => undefined);
    const error = await failure(fetchJson(get("https://slow-dns.example/x"), { ...BASE, timeoutMs: 100 }, { resolve }));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { url: "https://slow-dns.example/x", error: "no complete answer within 100 ms" } });
  });

  it("maps a name that does not resolve", async () => {
    const { resolve } = fakeResolver({});
    const error = await failure(fetchJson(get("https://nowhere.invalid/x"), BASE, { resolve }));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { provider: "http", url: "https://nowhere.invalid/x", error: "host name not found" } });
  });
});

describe("TLS", () => {
  it("refuses a server that only speaks TLS 1.0/1.1 with ZKTLS_PROOF_FAILED", async () => {
    const error = await failure(fetchJson(get(tls11.url("/ok")), BASE, internals));
    expect(error).toMatchObject({ code: "ZKTLS_PROOF_FAILED", details: { reason: "provider does not offer TLS 1.2 or later" } });
  });

  it.each([
    { name: "self-signed", server: () => selfSigned, ca: true, code: "DEPTH_ZERO_SELF_SIGNED_CERT" },
    { name: "wrong host name", server: () => wrongName, ca: true, code: "ERR_TLS_CERT_ALTNAME_INVALID" },
    { name: "unknown CA (Node's default store)", server: () => secure, ca: false, code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" },
  ])("refuses a certificate: $name", async ({ server, ca, code }) => {
    const error = await failure(fetchJson(get(server().url("/ok")), BASE, ca ? internals : {}));
    expect(error).toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      details: { provider: "http", error: `TLS certificate of the provider is not trusted (${code})` },
    });
  });

  it("fails the handshake against a plain HTTP server", async () => {
    const error = await failure(fetchJson(get(plain.url("/ok").replace("http:", "https:")), BASE, internals));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { error: "TLS handshake failed" } });
  });
});

describe("request validation", () => {
  it.each(["PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE", ""])("refuses method %j", async (method) => {
    const error = await failure(fetchJson({ url: secure.url("/ok"), method, headers: {} }, BASE, internals));
    expect(error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.method", expected: "GET or POST" } });
  });

  it.each<{ name: string; headers: Record<string, string> }>([
    { name: "Host", headers: { Host: "evil.example" } },
    { name: "content-length", headers: { "content-length": "10" } },
    { name: "Transfer-Encoding", headers: { "Transfer-Encoding": "chunked" } },
    { name: "Connection", headers: { Connection: "close" } },
    { name: "Accept-Encoding", headers: { "Accept-Encoding": "gzip" } },
    { name: "CRLF in a value", headers: { "X-Token": "SECRET-VALUE\r\nX-Injected: 1" } },
    { name: "LF in a value", headers: { "X-Token": "SECRET-VALUE\nX-Injected: 1" } },
    { name: "NUL in a value", headers: { "X-Token": "SECRET-VALUE\u0000" } },
    { name: "colon in a name", headers: { "X-A:b": "v" } },
    { name: "CRLF in a name", headers: { "X-A\r\nX-B": "v" } },
    { name: "empty name", headers: { "": "v" } },
    { name: "twice in different case", headers: { "x-key": "SECRET-VALUE", "X-Key": "SECRET-VALUE" } },
  ])("refuses headers: $name", async ({ headers }) => {
    const before = secure.connections;
    const error = await failure(fetchJson(get(secure.url("/ok"), headers), BASE, internals));
    expect(error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.headers" } });
    expect(JSON.stringify([error.message, error.details])).not.toContain("SECRET-VALUE");
    expect(secure.connections).toBe(before);
  });

  it.each([
    { url: "not a url", value: "(not a valid URL)" },
    { url: "/relative/path", value: "(not a valid URL)" },
    { url: "ftp://localhost/file", value: "ftp://localhost/file" },
    { url: "file:///etc/passwd", value: "file:///etc/passwd" },
    { url: "ws://localhost/socket", value: "ws://localhost/socket" },
    { url: "http://example.com/balance?key=SECRET-Q", value: "http://example.com/balance" },
  ])("refuses URL $url", async ({ url, value }) => {
    const dns = fakeResolver({ "example.com": ["93.184.216.34"] });
    const error = await failure(fetchJson(get(url), BASE, { ...internals, resolve: dns.resolve }));
    expect(error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.url", value, expected: URL_EXPECTATION } });
    expect(dns.asked).toEqual([]);
  });
});

describe("SSRF refusals (nothing allow-listed)", () => {
  const NONE: ProviderFetchConfig = { ...BASE, allowedHosts: [] };

  it.each([
    { target: "127.0.0.1", url: () => secure.url("/ok", "127.0.0.1") },
    { target: "localhost", url: () => secure.url("/ok", "localhost") },
    { target: "[::1]", url: () => v6.url("/ok", "[::1]") },
    { target: "[::ffff:127.0.0.1]", url: () => secure.url("/ok", "[::ffff:127.0.0.1]") },
    { target: "2130706433 (decimal 127.0.0.1)", url: () => secure.url("/ok", "2130706433") },
    { target: "0x7f.1 (hex 127.0.0.1)", url: () => secure.url("/ok", "0x7f.1") },
    { target: "0.0.0.0", url: () => secure.url("/ok", "0.0.0.0") },
    { target: "[::]", url: () => secure.url("/ok", "[::]") },
  ])("refuses loopback $target before connecting", async ({ url }) => {
    const before = secure.connections + v6.connections;
    const error = await failure(fetchJson(get(url()), NONE, internals));
    expect(error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.url", expected: URL_EXPECTATION } });
    expect(secure.connections + v6.connections).toBe(before);
  });

  // Never contacted: a refusal comes back as INVALID_PARAMETER at once, not as a timeout or a network error.
  it.each([
    "https://10.0.0.1/balance",
    "https://172.16.5.4/balance",
    "https://192.168.1.1/balance",
    "https://100.64.0.1/balance",
    "https://169.254.169.254/latest/meta-data/",
    "https://[fe80::1]/balance",
    "https://[fc00::1]/balance",
    "https://[fd12:3456::1]/balance",
    "https://[ff02::1]/balance",
    "https://224.0.0.1/balance",
    "https://[::ffff:10.0.0.1]/balance",
    "https://[::ffff:169.254.169.254]/balance",
    "https://[64:ff9b::a9fe:a9fe]/balance",
  ])("refuses %s", async (url) => {
    const error = await failure(fetchJson(get(url), { ...NONE, timeoutMs: 60_000 }, internals));
    // The value shows the URL as parsed (IPv6 literals normalized), without query or credentials.
    expect(error).toMatchObject({ code: "INVALID_PARAMETER", details: { parameter: "params.url", value: new URL(url).href, expected: URL_EXPECTATION } });
  });

  it.each([
    { name: "a private address", answers: ["10.0.0.5"] },
    { name: "the metadata address", answers: ["169.254.169.254"] },
    { name: "a public and a loopback address", answers: ["93.184.216.34", "127.0.0.1"] },
    { name: "an IPv4-mapped loopback", answers: ["::ffff:127.0.0.1"] },
  ])("refuses a name resolving to $name", async ({ answers }) => {
    const dns = fakeResolver({ "internal.example": answers });
    const error = await failure(fetchJson(get("https://internal.example/v1?token=SECRET-Q"), NONE, { ...internals, resolve: dns.resolve }));
    expect(error).toMatchObject({
      code: "INVALID_PARAMETER",
      details: { parameter: "params.url", value: "https://internal.example/v1", expected: URL_EXPECTATION },
    });
    expect(dns.asked).toEqual(["internal.example"]);
    // Which internal address the name maps to is not disclosed.
    expect(JSON.stringify([error.message, error.details])).not.toMatch(/10\.0\.0\.5|169\.254|127\.0\.0\.1|SECRET/);
  });
});

describe("redirects", () => {
  const BOTH: ProviderFetchConfig = { ...BASE, allowedHosts: ["localhost", "127.0.0.1"] };

  it("follows up to 3 redirects, relative and absolute", async () => {
    secure.route("/r3", { kind: "redirect", location: "/ok", status: 301 });
    secure.route("/r2", { kind: "redirect", location: secure.url("/r3"), status: 307 });
    secure.route("/r1", { kind: "redirect", location: "r2", status: 308 });
    const result = await fetchJson(get(secure.url("/r1")), BASE, internals);
    expect(result).toEqual({ body: { data: { balance: 42 } }, host: "localhost" });
  });

  it("refuses a fourth redirect", async () => {
    secure.route("/s4", { kind: "redirect", location: "/ok" });
    secure.route("/s3", { kind: "redirect", location: "/s4" });
    secure.route("/s2", { kind: "redirect", location: "/s3" });
    secure.route("/s1", { kind: "redirect", location: "/s2" });
    const before = secure.requests.length;
    const error = await failure(fetchJson(get(secure.url("/s1?x=SECRET-Q")), BASE, internals));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { provider: "http", url: secure.url("/s1"), error: "more than 3 redirects" } });
    expect(secure.requests.length - before).toBe(4);
  });

  it("turns POST into GET on 303 and keeps it on 307", async () => {
    secure.route("/m", { kind: "handler", handle: (req, res) => res.end(JSON.stringify({ method: req.method })) });
    secure.route("/p303", { kind: "redirect", location: "/m", status: 303 });
    secure.route("/p307", { kind: "redirect", location: "/m", status: 307 });
    const post = (path: string) => fetchJson({ url: secure.url(path), method: "POST", headers: {} }, BASE, internals);
    expect((await post("/p303")).body).toEqual({ method: "GET" });
    expect((await post("/p307")).body).toEqual({ method: "POST" });
  });

  it.each([
    { name: "loopback IP not allow-listed", location: () => other.url("/ok", "127.0.0.1") },
    { name: "IPv6 loopback", location: () => v6.url("/ok", "[::1]") },
    { name: "mapped loopback", location: () => other.url("/ok", "[::ffff:127.0.0.1]") },
    { name: "metadata address", location: () => "http://169.254.169.254/latest/meta-data/" },
    { name: "private address", location: () => "https://10.1.2.3/" },
    { name: "plain http to a host not allow-listed", location: () => other.url("/ok", "127.0.0.1").replace("https:", "http:") },
    { name: "another scheme", location: () => "ftp://localhost/file" },
  ])("refuses a redirect to a $name without connecting", async ({ name, location }) => {
    const path = `/to/${encodeURIComponent(name)}`;
    secure.route(path, { kind: "redirect", location: location() });
    const before = other.connections + v6.connections;
    const error = await failure(fetchJson(get(secure.url(path)), BASE, internals));
    expect(error).toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      details: { provider: "http", url: secure.url(path), error: "provider redirected to a target that is not allowed" },
    });
    expect(other.connections + v6.connections).toBe(before);
  });

  it("refuses a redirect to a name that resolves to a private address, without connecting", async () => {
    const dns = fakeResolver({ localhost: ["127.0.0.1"], "sneaky.example": ["192.168.0.10"] });
    secure.route("/to-sneaky", { kind: "redirect", location: "https://sneaky.example/x" });
    const error = await failure(fetchJson(get(secure.url("/to-sneaky")), BASE, { ...internals, resolve: dns.resolve }));
    expect(error).toMatchObject({ code: "PROVIDER_UNAVAILABLE", details: { error: "provider redirected to a target that is not allowed" } });
    expect(dns.asked).toEqual(["localhost", "sneaky.example"]);
  });

  it("keeps the caller's headers on the same origin and drops them on another", async () => {
    secure.route("/same", { kind: "redirect", location: "/landing" });
    secure.route("/landing", { kind: "json", value: {} });
    secure.route("/cross", { kind: "redirect", location: other.url("/landing", "127.0.0.1") });
    other.route("/landing", { kind: "json", value: {} });
    const headers = { "X-Api-Key": "key-1", Authorization: "Bearer token-1" };
    const withCredentials = (path: string) => secure.url(path).replace("https://", "https://bob:pw@");

    const sameBefore = secure.requests.length;
    await fetchJson(get(withCredentials("/same"), headers), BOTH, internals);
    const landed = secure.requests[sameBefore + 1];
    expect(landed?.path).toBe("/landing");
    expect(landed?.headers["x-api-key"]).toBe("key-1");
    expect(landed?.headers.authorization).toBe("Bearer token-1");

    const otherBefore = other.requests.length;
    await fetchJson(get(withCredentials("/cross"), headers), BOTH, internals);
    const crossed = other.requests[otherBefore];
    expect(crossed?.path).toBe("/landing");
    expect(crossed?.headers["x-api-key"]).toBeUndefined();
    expect(crossed?.headers.authorization).toBeUndefined();
  });

  it("may downgrade to http only for an allow-listed host", async () => {
    secure.route("/down", { kind: "redirect", location: plain.url("/ok") });
    expect((await fetchJson(get(secure.url("/down")), BASE, internals)).body).toEqual({ data: { balance: 42 } });
  });
});

describe("secrets never reach errors", () => {
  it("keeps header values, URL credentials and the query out of every message and details", async () => {
    secure.route("/secret-401", { kind: "status", status: 401 });
    secure.route("/secret-500", { kind: "status", status: 500 });
    secure.route("/secret-html", { kind: "text", body: "<p>SECRET-BODY</p>", contentType: "text/html" });
    secure.route("/secret-hang", { kind: "hang" });
    secure.route("/secret-redirect", { kind: "redirect", location: "https://10.0.0.1/?t=SECRET-R" });
    const headers = { Authorization: "Bearer SECRET-HEADER", "X-Api-Key": "SECRET-KEY" };
    const urlOf = (path: string, host = "localhost") =>
      secure.url(`${path}?api_key=SECRET-QUERY#SECRET-FRAGMENT`, host).replace("https://", "https://user:SECRET-PASS@");
    const errors = await Promise.all([
      failure(fetchJson(get(urlOf("/secret-401"), headers), BASE, internals)),
      failure(fetchJson(get(urlOf("/secret-500"), headers), BASE, internals)),
      failure(fetchJson(get(urlOf("/secret-html"), headers), BASE, internals)),
      failure(fetchJson(get(urlOf("/secret-hang"), headers), { ...BASE, timeoutMs: 200 }, internals)),
      failure(fetchJson(get(urlOf("/secret-redirect"), headers), BASE, internals)),
      failure(fetchJson(get(urlOf("/ok", "127.0.0.1"), headers), { ...BASE, allowedHosts: [] }, internals)),
      failure(fetchJson(get(urlOf("/ok"), { ...headers, Host: "SECRET-HOST" }), BASE, internals)),
      failure(fetchJson({ url: urlOf("/ok"), method: "PUT", headers }, BASE, internals)),
      failure(fetchJson(get(urlOf("/ok"), headers), BASE, {})),
    ]);
    expect(errors.map((e) => e.code)).toEqual([
      "PROVIDER_AUTH_FAILED",
      "PROVIDER_UNAVAILABLE",
      "PROVIDER_INVALID_RESPONSE",
      "PROVIDER_UNAVAILABLE",
      "PROVIDER_UNAVAILABLE",
      "INVALID_PARAMETER",
      "INVALID_PARAMETER",
      "INVALID_PARAMETER",
      "PROVIDER_UNAVAILABLE",
    ]);
    for (const error of errors) {
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain("SECRET");
    }
  });
});

describe("public entry point", () => {
  it("fetchProviderJson applies the same rules (refuses loopback by default)", async () => {
    const error = await failure(fetchProviderJson(get(secure.url("/ok", "127.0.0.1")), { ...BASE, allowedHosts: [] }));
    expect(error.code).toBe("INVALID_PARAMETER");
  });

  it("fetchProviderJson reaches an allow-listed http host", async () => {
    expect((await fetchProviderJson(get(plain.url("/ok")), BASE)).body).toEqual({ data: { balance: 42 } });
  });
});

describe("kept-alive connections", () => {
  it("reuse one connection for fetches of one origin at the addresses vetted for it", async () => {
    const before = secure.connections;
    for (let i = 0; i < 5; i++) expect((await fetchJson(get(secure.url("/ok")), BASE, internals)).body).toEqual({ data: { balance: 42 } });
    // The first fetch may reuse an earlier test's connection: at most one new one for five fetches.
    expect(secure.connections - before).toBeLessThanOrEqual(1);
  });

  it("never reuse a connection for a host whose DNS answer changed (a rebinding gets a connection of its own)", async () => {
    // Two names for the same local server: each vetted to its own loopback address.
    const config = { ...BASE, allowedHosts: ["one.test", "two.test"] };
    const dns = fakeResolver({ "one.test": ["127.0.0.1"] });
    const url = plain.url("/ok", "one.test");
    const first = plain.connections;
    await fetchJson(get(url), config, { resolve: dns.resolve });
    await fetchJson(get(url), config, { resolve: dns.resolve });
    expect(plain.connections - first).toBe(1);
    // The same host now resolves elsewhere (v6's loopback, where nothing listens for plain HTTP on this port):
    // the pooled socket to 127.0.0.1 must not carry the request.
    const moved = fakeResolver({ "one.test": ["::1"] });
    const error = await failure(fetchJson(get(url), config, { resolve: moved.resolve }));
    expect(error.code).toBe("PROVIDER_UNAVAILABLE");
    expect(plain.connections - first).toBe(1);
  });

  it("do not use a connection the server closed while it sat idle", async () => {
    const server = await startProviderServer();
    server.route("/ok", { kind: "json", value: { n: 1 } });
    try {
      await fetchJson(get(server.url("/ok", "127.0.0.1")), { ...BASE, allowedHosts: ["127.0.0.1"] }, {});
      // The server drops its idle connections without telling the pool first.
      server.closeIdleConnections();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await fetchJson(get(server.url("/ok", "127.0.0.1")), { ...BASE, allowedHosts: ["127.0.0.1"] }, {})).body).toEqual({ n: 1 });
      expect(server.connections).toBe(2);
    } finally {
      await server.close();
    }
  });
});
