/**
 * The devnode's small HTTP/1.1 server (devnode/http1-server.ts, with the framing of common/http1.ts) on
 * real loopback connections, driven by three clients: Node's fetch (undici), `node:http`'s request, and
 * raw `node:net` sockets for exact bytes. What `handle` receives (method, path with query, lower-case
 * headers, exact body bytes, Content-Length and chunked bodies, trailers, one byte at a time), the answers'
 * framing and keep-alive headers, pipelined requests answered in order, `Expect: 100-continue`, HEAD,
 * HTTP/1.0 and `Connection: close`. The refusals of unreadable input and a failing `handle` are in
 * http1-server-errors.test.ts, sessions and the idle timer in http1-server-connections.test.ts.
 */
import { expect, it } from "vitest";
import type { Http1Response } from "../../devnode/http1-server.ts";
import { closeAfterEach, connectionReleased, deferred, echo, LONG_KEEP_ALIVE_MS, nodeRequest, onlyRequest, POLL, rawConnect, startServer } from "./http1-server-support.ts";

closeAfterEach();

it("fetch POST with a JSON body: handle sees method, path with query, lower-case headers and the exact body bytes; the answer carries status, content-type, content-length and keep-alive headers", async () => {
  const harness = await startServer({
    handle: (request) => ({ status: 201, contentType: "application/json", body: JSON.stringify({ got: request.path, note: "héllo ✓" }) }),
  });
  const body = JSON.stringify({ status: "accept", note: "ünïcödé ✓" });

  const res = await fetch(`${harness.url}/finish?x=1&y=two`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Rollup-Test": "Mixed Case Value" },
    body,
  });
  const text = await res.text();

  const seen = onlyRequest(harness);
  expect(seen.method).toBe("POST");
  expect(seen.path).toBe("/finish?x=1&y=two");
  expect(seen.body.equals(Buffer.from(body, "utf8"))).toBe(true);
  expect(seen.headers.get("content-type")).toBe("application/json");
  expect(seen.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
  expect(seen.headers.get("x-rollup-test")).toBe("Mixed Case Value");
  expect(seen.headers.get("host")).toBe(`127.0.0.1:${harness.port}`);
  for (const name of seen.headers.keys()) expect(name).toBe(name.toLowerCase());

  expect(res.status).toBe(201);
  expect(res.statusText).toBe("Created");
  expect(res.headers.get("content-type")).toBe("application/json");
  expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text, "utf8")));
  expect(res.headers.get("connection")).toBe("keep-alive");
  expect(res.headers.get("keep-alive")).toBe(`timeout=${LONG_KEEP_ALIVE_MS / 1000}`);
  expect(JSON.parse(text)).toEqual({ got: "/finish?x=1&y=two", note: "héllo ✓" });
});

it("fetch GET gets an empty body to handle, and two fetches in a row reuse one kept-alive connection", async () => {
  const harness = await startServer();

  const first = await fetch(`${harness.url}/next?wait=1`);
  expect(await first.text()).toBe("GET /next?wait=1");
  await connectionReleased();
  const second = await fetch(`${harness.url}/next?wait=2`);
  expect(await second.text()).toBe("GET /next?wait=2");

  expect(first.status).toBe(200);
  expect(first.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(first.headers.get("content-length")).toBe(String("GET /next?wait=1".length));
  expect(harness.requests.map((request) => request.method)).toEqual(["GET", "GET"]);
  expect(harness.requests.map((request) => request.body.length)).toEqual([0, 0]);
  expect(harness.sessions).toHaveLength(1);
  expect(harness.disconnected).toHaveLength(0);
});

it("node:http request with a chunked body written in two parts: handle gets the parts joined", async () => {
  const harness = await startServer();

  const answer = await nodeRequest(harness, { method: "PUT", path: "/chunks?n=2", headers: { "X-Part-Count": "2" } }, ["first part, ", "second ✓"]);

  const seen = onlyRequest(harness);
  expect(seen.method).toBe("PUT");
  expect(seen.path).toBe("/chunks?n=2");
  expect(seen.headers.get("transfer-encoding")).toBe("chunked");
  expect(seen.headers.has("content-length")).toBe(false);
  expect(seen.headers.get("x-part-count")).toBe("2");
  expect(seen.body.equals(Buffer.from("first part, second ✓", "utf8"))).toBe(true);
  expect(answer.status).toBe(200);
  expect(answer.headers["content-type"]).toBe("text/plain; charset=utf-8");
  expect(answer.body).toBe("PUT /chunks?n=2 first part, second ✓");
});

it("node:http request with a Content-Length body and a GET: both answered on their own connections", async () => {
  const harness = await startServer();
  const body = '{"a":[1,2,3]}';

  const post = await nodeRequest(harness, { method: "POST", path: "/report", headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, [body]);
  const get = await nodeRequest(harness, { method: "GET", path: "/status?verbose" }, []);

  expect(post.status).toBe(200);
  expect(post.body).toBe(`POST /report ${body}`);
  expect(get.status).toBe(200);
  expect(get.body).toBe("GET /status?verbose");
  expect(harness.requests.map((request) => [request.method, request.path, request.body.toString("utf8")])).toEqual([
    ["POST", "/report", body],
    ["GET", "/status?verbose", ""],
  ]);
  expect(harness.requests[0]?.headers.get("content-length")).toBe(String(body.length));
});

it("a chunked body with chunk extensions and trailers over a raw socket is joined, and the next request on the connection is read after the trailers", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write(
    "POST /trailers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n" +
      "3;name=value\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Checksum: 42\r\nX-Other: yes\r\n\r\n" +
      "GET /after HTTP/1.1\r\nHost: x\r\n\r\n",
  );

  await expect.poll(() => client.finals().length, POLL).toBe(2);
  expect(harness.requests.map((request) => request.path)).toEqual(["/trailers", "/after"]);
  expect(harness.requests[0]?.body.toString("latin1")).toBe("abc0123456789");
  expect(harness.requests[1]?.body.length).toBe(0);
  expect(client.finals().map((response) => response.body)).toEqual(["POST /trailers abc0123456789", "GET /after"]);
  expect(client.closed).toBe(false);
});

it("requests written one byte at a time (a Content-Length body, then a chunked one) are parsed", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);
  const first = "POST /slow?q=1 HTTP/1.1\r\nHost: x\r\nX-Mixed: Case\r\nContent-Length: 11\r\n\r\nhello world";
  const second = "POST /slow-chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\n";

  await client.writeByteByByte(first + second);

  await expect.poll(() => client.finals().length, POLL).toBe(2);
  expect(harness.requests.map((request) => [request.method, request.path, request.body.toString("latin1")])).toEqual([
    ["POST", "/slow?q=1", "hello world"],
    ["POST", "/slow-chunked", "wikipedia"],
  ]);
  expect(harness.requests[0]?.headers.get("x-mixed")).toBe("Case");
  expect(client.finals().map((response) => response.status)).toEqual([200, 200]);
  // The server did read the bytes in many pieces, not in one.
  expect(harness.sessions[0]?.chunks).toBeGreaterThan(10);
});

it("pipelining: three requests in one write are answered in request order even when the first one's handle finishes last", async () => {
  const slow = deferred<Http1Response>();
  const harness = await startServer({
    handle: (request) => (request.path === "/first" ? slow.promise : Promise.resolve(echo(request))),
  });
  const client = await rawConnect(harness);

  await client.write(
    "GET /first HTTP/1.1\r\nHost: x\r\n\r\n" +
      "POST /second HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\ntwo" +
      "GET /third HTTP/1.1\r\nHost: x\r\n\r\n",
  );

  // handle is called for all three, in arrival order, before the first has an answer.
  await expect.poll(() => harness.requests.map((request) => request.path), POLL).toEqual(["/first", "/second", "/third"]);
  // Let the second and third answers be ready: still nothing may be written ahead of the first.
  await new Promise<void>((resolve) => setTimeout(resolve, 50));
  expect(client.received().length).toBe(0);

  slow.resolve({ status: 202, contentType: "text/plain", body: "first, at last" });

  await expect.poll(() => client.finals().length, POLL).toBe(3);
  expect(client.finals().map((response) => [response.status, response.body])).toEqual([
    [202, "first, at last"],
    [200, "POST /second two"],
    [200, "GET /third"],
  ]);
  expect(client.closed).toBe(false);
});

it("HTTP/1.1 with Connection: close is answered with connection: close and the server ends the connection", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write("GET /bye HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(client.ended).toBe(true);
  const [answer] = client.finals();
  expect(answer?.statusLine).toBe("HTTP/1.1 200 OK");
  expect(answer?.headers.get("connection")).toBe("close");
  expect(answer?.headers.has("keep-alive")).toBe(false);
  expect(answer?.body).toBe("GET /bye");
  await expect.poll(() => harness.disconnected.length, POLL).toBe(1);
});

it("requests pipelined after a Connection: close request are neither handled nor answered", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write(
    "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + "POST /after-close HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nlate",
  );

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(client.finals().map((response) => response.body)).toEqual(["GET /last"]);
  // RFC 9112 section 9.6: after a "close" request the server MUST NOT process further requests.
  expect(harness.requests.map((request) => request.path)).toEqual(["/last"]);
});

it("plain HTTP/1.0 is answered with connection: close and the connection ends", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write("GET /old?v=1.0 HTTP/1.0\r\n\r\n");

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(client.ended).toBe(true);
  const [answer] = client.finals();
  expect(answer?.status).toBe(200);
  expect(answer?.headers.get("connection")).toBe("close");
  expect(answer?.body).toBe("GET /old?v=1.0");
  expect(onlyRequest(harness).path).toBe("/old?v=1.0");
});

it("HTTP/1.0 with Connection: keep-alive stays open for a second request", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write("GET /one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  await expect.poll(() => client.finals().length, POLL).toBe(1);
  const first = client.finals()[0];
  expect(first?.headers.get("connection")).toBe("keep-alive");
  expect(first?.headers.get("keep-alive")).toBe(`timeout=${LONG_KEEP_ALIVE_MS / 1000}`);

  await client.write("POST /two HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi");
  await expect.poll(() => client.finals().length, POLL).toBe(2);

  expect(client.finals().map((response) => response.body)).toEqual(["GET /one", "POST /two hi"]);
  expect(client.ended).toBe(false);
  expect(harness.sessions).toHaveLength(1);
  expect(harness.disconnected).toHaveLength(0);
});

it("Expect: 100-continue: the server writes 100 Continue before the body is sent, then the final answer once it is", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write("POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");

  await expect.poll(() => client.text(), POLL).toBe("HTTP/1.1 100 Continue\r\n\r\n");
  expect(harness.requests).toHaveLength(0);

  await client.write("hello");

  await expect.poll(() => client.finals().length, POLL).toBe(1);
  expect(client.text().startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")).toBe(true);
  expect(client.finals()[0]?.body).toBe("POST /upload hello");
  const seen = onlyRequest(harness);
  expect(seen.headers.get("expect")).toBe("100-continue");
  expect(seen.body.toString("latin1")).toBe("hello");
});

it("HEAD is answered with the headers, content-length of the body that GET would get, and no body", async () => {
  const harness = await startServer({
    handle: (request) => ({ status: 200, contentType: "text/plain", body: request.method === "HEAD" ? "twelve bytes" : "get body" }),
  });
  const client = await rawConnect(harness);

  // A GET right behind the HEAD shows exactly where the HEAD answer ends.
  await client.write("HEAD /thing HTTP/1.1\r\nHost: x\r\n\r\nGET /thing HTTP/1.1\r\nHost: x\r\n\r\n");

  await expect.poll(() => client.finals([0]).length, POLL).toBe(2);
  const [head, get] = client.finals([0]);
  expect(head?.status).toBe(200);
  expect(head?.headers.get("content-length")).toBe("12");
  expect(head?.headers.get("content-type")).toBe("text/plain");
  expect(head?.body).toBe("");
  expect(get?.body).toBe("get body");
  const text = client.text();
  expect(text.slice(text.indexOf("\r\n\r\n") + 4).startsWith("HTTP/1.1 200 OK\r\n")).toBe(true);
  expect(harness.requests.map((request) => request.method)).toEqual(["HEAD", "GET"]);
});
