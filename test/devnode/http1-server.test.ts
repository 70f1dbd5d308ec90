/**
 * The devnode's small HTTP/1.1 server (devnode/http1-server.ts, with the framing of common/http1.ts) on
 * real loopback connections, driven by three clients: Node's fetch (undici), `node:http`'s request, and
 * raw `node:net` sockets for exact bytes. What `handle` receives (method, path with query, lower-case
 * headers, exact body bytes, Content-Length and chunked bodies, trailers, one byte at a time), the answers'
 * framing and keep-alive headers, pipelined requests answered in order, `Expect: 100-continue`, HEAD,
 * HTTP/1.0, `Connection: close`, the 4xx/5xx and close on input it cannot read, 500 from a failing
 * `handle`, connect/disconnect sessions, closeAllConnections and the idle timer.
 */
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from "node:http";
import { connect as netConnect, type AddressInfo, type Socket } from "node:net";
import { afterEach, expect, it, vi } from "vitest";
import { createHttp1Server, type Http1Request, type Http1Response, type Http1Server } from "../../devnode/http1-server.ts";

/** Waiting for the server to act: generous, the machine may be loaded. */
const POLL = { timeout: 10_000, interval: 5 };
const MAX_BODY_BYTES = 1024;
/** Long enough that no ordinary test meets the idle timer. */
const LONG_KEEP_ALIVE_MS = 30_000;

interface Session {
  id: number;
  /** The server side of the connection. */
  socket: Socket;
  /** How often the server socket's idle timer has fired. */
  timeouts: number;
  /** Chunks the server socket has read. */
  chunks: number;
}

interface Harness {
  server: Http1Server;
  port: number;
  url: string;
  /** What `handle` received, in call order. */
  requests: Http1Request[];
  /** Sessions handed out by `connect`, in order. */
  sessions: Session[];
  /** Sessions passed to `disconnect`, in order. */
  disconnected: Session[];
}

interface HarnessOptions {
  handle?: (request: Http1Request, session: Session) => Http1Response | Promise<Http1Response>;
  keepAliveMs?: number;
  maxBodyBytes?: number;
}

/** Closed after each test, last opened first. */
let cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup();
  vi.restoreAllMocks();
});

/** The default answer: 200, text naming the method, path and body. */
function echo(request: Http1Request): Http1Response {
  const body = request.body.toString("utf8");
  return { status: 200, contentType: "text/plain; charset=utf-8", body: `${request.method} ${request.path}${body === "" ? "" : ` ${body}`}` };
}

async function startServer(options: HarnessOptions = {}): Promise<Harness> {
  const requests: Http1Request[] = [];
  const sessions: Session[] = [];
  const disconnected: Session[] = [];
  const handle = options.handle ?? echo;
  const server = createHttp1Server<Session>({
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    keepAliveMs: options.keepAliveMs ?? LONG_KEEP_ALIVE_MS,
    connect(socket) {
      const session: Session = { id: sessions.length, socket, timeouts: 0, chunks: 0 };
      socket.on("timeout", () => {
        session.timeouts += 1;
      });
      socket.on("data", () => {
        session.chunks += 1;
      });
      sessions.push(session);
      return session;
    },
    disconnect(session) {
      disconnected.push(session);
    },
    handle(request, session) {
      requests.push(request);
      return handle(request, session);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://127.0.0.1:${port}`, requests, sessions, disconnected };
}

interface RawResponse {
  statusLine: string;
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * The whole answers in `raw`, in order; 1xx answers have no body, nor do the final answers whose index
 * (counting final answers only) is in `bodiless` (answers to HEAD).
 */
function parseResponses(raw: Buffer, bodiless: readonly number[] = []): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  let finals = 0;
  for (;;) {
    const end = raw.indexOf("\r\n\r\n", offset, "latin1");
    if (end === -1) return responses;
    const lines = raw.subarray(offset, end).toString("latin1").split("\r\n");
    const statusLine = lines[0] ?? "";
    const status = Number(statusLine.split(" ")[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    let length = 0;
    if (status >= 200) {
      if (!bodiless.includes(finals)) length = Number(headers.get("content-length") ?? "0");
      finals += 1;
    }
    const bodyStart = end + 4;
    if (raw.length < bodyStart + length) return responses;
    responses.push({ statusLine, status, headers, body: raw.subarray(bodyStart, bodyStart + length).toString("utf8") });
    offset = bodyStart + length;
  }
}

/** A raw `node:net` client that keeps every byte it receives. */
class RawClient {
  private readonly chunks: Buffer[] = [];
  ended = false;
  closed = false;

  constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.chunks.push(chunk));
    socket.on("end", () => {
      this.ended = true;
    });
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {
      // A reset after the server refused the input is acceptable; the tests look at what arrived.
    });
  }

  received(): Buffer {
    return Buffer.concat(this.chunks);
  }

  text(): string {
    return this.received().toString("latin1");
  }

  responses(bodiless: readonly number[] = []): RawResponse[] {
    return parseResponses(this.received(), bodiless);
  }

  /** The final (non-1xx) answers. */
  finals(bodiless: readonly number[] = []): RawResponse[] {
    return this.responses(bodiless).filter((response) => response.status >= 200);
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Writes `data` one byte per write, letting the event loop turn between bytes. */
  async writeByteByByte(data: string): Promise<void> {
    for (const byte of Buffer.from(data, "latin1")) {
      await this.write(Buffer.from([byte]));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

async function rawConnect(harness: Harness): Promise<RawClient> {
  const socket = netConnect({ port: harness.port, host: "127.0.0.1", noDelay: true });
  const client = new RawClient(socket);
  cleanups.push(() => {
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return client;
}

interface NodeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A `node:http` request on a connection of its own; `parts` are written one `write` each. */
function nodeRequest(harness: Harness, options: RequestOptions, parts: readonly string[]): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: harness.port, agent: false, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    for (const part of parts) req.write(part);
    req.end();
  });
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * undici hands a connection back to its pool a tick after the answer's body has been read: a fetch made
 * at once would open a second connection (it does so with node:http's server too).
 */
function connectionReleased(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A fresh connection to `harness` is still answered. */
async function expectServesNewConnections(harness: Harness): Promise<void> {
  const res = await fetch(`${harness.url}/still-there?after=error`);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("GET /still-there?after=error");
}

function onlyRequest(harness: Harness): Http1Request {
  expect(harness.requests).toHaveLength(1);
  return harness.requests[0] as Http1Request;
}

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

interface Refusal {
  what: string;
  bytes: string;
  status: number;
  message: string;
}

const REFUSALS: Refusal[] = [
  { what: "a malformed request line", bytes: "GET /\r\nHost: x\r\n\r\n", status: 400, message: "not an HTTP/1.x request line" },
  { what: "a request line of another protocol (HTTP/2 preface)", bytes: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 400, message: "not an HTTP/1.x request line" },
  { what: "a header line without a colon", bytes: "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", status: 400, message: "malformed header line" },
  { what: "a folded header line", bytes: "GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  continued\r\n\r\n", status: 400, message: "malformed header line" },
  { what: "whitespace before a header's colon", bytes: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", status: 400, message: "malformed header line" },
  {
    what: "both content-length and transfer-encoding",
    bytes: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    status: 400,
    message: "both transfer-encoding and content-length",
  },
  { what: "a non-numeric content-length", bytes: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3x\r\n\r\nabc", status: 400, message: "invalid content-length" },
  { what: "a negative content-length", bytes: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", status: 400, message: "invalid content-length" },
  { what: "a malformed chunk size", bytes: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 400, message: "malformed chunk size" },
  { what: "a chunk not followed by CRLF", bytes: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", status: 400, message: "chunk not followed by CRLF" },
  { what: "transfer-encoding gzip", bytes: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501, message: "unsupported transfer-encoding: gzip" },
  {
    what: "a chunked body growing above maxBodyBytes",
    bytes: `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n${"a".repeat(MAX_BODY_BYTES)}\r\n1\r\nb\r\n0\r\n\r\n`,
    status: 413,
    message: `body exceeds ${MAX_BODY_BYTES} bytes`,
  },
  { what: "a head over 64 KiB that has not ended", bytes: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(70_000)}`, status: 431, message: "head larger than 64 KiB" },
  {
    what: "a whole head over 64 KiB in one write",
    bytes: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(70_000)}\r\n\r\n`,
    status: 431,
    message: "head larger than 64 KiB",
  },
];

it.each(REFUSALS)("$what: $status with the reason, then the connection closes; new connections are still served", async ({ bytes, status, message }) => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write(bytes);

  await expect.poll(() => client.finals().length, POLL).toBeGreaterThan(0);
  const answers = client.finals();
  expect(answers).toHaveLength(1);
  expect(answers[0]?.status).toBe(status);
  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(answers[0]?.headers.get("connection")).toBe("close");
  expect(answers[0]?.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(answers[0]?.body).toContain(message);
  expect(harness.requests).toHaveLength(0);
  await expect.poll(() => harness.disconnected.length, POLL).toBe(1);

  await expectServesNewConnections(harness);
});

it("a content-length above maxBodyBytes gets 413 without waiting for the body", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  // Only the head: the answer must come without the body ever being sent.
  await client.write(`POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`);

  await expect.poll(() => client.closed, POLL).toBe(true);
  const [answer] = client.finals();
  expect(answer?.status).toBe(413);
  expect(answer?.headers.get("connection")).toBe("close");
  expect(answer?.body).toBe(`body of ${MAX_BODY_BYTES + 1} bytes exceeds ${MAX_BODY_BYTES}`);
  expect(harness.requests).toHaveLength(0);
  await expectServesNewConnections(harness);
});

it("a body of exactly maxBodyBytes is accepted, by Content-Length and chunked", async () => {
  const harness = await startServer({ handle: (request) => ({ status: 200, body: String(request.body.length) }) });
  const client = await rawConnect(harness);
  const body = "z".repeat(MAX_BODY_BYTES);

  await client.write(
    `POST /max HTTP/1.1\r\nHost: x\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n${body}` +
      `POST /max-chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n200\r\n${body.slice(0, 512)}\r\n200\r\n${body.slice(512)}\r\n0\r\n\r\n`,
  );

  await expect.poll(() => client.finals().length, POLL).toBe(2);
  expect(client.finals().map((response) => [response.status, response.body])).toEqual([
    [200, String(MAX_BODY_BYTES)],
    [200, String(MAX_BODY_BYTES)],
  ]);
  expect(harness.requests.every((request) => request.body.equals(Buffer.from(body)))).toBe(true);
});

it("Expect: 100-continue with a content-length above maxBodyBytes gets 413 and no 100 Continue", async () => {
  const harness = await startServer();
  const client = await rawConnect(harness);

  await client.write(`POST /big HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n`);

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(client.text().startsWith("HTTP/1.1 413 Payload Too Large\r\n")).toBe(true);
  expect(client.responses().map((response) => response.status)).toEqual([413]);
  expect(harness.requests).toHaveLength(0);
});

it("an error after pipelined good requests comes after their answers, in order", async () => {
  const slow = deferred<Http1Response>();
  const harness = await startServer({ handle: (request) => (request.path === "/slow" ? slow.promise : echo(request)) });
  const client = await rawConnect(harness);

  await client.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP AT ALL\r\n\r\n");
  await expect.poll(() => harness.requests.length, POLL).toBe(2);
  expect(client.received().length).toBe(0);
  slow.resolve({ status: 200, body: "slow" });

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(client.finals().map((response) => [response.status, response.body])).toEqual([
    [200, "slow"],
    [200, "GET /fast"],
    [400, 'not an HTTP/1.x request line: "NOT HTTP AT ALL"'],
  ]);
});

it("handle throwing synchronously gives 500 with the message, and the connection stays usable", async () => {
  const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const harness = await startServer({
    handle: (request) => {
      if (request.path === "/throw") throw new Error("sync boom");
      return echo(request);
    },
  });
  const client = await rawConnect(harness);

  await client.write("POST /throw HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx");
  await expect.poll(() => client.finals().length, POLL).toBe(1);
  await client.write("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => client.finals().length, POLL).toBe(2);

  const [failed, ok] = client.finals();
  expect(failed?.statusLine).toBe("HTTP/1.1 500 Internal Server Error");
  expect(failed?.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(failed?.headers.get("connection")).toBe("keep-alive");
  expect(failed?.body).toBe("sync boom");
  expect(ok?.status).toBe(200);
  expect(ok?.body).toBe("GET /ok");
  expect(client.closed).toBe(false);
  expect(harness.sessions).toHaveLength(1);
  expect(errors).toHaveBeenCalledWith("[devnode] rollup HTTP server:", expect.objectContaining({ message: "sync boom" }));
});

it("handle rejecting gives 500 with the message (an Error's or a thrown string), and the connection stays usable", async () => {
  vi.spyOn(console, "error").mockImplementation(() => undefined);
  const harness = await startServer({
    handle: (request) => {
      if (request.path === "/reject") return Promise.reject(new Error("async boom"));
      if (request.path === "/reject-string") return Promise.reject("just a string");
      return Promise.resolve(echo(request));
    },
  });

  const rejected = await fetch(`${harness.url}/reject`, { method: "POST", body: "{}" });
  expect(rejected.status).toBe(500);
  expect(await rejected.text()).toBe("async boom");
  await connectionReleased();
  const stringly = await fetch(`${harness.url}/reject-string`);
  expect(stringly.status).toBe(500);
  expect(await stringly.text()).toBe("just a string");
  await connectionReleased();
  const ok = await fetch(`${harness.url}/fine`);
  expect(ok.status).toBe(200);
  expect(await ok.text()).toBe("GET /fine");

  expect(rejected.headers.get("connection")).toBe("keep-alive");
  expect(harness.sessions).toHaveLength(1);
  expect(harness.disconnected).toHaveLength(0);
});

it("disconnect gets the connection's own session when the client closes", async () => {
  const harness = await startServer({ handle: (request, session) => ({ status: 200, body: `session ${session.id} ${request.path}` }) });
  const first = await rawConnect(harness);
  const second = await rawConnect(harness);

  await first.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  await second.write("GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => first.finals().length + second.finals().length, POLL).toBe(2);
  const firstSession = harness.sessions.find((session) => first.finals()[0]?.body === `session ${session.id} /a`);
  expect(firstSession).toBeDefined();

  first.socket.end();

  await expect.poll(() => harness.disconnected.length, POLL).toBe(1);
  expect(harness.disconnected[0]).toBe(firstSession);
  expect(second.closed).toBe(false);
});

it("closeAllConnections destroys every open connection and each gets its disconnect", async () => {
  const harness = await startServer();
  const clients = [await rawConnect(harness), await rawConnect(harness), await rawConnect(harness)];
  await (clients[0] as RawClient).write("GET /used HTTP/1.1\r\nHost: x\r\n\r\n");
  // One connection with a request half read.
  await (clients[1] as RawClient).write("POST /half HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
  await expect.poll(() => harness.sessions.length, POLL).toBe(3);
  await expect.poll(() => clients[0]?.finals().length, POLL).toBe(1);

  harness.server.closeAllConnections();

  await expect.poll(() => clients.every((client) => client.closed), POLL).toBe(true);
  await expect.poll(() => harness.disconnected.length, POLL).toBe(3);
  expect(new Set(harness.disconnected)).toEqual(new Set(harness.sessions));
  expect(harness.requests.map((request) => request.path)).toEqual(["/used"]);
});

it("an answer that is ready after its client left is dropped, and the server goes on serving", async () => {
  const slow = deferred<Http1Response>();
  const harness = await startServer({ handle: (request) => (request.path === "/slow" ? slow.promise : echo(request)) });
  const client = await rawConnect(harness);

  await client.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => harness.requests.length, POLL).toBe(1);
  client.socket.destroy();
  await expect.poll(() => harness.disconnected.length, POLL).toBe(1);
  slow.resolve({ status: 200, body: "too late" });

  await expectServesNewConnections(harness);
});

it("an idle connection is closed after keepAliveMs, with its disconnect", async () => {
  const harness = await startServer({ keepAliveMs: 200 });
  const client = await rawConnect(harness);

  await client.write("GET /once HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => client.finals().length, POLL).toBe(1);
  // Rounded up to a second: undici does not reuse a connection whose hint says 0.
  expect(client.finals()[0]?.headers.get("keep-alive")).toBe("timeout=1");

  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(harness.sessions[0]?.timeouts).toBeGreaterThanOrEqual(1);
  expect(harness.disconnected).toEqual([harness.sessions[0]]);
});

it("the idle timer does not close a connection whose request is still being handled", async () => {
  const slow = deferred<Http1Response>();
  const harness = await startServer({ keepAliveMs: 200, handle: () => slow.promise });
  const client = await rawConnect(harness);

  await client.write("GET /pending HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => harness.requests.length, POLL).toBe(1);
  // The server socket's idle timer has fired while handle was pending: the server kept it open.
  await expect.poll(() => harness.sessions[0]?.timeouts, POLL).toBeGreaterThanOrEqual(1);
  expect(harness.sessions[0]?.socket.destroyed).toBe(false);
  expect(harness.disconnected).toHaveLength(0);

  slow.resolve({ status: 200, body: "finally" });

  await expect.poll(() => client.finals().length, POLL).toBe(1);
  expect(client.finals()[0]?.body).toBe("finally");
  expect(client.closed).toBe(false);
});

it("a connection the idle timer spared while its request was handled is closed once it is idle after the answer", async () => {
  const slow = deferred<Http1Response>();
  const harness = await startServer({ keepAliveMs: 200, handle: () => slow.promise });
  const client = await rawConnect(harness);

  await client.write("GET /pending HTTP/1.1\r\nHost: x\r\n\r\n");
  await expect.poll(() => harness.sessions[0]?.timeouts, POLL).toBeGreaterThanOrEqual(1);
  expect(harness.sessions[0]?.socket.destroyed).toBe(false);
  slow.resolve({ status: 200, body: "finally" });
  await expect.poll(() => client.finals().length, POLL).toBe(1);

  // The timer fires again keepAliveMs after the answer went out; the connection is idle now.
  await expect.poll(() => harness.sessions[0]?.timeouts, POLL).toBeGreaterThanOrEqual(2);
  await expect.poll(() => client.closed, POLL).toBe(true);
  expect(harness.disconnected).toEqual([harness.sessions[0]]);
});

it("the idle timer does not close a connection in the middle of reading a request", async () => {
  const harness = await startServer({ keepAliveMs: 200 });
  const client = await rawConnect(harness);

  await client.write("POST /partial HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab");
  await expect.poll(() => harness.sessions[0]?.timeouts, POLL).toBeGreaterThanOrEqual(1);
  expect(harness.sessions[0]?.socket.destroyed).toBe(false);
  expect(harness.requests).toHaveLength(0);

  await client.write("cd");

  await expect.poll(() => client.finals().length, POLL).toBe(1);
  expect(client.finals()[0]?.body).toBe("POST /partial abcd");
});
