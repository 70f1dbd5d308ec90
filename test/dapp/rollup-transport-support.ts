/**
 * Shared by the rollup-transport tests (rollup-transport*.test.ts): real loopback servers for the dapp's
 * hand-written HTTP/1.1 client to talk to — a `node:http` server recording what it was sent, and a raw
 * `node:net` server that answers byte for byte — plus the per-test cleanup list those servers and the
 * transports register with. Each test file calls `closeAfterEach()` once at its top level.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { afterEach } from "vitest";
import { createRollupTransport, type RollupTransport } from "../../dapp/transports/http-connection.ts";

export const POLL = { timeout: 10_000, interval: 5 };

/** Closed after each test, last opened first. */
export const cleanups: (() => Promise<void> | void)[] = [];

/** Runs, after each test of the calling file, the cleanups that test registered. */
export function closeAfterEach(): void {
  afterEach(async () => {
    const pending = cleanups.splice(0).reverse();
    for (const cleanup of pending) await cleanup();
  });
}

export function transportTo(baseUrl: string): RollupTransport {
  const transport = createRollupTransport(baseUrl);
  cleanups.push(() => transport.close());
  return transport;
}

export async function listen(server: NetServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface HttpServer {
  url: string;
  seen: SeenRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
}

/** A `node:http` server; `handler` runs once the request body has been read in full. */
export async function startHttpServer(handler: (request: SeenRequest, res: ServerResponse) => void): Promise<HttpServer> {
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

export interface RawRequest {
  method: string;
  path: string;
  headers: Map<string, string>;
  body: string;
  /** Index of the connection it came on, in order of acceptance. */
  connection: number;
}

export interface RawServer {
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
export async function startRawServer(onRequest: (request: RawRequest, socket: Socket, server: RawServer) => void): Promise<RawServer> {
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

export function answer(status: string, body: string, headers: string[] = []): string {
  return [`HTTP/1.1 ${status}`, `content-length: ${Buffer.byteLength(body)}`, ...headers, "", body].join("\r\n");
}

/** A raw server answering every request 200 with `ok <path>`. */
export function answerOk(request: RawRequest, socket: Socket): void {
  socket.write(answer("200 OK", `ok ${request.path}`));
}
