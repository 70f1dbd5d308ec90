/**
 * Provider fetch against real local servers, when it goes out: the defaults, successful fetches, the
 * mapping of every status and body to an answer or error, TLS rules, the public entry point and
 * kept-alive connections. Traffic goes only to 127.0.0.1 and ::1; the CA of test/support/tls.ts is
 * trusted through the internal `ca` seam (test/api/provider-ca.test.ts proves NODE_EXTRA_CA_CERTS).
 * Request validation, SSRF refusals, redirects and secrecy of errors are in provider-fetch-guards.test.ts.
 */
import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { fetchJson } from "../../api/provider/fetch.ts";
import { DEFAULT_PROVIDER_MAX_BODY_BYTES, fetchProviderJson } from "../../api/provider/index.ts";
import { type ProviderReply, startProviderServer } from "../support/provider-server.ts";
import {
  BASE,
  failure,
  fakeResolver,
  garbagePort,
  get,
  internals,
  plain,
  secure,
  selfSigned,
  startProviderServers,
  tls11,
  v6,
  wrongName,
} from "./provider-fetch-support.ts";

startProviderServers();

describe("defaults", () => {
  // The deadline's default (10 s, PROVIDER_TIMEOUT_MS) is the api's configuration's: test/api/config.test.ts.
  it("the body's bound is 1 MiB", () => {
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
