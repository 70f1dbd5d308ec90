/**
 * The dapp's hand-written HTTP/1.1 client (dapp/transports/http-connection.ts) when a connection goes away or an
 * answer is bad, against real servers on loopback: `Connection: close`, the server or `close()` dropping
 * the connection, garbage, malformed chunks and oversized answers — each rejected with a
 * RollupTransportError, and the next request served on a new connection.
 */
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createRollupTransport, MAX_ANSWER_BYTES, RollupTransportError } from "../../dapp/transports/http-connection.ts";
import { answerOk, closeAfterEach, POLL, startHttpServer, startRawServer, transportTo } from "./rollup-transport-support.ts";

closeAfterEach();

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
