/**
 * A local provider for tests: a real HTTP or HTTPS server on a free loopback port whose routes are
 * programmed per test (JSON, a status, garbage, a redirect, a hang, a slow drip, a huge body, a reset).
 * It records every request and counts TCP connections, so a test can prove a refused target was never
 * contacted. Used by the provider unit tests and the api end-to-end tests.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { SecureVersion } from "node:tls";

export type ProviderReply =
  /** A JSON body (status 200 unless given). */
  | { kind: "json"; value: unknown; status?: number; headers?: Record<string, string> }
  /** Any text with any content type, e.g. HTML or broken JSON. */
  | { kind: "text"; body: string; contentType?: string; status?: number; headers?: Record<string, string> }
  /** A bare status with a small JSON error body. */
  | { kind: "status"; status: number }
  | { kind: "redirect"; location: string; status?: 301 | 302 | 303 | 307 | 308 }
  /** Reads the request and never answers. */
  | { kind: "hang" }
  /** Sends the head and then one byte per interval, forever. */
  | { kind: "drip"; intervalMs: number }
  /** A body of `bytes` bytes (inside a JSON string), with or without a Content-Length header. */
  | { kind: "huge"; bytes: number; declareLength: boolean }
  /** Destroys the socket without answering. */
  | { kind: "reset" }
  | { kind: "handler"; handle: (req: IncomingMessage, res: ServerResponse) => void };

export interface RecordedRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface ProviderServerOptions {
  /** Serve HTTPS with this key and certificate (PEM); plain HTTP without. */
  tls?: { key: string; cert: string; minVersion?: SecureVersion; maxVersion?: SecureVersion; ciphers?: string };
  /** Loopback address to listen on: 127.0.0.1 (default) or ::1. */
  host?: "127.0.0.1" | "::1";
}

/** A server that speaks only TLS 1.0/1.1. OpenSSL 3 refuses those below security level 0. */
export const TLS_1_1_ONLY = { minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" } as const;

export interface ProviderServer {
  port: number;
  /** `http(s)://<host>:<port><path>`; host defaults to `localhost` (`[::1]` for a server on ::1). */
  url(path: string, host?: string): string;
  route(path: string, reply: ProviderReply): void;
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far (a TLS handshake that failed counts too). */
  readonly connections: number;
  /** Closes the keep-alive connections that carry no request now (as a server's idle timeout does). */
  closeIdleConnections(): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, reply: ProviderReply, req: IncomingMessage): void {
  switch (reply.kind) {
    case "json":
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.value));
      return;
    case "text":
      res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "text/plain", ...reply.headers });
      res.end(reply.body);
      return;
    case "status":
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `status ${reply.status}` }));
      return;
    case "redirect":
      res.writeHead(reply.status ?? 302, { location: reply.location });
      res.end();
      return;
    case "hang":
      return;
    case "drip": {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      const timer = setInterval(() => res.write(" "), reply.intervalMs);
      res.on("close", () => clearInterval(timer));
      return;
    }
    case "huge": {
      const filler = Buffer.alloc(64 * 1024, "a");
      const total = reply.bytes;
      res.writeHead(200, { "content-type": "application/json", ...(reply.declareLength ? { "content-length": String(total) } : {}) });
      // Stream with back-pressure so a client that stops reading stops the server too.
      let sent = 0;
      const pump = (): void => {
        while (sent < total) {
          const n = Math.min(filler.length, total - sent);
          sent += n;
          if (!res.write(filler.subarray(0, n))) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      res.on("error", () => undefined);
      pump();
      return;
    }
    case "reset":
      req.socket.destroy();
      return;
    case "handler":
      reply.handle(req, res);
      return;
  }
}

export async function startProviderServer(options: ProviderServerOptions = {}): Promise<ProviderServer> {
  const routes = new Map<string, ProviderReply>();
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
    const pathname = new URL(req.url ?? "/", "http://provider.invalid").pathname;
    const reply = routes.get(pathname) ?? { kind: "status", status: 404 };
    // Drain the request body (POST) so the client is never blocked on it.
    req.resume();
    send(res, reply, req);
  };
  const server = options.tls ? https.createServer({ ...options.tls }, listener) : http.createServer(listener);
  server.on("connection", () => {
    connections++;
  });
  // Failed handshakes are part of what tests provoke; they must not crash the server.
  server.on("tlsClientError", () => undefined);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const scheme = options.tls ? "https" : "http";
  return {
    port,
    url: (path, urlHost = host === "::1" ? "[::1]" : "localhost") => `${scheme}://${urlHost}:${port}${path}`,
    route: (path, reply) => {
      routes.set(path, reply);
    },
    requests,
    get connections() {
      return connections;
    },
    closeIdleConnections: () => server.closeIdleConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
