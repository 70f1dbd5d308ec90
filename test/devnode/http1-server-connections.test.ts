/**
 * The devnode's HTTP/1.1 server (devnode/http1-server.ts) managing its connections, over raw `node:net`
 * sockets: `disconnect` gets each connection's own session, closeAllConnections destroys every open
 * connection, an answer ready after its client left is dropped, and the idle timer (keepAliveMs) closes
 * idle connections but spares one whose request is being handled or is still being read.
 */
import { expect, it } from "vitest";
import type { Http1Response } from "../../devnode/http1-server.ts";
import { closeAfterEach, deferred, echo, expectServesNewConnections, POLL, type RawClient, rawConnect, startServer } from "./http1-server-support.ts";

closeAfterEach();

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
