/**
 * A lean HTTP/1.1 client for the load figures: one persistent TCP connection per concurrent worker,
 * requests written as prebuilt bytes, answers parsed just enough (status, Content-Length or chunked).
 * Like wrk or autocannon, it keeps the client's own CPU out of the way on a small machine, so the
 * figures measure the servers; node:http's client costs several times more per request here.
 */
import { connect, type Socket } from "node:net";

export interface WireAnswer {
  status: number;
  body: Buffer;
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** One keep-alive connection; `request` must not be called again before the previous answer arrived. */
export class WireConnection {
  private socket: Socket | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { resolve: (a: WireAnswer) => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  private open(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.host, port: this.port, noDelay: true }, () => {
        socket.off("error", reject);
        resolve(socket);
      });
      socket.once("error", reject);
      socket.on("data", (chunk: Buffer) => this.onData(chunk));
      socket.on("error", (error) => this.fail(error));
      socket.on("close", () => {
        if (this.socket === socket) this.socket = undefined;
        this.fail(new Error("connection closed before the answer"));
      });
    });
  }

  async request(bytes: Buffer): Promise<WireAnswer> {
    this.socket ??= await this.open();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket?.write(bytes);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private fail(error: Error): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const answer = parseAnswer(this.buffer);
    if (answer === undefined) return;
    this.buffer = this.buffer.subarray(answer.consumed);
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve({ status: answer.status, body: answer.body });
  }
}

/** A complete answer at the start of `data`, or undefined when more bytes are needed. */
export function parseAnswer(data: Buffer): { status: number; body: Buffer; consumed: number } | undefined {
  const headEnd = data.indexOf(CRLF2);
  if (headEnd === -1) return undefined;
  const head = data.toString("latin1", 0, headEnd);
  const status = Number(head.slice(9, 12));
  const bodyStart = headEnd + 4;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length?.[1] !== undefined) {
    const end = bodyStart + Number(length[1]);
    if (data.length < end) return undefined;
    return { status, body: data.subarray(bodyStart, end), consumed: end };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = data.indexOf("\r\n", at);
      if (lineEnd === -1) return undefined;
      const size = parseInt(data.toString("latin1", at, lineEnd), 16);
      const chunkStart = lineEnd + 2;
      if (data.length < chunkStart + size + 2) return undefined;
      if (size === 0) return { status, body: Buffer.concat(parts), consumed: chunkStart + 2 };
      parts.push(data.subarray(chunkStart, chunkStart + size));
      at = chunkStart + size + 2;
    }
  }
  // No length and not chunked: only bodiless answers (204, 304) are supported on a kept connection.
  return { status, body: Buffer.alloc(0), consumed: bodyStart };
}

/** The bytes of one request. */
export function requestBytes(
  host: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body !== undefined) head += `content-length: ${body.length}\r\n`;
  head += "\r\n";
  return body === undefined ? Buffer.from(head, "latin1") : Buffer.concat([Buffer.from(head, "latin1"), body]);
}
