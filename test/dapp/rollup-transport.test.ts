/**
 * The dapp's hand-written HTTP/1.1 client (dapp/rollup-transport.ts) against real servers on loopback:
 * what a `node:http` server sees of `post` and `fetch`, every way an answer's body is framed (length,
 * chunked, until close, one byte at a time), pipelined requests answered in order, the connection being
 * dropped by either side, garbage and oversized answers, and the `Response` it hands to openapi-fetch.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  BufferedResponse,
  createRollupTransport,
  MAX_ANSWER_BYTES,
  RollupRequest,
  RollupTransportError,
  withRollupRequests,
  type RollupTransport,
} from "../../dapp/rollup-transport.ts";

const POLL = { timeout: 10_000, interval: 5 };

/** Closed after each test, last opened first. */
let cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup();
});

function transportTo(baseUrl: string): RollupTransport {
  const transport = createRollupTransport(baseUrl);
  cleanups.push(() => transport.close());
  return transport;
}

async function listen(server: NetServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

interface HttpServer {
  url: string;
  seen: SeenRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
}

/** A `node:http` server; `handler` runs once the request body has been read in full. */
async function startHttpServer(handler: (request: SeenRequest, res: ServerResponse) => void): Promise<HttpServer> {
  const seen: SeenRequest[] = [];
  let connections = 0;
  const server = createHttpServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(parts).toString("utf8") };
      seen.push(request);
      handler(request, res);
    });
  });
  server.on("connection", () => {
    connections += 1;
  });
  const port = await listen(server);
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${port}`, seen, connections: () => connections };
}

interface RawRequest {
  method: string;
  path: string;
  headers: Map<string, string>;
  body: string;
  /** Index of the connection it came on, in order of acceptance. */
  connection: number;
}

interface RawServer {
  url: string;
  requests: RawRequest[];
  /** Server-side sockets, in order of acceptance. */
  sockets: Socket[];
  closed: Set<number>;
}

/**
 * A `node:net` server that parses requests (head plus content-length body) and leaves answering to
 * `onRequest`, byte for byte.
 */
async function startRawServer(onRequest: (request: RawRequest, socket: Socket, server: RawServer) => void): Promise<RawServer> {
  const raw: RawServer = { url: "", requests: [], sockets: [], closed: new Set() };
  const server = createNetServer((socket) => {
    const connection = raw.sockets.length;
    raw.sockets.push(socket);
    socket.setNoDelay(true);
    socket.on("error", () => {
      // A reset from the client dropping the connection is expected in some tests.
    });
    socket.on("close", () => raw.closed.add(connection));
    let buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        const lines = buffer.subarray(0, end).toString("latin1").split("\r\n");
        const [method = "", path = ""] = (lines[0] ?? "").split(" ");
        const headers = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        const length = Number(headers.get("content-length") ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString("utf8");
        buffer = buffer.subarray(end + 4 + length);
        const request = { method, path, headers, body, connection };
        raw.requests.push(request);
        onRequest(request, socket, raw);
      }
    });
  });
  const port = await listen(server);
  raw.url = `http://127.0.0.1:${port}`;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of raw.sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return raw;
}

function answer(status: string, body: string, headers: string[] = []): string {
  return [`HTTP/1.1 ${status}`, `content-length: ${Buffer.byteLength(body)}`, ...headers, "", body].join("\r\n");
}

/** A raw server answering every request 200 with `ok <path>`. */
function answerOk(request: RawRequest, socket: Socket): void {
  socket.write(answer("200 OK", `ok ${request.path}`));
}

describe("post", () => {
  it("writes POST with the path, a JSON content-type and the exact body; answers with status, statusText, lower-case headers and body", async () => {
    const server = await startHttpServer((_request, res) => {
      res.writeHead(201, "Created Here", { "Content-Type": "application/json", "X-Rollup-Answer": "Yes" });
      res.end('{"ok":true}');
    });
    const transport = transportTo(server.url);
    const body = JSON.stringify({ status: "accept", note: "ünïcödé ✓" });

    const result = await transport.post("/finish", body);

    expect(server.seen).toHaveLength(1);
    const seen = server.seen[0] as SeenRequest;
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/finish");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(seen.headers.host).toBe(new URL(server.url).host);
    expect(seen.body).toBe(body);

    expect(result.status).toBe(201);
    expect(result.statusText).toBe("Created Here");
    expect(result.headers.get("content-type")).toBe("application/json");
    expect(result.headers.get("x-rollup-answer")).toBe("Yes");
    for (const name of result.headers.keys()) expect(name).toBe(name.toLowerCase());
    expect(result.body.toString("utf8")).toBe('{"ok":true}');
  });

  it("puts the base URL's path before the request path, with or without a trailing slash", async () => {
    const server = await startHttpServer((_request, res) => res.end("ok"));
    const plain = transportTo(`${server.url}/base`);
    const slashed = transportTo(`${server.url}/rollup/api/`);

    expect((await plain.post("/notice", "{}")).status).toBe(200);
    expect((await slashed.post("/report", "{}")).status).toBe(200);

    expect(server.seen.map((request) => request.url)).toEqual(["/base/notice", "/rollup/api/report"]);
  });

  it("keeps one connection for many requests in a row", async () => {
    const server = await startHttpServer((request, res) => res.end(`echo ${request.body}`));
    const transport = transportTo(server.url);

    for (let i = 0; i < 5; i += 1) {
      const result = await transport.post("/finish", `{"i":${i}}`);
      expect(result.body.toString()).toBe(`echo {"i":${i}}`);
    }
    expect(server.connections()).toBe(1);
  });

  it("joins the repeated headers of an answer with \", \"", async () => {
    const server = await startRawServer((_request, socket) => {
      socket.write(answer("200 OK", "x", ["X-Many: one", "x-many: two", "X-MANY: three"]));
    });
    const transport = transportTo(server.url);

    const result = await transport.post("/finish", "{}");

    expect(result.headers.get("x-many")).toBe("one, two, three");
  });
});

describe("fetch", () => {
  it("sends the Request's method, path, query, headers and body, and answers with a Response", async () => {
    // No writeHead: node:http then frames the empty answer with `Content-Length: 0`.
    const server = await startHttpServer((_request, res) => {
      res.statusCode = 200;
      res.end();
    });
    const transport = transportTo(server.url);

    const response = await transport.fetch(
      new Request(`${server.url}/finish?wait=1`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Custom": "custom value" },
        body: '{"status":"accept"}',
      }),
    );

    const seen = server.seen[0] as SeenRequest;
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/finish?wait=1");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["x-custom"]).toBe("custom value");
    expect(seen.body).toBe('{"status":"accept"}');

    expect(response).toBeInstanceOf(BufferedResponse);
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.statusText).toBe("OK");
    expect(response.url).toBe(`${server.url}/finish?wait=1`);
    expect(response.headers.get("Content-Length")).toBe("0");
    expect(await response.text()).toBe("");
  });

  it("takes a URL and init like the global fetch, and reads a JSON answer", async () => {
    const server = await startHttpServer((request, res) => {
      res.writeHead(202, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ got: request.body, method: request.method }));
    });
    const transport = transportTo(server.url);

    const response = await transport.fetch(`${server.url}/finish`, { method: "POST", body: "payload" });

    expect(response.status).toBe(202);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ got: "payload", method: "POST" });
  });

  it("sends a GET without a body", async () => {
    const server = await startHttpServer((_request, res) => res.end("got it"));
    const transport = transportTo(server.url);

    const response = await transport.fetch(`${server.url}/status`);

    const seen = server.seen[0] as SeenRequest;
    expect(seen.method).toBe("GET");
    expect(seen.headers["content-length"]).toBeUndefined();
    expect(seen.body).toBe("");
    expect(await response.text()).toBe("got it");
  });

  it("gives a 204 answer a null body", async () => {
    const server = await startHttpServer((_request, res) => {
      res.writeHead(204);
      res.end();
    });
    const transport = transportTo(server.url);

    const response = await transport.fetch(new Request(`${server.url}/notice`, { method: "POST", body: "{}" }));

    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect(await response.text()).toBe("");
  });

  it("rejects a URL of another origin with a TypeError and sends nothing", async () => {
    const server = await startHttpServer((_request, res) => res.end());
    const transport = transportTo(server.url);
    const otherPort = new URL(server.url).port === "1" ? "2" : "1";

    await expect(transport.fetch(`http://127.0.0.1:${otherPort}/finish`, { method: "POST", body: "{}" })).rejects.toThrow(TypeError);
    await expect(transport.fetch(`http://localhost:${new URL(server.url).port}/finish`)).rejects.toThrow(TypeError);
    expect(server.seen).toHaveLength(0);
  });
});

describe("answer framing", () => {
  it("joins a chunked answer written in two parts", async () => {
    const server = await startHttpServer((_request, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.write("first part, ");
      setTimeout(() => {
        res.write("second part");
        res.end();
      }, 10);
    });
    const transport = transportTo(server.url);

    const result = await transport.post("/finish", "{}");

    expect(result.headers.get("transfer-encoding")).toBe("chunked");
    expect(result.headers.has("content-length")).toBe(false);
    expect(result.body.toString()).toBe("first part, second part");
    // The connection is still good for the next request.
    expect((await transport.post("/finish", "{}")).body.toString()).toBe("first part, second part");
    expect(server.connections()).toBe(1);
  });

  it("reads a chunked answer with chunk extensions and trailers", async () => {
    const server = await startRawServer((_request, socket) => {
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;name=value\r\nabcd\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n");
    });
    const transport = transportTo(server.url);

    const result = await transport.post("/finish", "{}");

    expect(result.body.toString()).toBe("abcd0123456789");
  });

  it("reads an answer without content-length whole, up to the server closing the connection", async () => {
    const server = await startRawServer((_request, socket) => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nthe body ");
      setTimeout(() => {
        socket.write("runs until ");
        setTimeout(() => socket.end("the end"), 5);
      }, 5);
    });
    const transport = transportTo(server.url);

    const result = await transport.post("/finish", "{}");

    expect(result.status).toBe(200);
    expect(result.body.toString()).toBe("the body runs until the end");
  });

  it("parses an answer that arrives one byte at a time", async () => {
    const bytes = Buffer.from(
      "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Two: a\r\nX-Two: b\r\nTransfer-Encoding: chunked\r\n\r\n" +
        '5\r\n{"a":\r\n3\r\n12}\r\n0\r\n\r\n' +
        answer("200 OK", "second answer"),
    );
    const server = await startRawServer((request, socket) => {
      if (request.path !== "/first") return;
      void (async () => {
        for (const byte of bytes) {
          socket.write(Buffer.of(byte));
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      })();
    });
    const transport = transportTo(server.url);

    const first = transport.post("/first", "{}");
    const second = transport.post("/second", "{}");

    const one = await first;
    expect(one.status).toBe(201);
    expect(one.statusText).toBe("Created");
    expect(one.headers.get("content-type")).toBe("application/json");
    expect(one.headers.get("x-two")).toBe("a, b");
    expect(JSON.parse(one.body.toString())).toEqual({ a: 12 });
    const two = await second;
    expect(two.status).toBe(200);
    expect(two.body.toString()).toBe("second answer");
  });

  it("skips a 100 Continue before the real answer", async () => {
    const server = await startRawServer((_request, socket) => {
      socket.write("HTTP/1.1 100 Continue\r\n\r\n" + answer("200 OK", "after continue"));
    });
    const transport = transportTo(server.url);

    const result = await transport.post("/finish", "{}");

    expect(result.status).toBe(200);
    expect(result.body.toString()).toBe("after continue");
  });
});

describe("pipelining", () => {
  it("writes requests issued without waiting in order on one connection and settles each with its own answer, in order", async () => {
    const server = await startRawServer((_request, socket, raw) => {
      // Answer only once all three have been read: the client did not wait for answers in between.
      if (raw.requests.length < 3) return;
      socket.write(raw.requests.map((request) => answer("200 OK", `answer to ${request.path} ${request.body}`)).join(""));
    });
    const transport = transportTo(server.url);
    const settled: string[] = [];

    const promises = ["/notice", "/report", "/finish"].map((path, i) =>
      transport.post(path, `{"n":${i}}`).then((result) => {
        settled.push(path);
        return result;
      }),
    );
    const results = await Promise.all(promises);

    expect(server.requests.map((request) => [request.path, request.body, request.connection])).toEqual([
      ["/notice", '{"n":0}', 0],
      ["/report", '{"n":1}', 0],
      ["/finish", '{"n":2}', 0],
    ]);
    expect(results.map((result) => result.body.toString())).toEqual([
      'answer to /notice {"n":0}',
      'answer to /report {"n":1}',
      'answer to /finish {"n":2}',
    ]);
    expect(settled).toEqual(["/notice", "/report", "/finish"]);
  });
});

describe("dropped connections", () => {
  it("opens a new connection for the request after a `Connection: close` answer", async () => {
    const server = await startHttpServer((request, res) => {
      if (request.body === "first") res.setHeader("Connection", "close");
      res.end(`answer to ${request.body}`);
    });
    const transport = transportTo(server.url);

    const first = await transport.post("/finish", "first");
    expect(first.headers.get("connection")).toBe("close");
    expect(first.body.toString()).toBe("answer to first");

    const second = await transport.post("/finish", "second");
    expect(second.body.toString()).toBe("answer to second");
    expect(server.connections()).toBe(2);
  });

  /**
   * A server whose first connection misbehaves (`first`) and whose later ones answer: the first request's
   * error, after checking that the next request succeeds on a new connection.
   */
  async function failsOnceThenRecovers(first: (socket: Socket) => void): Promise<unknown> {
    const server = await startRawServer((request, socket) => {
      if (request.connection === 0) first(socket);
      else answerOk(request, socket);
    });
    const transport = transportTo(server.url);
    const error = await transport.post("/finish", "{}").then(
      () => undefined,
      (reason: unknown) => reason,
    );
    const next = await transport.post("/finish", "{}");
    expect(next.body.toString()).toBe("ok /finish");
    expect(server.sockets).toHaveLength(2);
    return error;
  }

  it("rejects a waiting request when the server closes the connection, and the next request succeeds on a new connection", async () => {
    const error = await failsOnceThenRecovers((socket) => socket.end());
    expect(error).toBeInstanceOf(RollupTransportError);
    expect((error as Error).message).toMatch(/closed/);
  });

  it("rejects garbage instead of an answer with a RollupTransportError naming the problem, and works afterwards", async () => {
    const error = await failsOnceThenRecovers((socket) => socket.write("SMTP ready, not HTTP\r\n\r\n"));
    expect(error).toBeInstanceOf(RollupTransportError);
    expect((error as Error).message).toContain("not an HTTP/1.x status line");
    expect((error as Error).message).toContain("SMTP ready, not HTTP");
  });

  it("rejects a malformed chunk size with a RollupTransportError naming it", async () => {
    const server = await startRawServer((_request, socket) => {
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
    });
    const transport = transportTo(server.url);

    await expect(transport.post("/finish", "{}")).rejects.toThrow(/malformed chunk size: "zz"/);
    await expect(transport.post("/finish", "{}")).rejects.toThrow(RollupTransportError);
  });

  it("rejects an answer whose content-length exceeds MAX_ANSWER_BYTES without waiting for its body, and drops the connection", async () => {
    const length = MAX_ANSWER_BYTES + 1;
    const server = await startRawServer((_request, socket) => {
      // Only the head: the body never comes, so settling at all means the body was not waited for.
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${length}\r\n\r\n`);
    });
    const transport = transportTo(server.url);

    const error = await transport.post("/finish", "{}").then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(RollupTransportError);
    expect((error as Error).message).toContain(`${length} bytes exceeds ${MAX_ANSWER_BYTES}`);
    await expect.poll(() => server.closed.has(0), POLL).toBe(true);
  });

  it("close() rejects a request waiting for an answer that never comes", async () => {
    const server = await startRawServer(() => {
      // Never answers, like a long-polling /finish with nothing to do.
    });
    const transport = transportTo(server.url);

    const waiting = transport.post("/finish", "{}");
    await expect.poll(() => server.requests.length, POLL).toBe(1);
    transport.close();

    await expect(waiting).rejects.toThrow(RollupTransportError);
    await expect(waiting).rejects.toThrow(/closed/);
    await expect.poll(() => server.closed.has(0), POLL).toBe(true);
  });

  it("connects again for the next request after close()", async () => {
    const server = await startRawServer(answerOk);
    const transport = transportTo(server.url);

    expect((await transport.post("/first", "{}")).body.toString()).toBe("ok /first");
    transport.close();

    expect((await transport.post("/second", "{}")).body.toString()).toBe("ok /second");
    expect(server.requests.map((request) => [request.path, request.connection])).toEqual([
      ["/first", 0],
      ["/second", 1],
    ]);
  });

  it("rejects a base URL that is not http://", () => {
    expect(() => createRollupTransport("https://127.0.0.1:5004")).toThrow(RollupTransportError);
  });
});

describe("BufferedResponse", () => {
  function response(body: string | null, status = 200): BufferedResponse {
    return new BufferedResponse(
      { status, statusText: "OK", headers: new Map([["content-type", "application/json"], ["x-id", "7"]]) },
      body === null ? null : Buffer.from(body),
      "http://127.0.0.1:5004/finish",
    );
  }

  it("reads the text once: bodyUsed flips and a second read rejects", async () => {
    const r = response('{"a":1}');
    expect(r.bodyUsed).toBe(false);
    expect(await r.text()).toBe('{"a":1}');
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow(TypeError);
    await expect(r.json()).rejects.toThrow(TypeError);
  });

  it("clone() before reading gives an independent copy; clone() after reading throws", async () => {
    const r = response('{"a":1}', 201);
    const copy = r.clone();
    expect(copy.status).toBe(201);
    expect(copy.statusText).toBe("OK");
    expect(copy.url).toBe("http://127.0.0.1:5004/finish");
    expect(copy.headers.get("x-id")).toBe("7");

    expect(await copy.text()).toBe('{"a":1}');
    expect(copy.bodyUsed).toBe(true);
    expect(r.bodyUsed).toBe(false);
    expect(await r.json()).toEqual({ a: 1 });
    expect(() => r.clone()).toThrow(TypeError);
  });

  it("exposes the bytes as a readable stream", async () => {
    const r = response("stream me");
    const body = r.body;
    expect(body).not.toBeNull();
    const chunks: Uint8Array[] = [];
    for await (const chunk of body as ReadableStream<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe("stream me");
    expect(response(null).body).toBeNull();
  });

  it("reads json(), arrayBuffer(), bytes() and blob()", async () => {
    expect(await response('{"list":[1,2],"s":"x"}').json()).toEqual({ list: [1, 2], s: "x" });

    const buffer = await response("abc").arrayBuffer();
    expect(buffer).toBeInstanceOf(ArrayBuffer);
    expect(buffer.byteLength).toBe(3);
    expect(Buffer.from(buffer).toString()).toBe("abc");

    expect([...(await response("hi").bytes())]).toEqual([0x68, 0x69]);

    const blob = await response("{}").blob();
    expect(blob.type).toBe("application/json");
    expect(await blob.text()).toBe("{}");
  });

  it("reads a null body as empty and reports ok from the status", async () => {
    const empty = response(null, 204);
    expect(empty.ok).toBe(true);
    expect(await empty.text()).toBe("");
    expect(response("no", 400).ok).toBe(false);
  });
});

describe("RollupRequest", () => {
  it("keeps what openapi-fetch gives it: method, URL, the Headers object and the body's bytes", async () => {
    const headers = new Headers({ "content-type": "application/json" });
    const request = new RollupRequest("http://127.0.0.1:5004/finish", { method: "post", headers, body: '{"status":"accept"}', redirect: "follow" });
    expect(request.method).toBe("POST");
    expect(request.url).toBe("http://127.0.0.1:5004/finish");
    expect(request.headers).toBe(headers);
    expect(request.bytesGiven?.toString("utf8")).toBe('{"status":"accept"}');
    expect(request.signal.aborted).toBe(false);
    expect(request.bodyUsed).toBe(false);
    expect(await request.json()).toEqual({ status: "accept" });
    expect(request.bodyUsed).toBe(true);
    await expect(request.text()).rejects.toThrow(TypeError);
  });

  it("takes byte bodies, clones before reading, and refuses what it cannot carry", async () => {
    const bytes = new RollupRequest("http://127.0.0.1/x", { method: "POST", body: new Uint8Array([104, 105]) });
    const copy = bytes.clone();
    expect(await bytes.text()).toBe("hi");
    expect(await copy.text()).toBe("hi");
    expect(() => new RollupRequest("http://127.0.0.1/x", { method: "GET", body: "no" })).toThrow(TypeError);
    expect(() => new RollupRequest("not a url")).toThrow(TypeError);
    expect(() => new RollupRequest(new Request("http://127.0.0.1/x"))).toThrow(/a URL, not a Request/);
    expect(() => new RollupRequest("http://127.0.0.1/x", { method: "POST", body: new URLSearchParams("a=1") })).toThrow(/string or bytes/);
  });

  it("is sent by the transport's fetch with its body as given", async () => {
    const seen: string[] = [];
    const server = createHttpServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${body}`);
        res.writeHead(200, { "content-length": "0" }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const transport = createRollupTransport(url);
    cleanups.push(() => transport.close());
    const answer = await transport.fetch(
      new RollupRequest(`${url}/report`, { method: "POST", headers: new Headers({ "content-type": "application/json" }), body: '{"payload":"0x01"}' }),
    );
    expect(answer.status).toBe(200);
    expect(seen).toEqual(['POST /report application/json {"payload":"0x01"}']);
  });
});

describe("withRollupRequests", () => {
  it("makes RollupRequest the global Request only while its loader runs, and restores it when the loader fails", async () => {
    const original = globalThis.Request;
    const Extended = await withRollupRequests(async () => {
      expect(globalThis.Request).toBe(RollupRequest);
      // What openapi-fetch does when its module is evaluated.
      return class CustomRequest extends Request {};
    });
    expect(globalThis.Request).toBe(original);
    expect(new Extended("http://127.0.0.1/x")).toBeInstanceOf(RollupRequest);
    await expect(
      withRollupRequests(async () => {
        throw new Error("load failed");
      }),
    ).rejects.toThrow("load failed");
    expect(globalThis.Request).toBe(original);
  });
});
