/** Small node:http helpers shared by the devnode's two servers: bounded body reading and replies. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Bigger than any payload the v1 rollup HTTP server accepts (2 MiB per output), small enough to bound memory. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
}

/** Past the limit a body is read on and dropped, so the client gets its 413; past this the connection is cut. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_MAX_BYTES) {
        reject(new BodyTooLargeError(`request body larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      if (size <= limit) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > limit) reject(new BodyTooLargeError(`request body larger than ${limit} bytes`));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, extraHeaders?: Record<string, string>): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(text);
}
