/**
 * Shared by the devnode HTTP/1.1 server tests (http1-server*.test.ts): a harness that starts
 * devnode/http1-server.ts on loopback and records what `handle` received and which sessions were
 * connected and disconnected, the three clients (Node's fetch, `node:http`'s request via `nodeRequest`,
 * and a raw `node:net` `RawClient` that parses the answers from the exact bytes), and the per-test
 * cleanup list they register with. Each test file calls `closeAfterEach()` once at its top level.
 */
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from "node:http";
import { connect as netConnect, type AddressInfo, type Socket } from "node:net";
import { afterEach, expect, vi } from "vitest";
import { createHttp1Server, type Http1Request, type Http1Response, type Http1Server } from "../../devnode/http1-server.ts";

/** Waiting for the server to act: generous, the machine may be loaded. */
export const POLL = { timeout: 10_000, interval: 5 };
export const MAX_BODY_BYTES = 1024;
/** Long enough that no ordinary test meets the idle timer. */
export const LONG_KEEP_ALIVE_MS = 30_000;

export interface Session {
  id: number;
  /** The server side of the connection. */
  socket: Socket;
  /** How often the server socket's idle timer has fired. */
  timeouts: number;
  /** Chunks the server socket has read. */
  chunks: number;
}

export interface Harness {
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

export interface HarnessOptions {
  handle?: (request: Http1Request, session: Session) => Http1Response | Promise<Http1Response>;
  keepAliveMs?: number;
  maxBodyBytes?: number;
}

/** Closed after each test, last opened first. */
let cleanups: (() => Promise<void> | void)[] = [];

/**
 * Closes, after each test of the calling file, the servers and sockets that test opened, and restores
 * the mocks it made.
 */
export function closeAfterEach(): void {
  afterEach(async () => {
    const pending = cleanups.reverse();
    cleanups = [];
    for (const cleanup of pending) await cleanup();
    vi.restoreAllMocks();
  });
}

/** The default answer: 200, text naming the method, path and body. */
export function echo(request: Http1Request): Http1Response {
  const body = request.body.toString("utf8");
  return { status: 200, contentType: "text/plain; charset=utf-8", body: `${request.method} ${request.path}${body === "" ? "" : ` ${body}`}` };
}

export async function startServer(options: HarnessOptions = {}): Promise<Harness> {
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

export interface RawResponse {
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
export class RawClient {
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

export async function rawConnect(harness: Harness): Promise<RawClient> {
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

export interface NodeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A `node:http` request on a connection of its own; `parts` are written one `write` each. */
export function nodeRequest(harness: Harness, options: RequestOptions, parts: readonly string[]): Promise<NodeAnswer> {
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

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
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
export function connectionReleased(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A fresh connection to `harness` is still answered. */
export async function expectServesNewConnections(harness: Harness): Promise<void> {
  const res = await fetch(`${harness.url}/still-there?after=error`);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("GET /still-there?after=error");
}

export function onlyRequest(harness: Harness): Http1Request {
  expect(harness.requests).toHaveLength(1);
  return harness.requests[0] as Http1Request;
}
