/**
 * Provider fetch against real local servers, when it must refuse: request validation (methods, headers,
 * URLs), SSRF refusals of loopback, private and metadata targets (literal or resolved), the rules for
 * following redirects, and secrets (headers, credentials, query) kept out of every error. Traffic goes
 * only to 127.0.0.1 and ::1; the CA of test/support/tls.ts is trusted through the internal `ca` seam.
 * Successful fetches, status mapping, TLS and kept-alive connections are in provider-fetch.test.ts.
 */
import { describe, expect, it } from "vitest";
import { fetchJson, type ProviderFetchConfig } from "../../api/provider/fetch.ts";
import { URL_EXPECTATION } from "../../api/provider/target.ts";
import { BASE, failure, fakeResolver, get, internals, other, plain, secure, startProviderServers, v6 } from "./provider-fetch-support.ts";

startProviderServers();

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
