/**
 * The indexer's change stream (api/index/changes.ts): what an api forwarding GraphQL to the indexer keeps
 * its answers by. Real HTTP on both sides: the version is heard on connecting and after each commit
 * announced (only when it changed), is unknown while the stream is down, and comes back as a new epoch
 * when the stream does (an indexer restarted counts from 0 again).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { changeStream, indexerChanges } from "../../api/index/changes.ts";
import { until } from "../support/until.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** An indexer's /changes at `version`, on `port` (0: any). */
async function indexer(version: { n: number }, port = 0): Promise<{ url: string; port: number; stream: ReturnType<typeof changeStream>; server: Server }> {
  const stream = changeStream(() => version.n);
  const server = createServer((req, res) => (req.url === "/changes" ? stream.serve(req, res) : res.writeHead(404).end()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${bound}`, port: bound, stream, server };
}

describe("the indexer's change stream", () => {
  it("says the version on connecting and after each commit announced, once per change", async () => {
    const version = { n: 7 };
    const { url, stream } = await indexer(version);
    const changes = indexerChanges(url, 50);
    try {
      const first = await until(() => changes.version(), (v) => v !== undefined, "the first event", 5_000, 10);
      expect(first).toMatch(/^\d+:7$/);
      // Announced without a commit: nothing new is said.
      stream.announce();
      await new Promise((r) => setTimeout(r, 100));
      expect(changes.version()).toBe(first);
      version.n = 8;
      stream.announce();
      const second = await until(() => changes.version(), (v) => v !== first, "the commit's event", 5_000, 10);
      expect(second).toBe(first?.replace(/:7$/, ":8"));
    } finally {
      changes.close();
    }
    expect(changes.version()).toBeUndefined();
  });

  it("is unknown while the stream is down, and a new epoch once an indexer is back (restarted from 0)", async () => {
    const version = { n: 3 };
    const first = await indexer(version);
    const changes = indexerChanges(first.url, 50);
    try {
      const before = await until(() => changes.version(), (v) => v !== undefined, "the first event", 5_000, 10);
      first.stream.close();
      first.server.closeAllConnections();
      await new Promise((resolve) => first.server.close(resolve));
      await until(() => changes.version(), (v) => v === undefined, "the stream's end", 5_000, 10);
      // The same version number from a restarted indexer must not read as the old one.
      const again = await indexer({ n: 3 }, first.port);
      const after = await until(() => changes.version(), (v) => v !== undefined, "the restarted indexer's event", 5_000, 10);
      expect(after).not.toBe(before);
      expect(after).toMatch(/:3$/);
      again.stream.close();
    } finally {
      changes.close();
    }
  });

  it("a stream that never says a whole event is dropped past 1 KiB, and gives no version", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("x".repeat(2_000));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    let requests = 0;
    server.on("request", () => (requests += 1));
    const changes = indexerChanges(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 50);
    try {
      // Dropped and asked again (a retry every 50 ms), never believed.
      await until(() => requests, (n) => n >= 2, "the stream dropped and asked again", 5_000, 10);
      expect(changes.version()).toBeUndefined();
    } finally {
      changes.close();
    }
  });

  it("a server that is not an indexer's stream gives no version", async () => {
    const server = createServer((_req, res) => res.writeHead(404).end("no"));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const changes = indexerChanges(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 50);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(changes.version()).toBeUndefined();
    } finally {
      changes.close();
    }
  });
});
