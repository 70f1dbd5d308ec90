/**
 * The devnode's HTTP/1.1 server (devnode/http1-server.ts) on input it cannot or will not read, and with a
 * failing `handle`, over raw `node:net` sockets and fetch: each malformed or unsupported request (request
 * line, header lines, content-length/transfer-encoding, chunk framing, oversized head or body) gets its
 * 4xx/5xx with the reason and the connection closes while new ones are still served; bodies at the
 * maxBodyBytes limit are accepted, a content-length above it is refused at once (also under
 * `Expect: 100-continue`), an error behind pipelined requests is answered after them, and `handle`
 * throwing or rejecting gives a 500 on a connection that stays usable.
 */
import { expect, it, vi } from "vitest";
import type { Http1Response } from "../../devnode/http1-server.ts";
import { closeAfterEach, connectionReleased, deferred, echo, expectServesNewConnections, MAX_BODY_BYTES, POLL, rawConnect, startServer } from "./http1-server-support.ts";

closeAfterEach();

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
  expect(errors).toHaveBeenCalledWith(expect.stringMatching(/^\[devnode\] rollup HTTP server: Error: sync boom\n {4}at /));
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
