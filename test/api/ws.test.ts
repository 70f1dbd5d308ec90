import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WsHub } from "../../api/ws.ts";
import { connectEvents, type ApiEvent } from "../../client/index.ts";

const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const OTHER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const id = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;

let server: Server;
let hub: WsHub;
let wsUrl: string;
beforeAll(async () => {
  server = createServer((_req, res) => res.writeHead(404).end());
  hub = new WsHub({ heartbeatMs: 50 });
  hub.attach(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  wsUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
});
afterAll(async () => {
  await hub.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Broadcasts until the hub sees `clients` connections (connections register asynchronously). */
async function whenConnected(clients: number): Promise<void> {
  while (hub.clientCount < clients) await new Promise((r) => setTimeout(r, 5));
}

describe("WsHub", () => {
  it("relays {event, data} to every client, and filters by event and owner on request", async () => {
    const all = await connectEvents(wsUrl);
    const grantsOfOwner = await connectEvents(wsUrl, { subscribe: ["grant:created", "grant:revoked"], owner: OWNER.toUpperCase().replace("0X", "0x") });
    expect(grantsOfOwner.received[0]).toEqual({
      event: "subscribed",
      data: { events: ["grant:created", "grant:revoked"], owner: OWNER },
    });
    await whenConnected(2);

    hub.broadcast({ event: "attestation:created", data: { claimId: id(1), owner: OWNER, provider: "http" } });
    hub.broadcast({ event: "grant:created", data: { grantId: id(2), owner: OTHER, requester: OWNER } });
    hub.broadcast({ event: "grant:created", data: { grantId: id(3), owner: OWNER, requester: OTHER } });
    hub.broadcast({ event: "schema:registered", data: { schema_id: id(4) } });

    const last = await all.waitFor((e) => e.event === "schema:registered");
    expect(last).toEqual({ event: "schema:registered", data: { schema_id: id(4) } });
    expect(all.received.map((e) => e.event)).toEqual(["attestation:created", "grant:created", "grant:created", "schema:registered"]);
    const mine = await grantsOfOwner.waitFor((e) => e.event === "grant:created");
    expect(mine).toEqual({ event: "grant:created", data: { grantId: id(3), owner: OWNER, requester: OTHER } });
    // Sent after the filtered-out events, so once it arrives the others would have arrived before it.
    hub.broadcast({ event: "grant:revoked", data: { grantId: id(3), owner: OWNER } });
    await grantsOfOwner.waitFor((e) => e.event === "grant:revoked");
    expect(grantsOfOwner.received.map((e) => e.event)).toEqual(["subscribed", "grant:created", "grant:revoked"]);
    await all.close();
    await grantsOfOwner.close();
  });

  it("answers invalid client messages with an error and keeps the connection", async () => {
    const stream = await connectEvents(wsUrl);
    stream.send("not json");
    const first = await stream.waitFor((e) => e.event === "error");
    expect(first).toMatchObject({ event: "error", data: { code: "INVALID_REQUEST" } });
    stream.send({ subscribe: ["nope"] });
    stream.send({ owner: "bob" });
    await stream.waitFor((e) => e.event === "error" && e.data.message.startsWith("owner"));
    const errors = stream.received.filter((e): e is Extract<ApiEvent, { event: "error" }> => e.event === "error");
    expect(errors.map((e) => e.data.message.split(":")[0])).toEqual(["not a JSON text message", "subscribe.0", "owner"]);
    stream.send({ subscribe: ["schema:registered"] });
    await stream.waitFor((e) => e.event === "subscribed");
    await whenConnected(1);
    hub.broadcast({ event: "schema:registered", data: { schema_id: id(9) } });
    await stream.waitFor((e) => e.event === "schema:registered");
    await stream.close();
  });

  it("refuses upgrades on other paths", async () => {
    const socket = new WebSocket(wsUrl.replace("/ws", "/other"));
    const outcome = await new Promise<string>((resolve) => {
      socket.once("open", () => resolve("open"));
      socket.once("error", (error) => resolve(error.message));
    });
    expect(outcome).toMatch(/404/);
  });

  it("drops a client that stops answering pings", async () => {
    const socket = new WebSocket(wsUrl, { autoPong: false });
    await new Promise<void>((resolve) => socket.once("open", () => resolve()));
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    // The heartbeat runs every 50 ms here: two beats without a pong end the connection.
    expect(await closed).toBe(1006);
  });
});

describe("WsHub with a client that stops reading", () => {
  it("closes the client once its queue passes the bound, and keeps serving the others", async () => {
    const server = createServer();
    const hub = new WsHub({ maxBufferedBytes: 512 * 1024 });
    hub.attach(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
    try {
      const slow = new WebSocket(url);
      await new Promise<void>((resolve) => slow.once("open", () => resolve()));
      // Stop reading from the TCP socket: the kernel buffers fill, then the server's queue grows.
      (slow as unknown as { _socket: { pause(): void } })._socket.pause();
      const healthy = await connectEvents(url);
      await whenHubHas(hub, 2);
      const big = { event: "schema:registered", data: { schema_id: `0x${"ab".repeat(4 * 1024)}` } } as const;
      // Bounded: the kernel's buffers hold at most a few MiB, far less than this many 8 KiB messages.
      // Yielding between events lets the healthy client's socket drain, as it would between notices.
      for (let i = 0; i < 20_000 && hub.clientCount > 1; i++) {
        hub.broadcast(big);
        await new Promise((r) => setImmediate(r));
      }
      expect(hub.clientCount).toBe(1);
      hub.broadcast({ event: "schema:registered", data: { schema_id: id(42) } });
      await healthy.waitFor((e) => e.event === "schema:registered" && e.data.schema_id === id(42), 30_000);
      await healthy.close();
      slow.terminate();
    } finally {
      await hub.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

async function whenHubHas(target: WsHub, clients: number): Promise<void> {
  while (target.clientCount < clients) await new Promise((r) => setTimeout(r, 5));
}
