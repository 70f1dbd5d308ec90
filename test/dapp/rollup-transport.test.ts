/**
 * The dapp's hand-written HTTP/1.1 client (dapp/transports/http-connection.ts) against real servers on loopback:
 * what a `node:http` server sees of `post` and `fetch`, every way an answer's body is framed (length,
 * chunked, until close, one byte at a time), and pipelined requests answered in order. Dropped
 * connections and bad answers are in rollup-transport-dropped.test.ts; the `Response` and `Request`
 * objects it hands to openapi-fetch in rollup-transport-objects.test.ts.
 */
import { describe, expect, it } from "vitest";
import { BufferedResponse } from "../../dapp/transports/http-connection.ts";
import { answer, closeAfterEach, startHttpServer, startRawServer, transportTo, type SeenRequest } from "./rollup-transport-support.ts";

closeAfterEach();

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
