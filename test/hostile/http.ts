/**
 * Raw HTTP for the hostile suites: requests whose path is sent byte for byte (fetch would normalise it),
 * sockets that speak partial or oversized HTTP, and timing of one request against an upper bound.
 */
import http from "node:http";
import net from "node:net";

export interface RawAnswer {
  status: number;
  text: string;
  ms: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One request to 127.0.0.1:`port` with `path` exactly as given (printable ASCII, no spaces). */
export function rawRequest(port: number, method: string, path: string, body?: Buffer | string, timeoutMs = 30_000): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method, path, agent, timeout: timeoutMs, headers: body === undefined ? {} : { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path.slice(0, 80)} timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Writes `head` (and nothing else) on a fresh socket and resolves with what the server answers before it
 * closes the connection, or after `waitMs`.
 */
export function rawExchange(port: number, head: string | Buffer, waitMs = 5_000): Promise<{ text: string; closed: boolean; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => {
      socket.write(head);
    });
  });
}

/** Opens `count` sockets that send half a request head and then nothing; returns a function that closes them. */
export async function idleHalfRequests(port: number, count: number): Promise<() => void> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(port, "127.0.0.1", () => {
            socket.write("GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
            resolve(socket);
          });
          socket.on("error", () => undefined);
          socket.once("error", reject);
        }),
    ),
  );
  return () => {
    for (const socket of sockets) socket.destroy();
  };
}

export function closeAgent(): void {
  agent.destroy();
}
