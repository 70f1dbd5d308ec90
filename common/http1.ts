/**
 * HTTP/1.1 message framing for the two ends of the rollup HTTP API that this project writes itself: the
 * dapp's client (dapp/transports/http-connection.ts) and the devnode's server (devnode/http1-server.ts). Both talk
 * over one kept-alive loopback connection on which every input and every inspect costs two or three
 * exchanges in a row, so the general-purpose clients and servers of node:http and undici were most of an
 * inspect's time (docs/performance.md). The parser splits a byte stream into messages, head and
 * body: Content-Length, chunked and read-until-close bodies, with limits on both.
 */

export class Http1Error extends Error {
  override readonly name = "Http1Error";
  /** The status a server answers with (400, 413, 431, 501...). */
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface Http1Head {
  /** The request line or the status line. */
  startLine: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Map<string, string>;
}

export type Http1Framing =
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" }
  /** A head with no message of its own (an interim 1xx answer): dropped. */
  | { kind: "skip" };

const MAX_HEAD_BYTES = 64 * 1024;
const CRLF = Buffer.from("\r\n");
const CRLF2 = Buffer.from("\r\n\r\n");

/**
 * The framing the headers give (RFC 9112 section 6): chunked, else Content-Length, else `absent` (requests
 * have no body, answers run until the connection closes). Both headers at once is refused: it is how
 * request smuggling starts.
 */
export function bodyFraming(headers: Map<string, string>, maxBodyBytes: number, absent: "empty" | "close"): Http1Framing {
  const transferEncoding = headers.get("transfer-encoding");
  const contentLength = headers.get("content-length");
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) throw new Http1Error("both transfer-encoding and content-length");
    if (transferEncoding.toLowerCase() !== "chunked") throw new Http1Error(`unsupported transfer-encoding: ${transferEncoding}`, 501);
    return { kind: "chunked" };
  }
  if (contentLength !== undefined) {
    if (!/^\d+$/.test(contentLength)) throw new Http1Error(`invalid content-length: ${contentLength}`);
    const length = Number(contentLength);
    if (length > maxBodyBytes) throw new Http1Error(`body of ${length} bytes exceeds ${maxBodyBytes}`, 413);
    return { kind: "length", length };
  }
  return absent === "empty" ? { kind: "length", length: 0 } : { kind: "close" };
}

type BodyState =
  | { kind: "length"; remaining: number }
  | { kind: "chunked"; remaining: number; phase: "size" | "data" | "data-end" | "trailer" }
  | { kind: "close" };

export interface Http1ParserOptions {
  maxBodyBytes: number;
  /** How the message that `head` starts is framed; throws Http1Error to refuse it. */
  framing(head: Http1Head): Http1Framing;
  /** A whole message; `untilClose` when its body ran until the connection ended (no length was given). */
  message(head: Http1Head, body: Buffer, untilClose: boolean): void;
}

/** Splits the bytes of one direction of a connection into messages, as they arrive. */
export class Http1Parser {
  private buffer: Buffer = Buffer.alloc(0);
  private head: Http1Head | undefined;
  private body: BodyState | undefined;
  private parts: Buffer[] = [];
  private size = 0;
  private stopped = false;

  constructor(private readonly options: Http1ParserOptions) {}

  /** Whether part of a message has been read (a connection closing now cuts it short). */
  get midMessage(): boolean {
    return this.head !== undefined || this.buffer.length > 0;
  }

  /** Reads nothing more: the bytes already buffered and any later ones are dropped. */
  stop(): void {
    this.stopped = true;
    this.buffer = Buffer.alloc(0);
  }

  /** Throws Http1Error on bytes that are not HTTP/1.x, or on what `framing` refuses. */
  push(chunk: Buffer): void {
    if (this.stopped) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length > 0 && !this.stopped) {
      if (this.head === undefined) {
        if (!this.readHead()) return;
      } else if (!this.readBody()) return;
    }
  }

  /** The connection ended: a message whose body runs until the end is complete now. */
  end(): boolean {
    if (this.head !== undefined && this.body?.kind === "close") {
      this.finish();
      return true;
    }
    return false;
  }

  private readHead(): boolean {
    const end = this.buffer.indexOf(CRLF2);
    if (end > MAX_HEAD_BYTES || (end === -1 && this.buffer.length > MAX_HEAD_BYTES)) throw new Http1Error("head larger than 64 KiB", 431);
    if (end === -1) return false;
    const lines = this.buffer.subarray(0, end).toString("latin1").split("\r\n");
    this.buffer = this.buffer.subarray(end + CRLF2.length);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      // A line folded onto the previous one (leading whitespace) is obsolete, and whitespace before the
      // colon is forbidden: both are refused (RFC 9112 5.1, 5.2), they are how request smuggling starts.
      const folded = line[0] === " " || line[0] === "\t";
      const spaceBeforeColon = colon > 0 && (line[colon - 1] === " " || line[colon - 1] === "\t");
      if (colon <= 0 || folded || spaceBeforeColon) throw new Http1Error(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const previous = headers.get(name);
      headers.set(name, previous === undefined ? value : `${previous}, ${value}`);
    }
    const head: Http1Head = { startLine: lines[0] ?? "", headers };
    const framing = this.options.framing(head);
    if (framing.kind === "skip") return true;
    this.head = head;
    this.body = framing.kind === "length" ? { kind: "length", remaining: framing.length } : framing.kind === "chunked" ? { kind: "chunked", remaining: 0, phase: "size" } : { kind: "close" };
    if (this.body.kind === "length" && this.body.remaining === 0) this.finish();
    return true;
  }

  /** Consumes body bytes; returns false when it needs more. */
  private readBody(): boolean {
    const body = this.body as BodyState;
    if (body.kind === "close") {
      this.take(this.buffer.length);
      return false;
    }
    if (body.kind === "length") {
      const taken = this.take(Math.min(body.remaining, this.buffer.length));
      body.remaining -= taken;
      if (body.remaining === 0) this.finish();
      return true;
    }
    switch (body.phase) {
      case "size":
      case "trailer": {
        const eol = this.buffer.indexOf(CRLF);
        if (eol === -1) {
          if (this.buffer.length > MAX_HEAD_BYTES) throw new Http1Error("chunk header larger than 64 KiB");
          return false;
        }
        const line = this.buffer.subarray(0, eol).toString("latin1");
        this.buffer = this.buffer.subarray(eol + CRLF.length);
        if (body.phase === "trailer") {
          if (line === "") this.finish();
          return true;
        }
        const size = /^([0-9a-fA-F]{1,8})(?:;.*)?$/.exec(line.trim());
        if (size === null) throw new Http1Error(`malformed chunk size: ${JSON.stringify(line.slice(0, 40))}`);
        body.remaining = parseInt(size[1] as string, 16);
        body.phase = body.remaining === 0 ? "trailer" : "data";
        return true;
      }
      case "data": {
        const taken = this.take(Math.min(body.remaining, this.buffer.length));
        body.remaining -= taken;
        if (body.remaining === 0) body.phase = "data-end";
        return true;
      }
      case "data-end": {
        if (this.buffer.length < CRLF.length) return false;
        if (!this.buffer.subarray(0, CRLF.length).equals(CRLF)) throw new Http1Error("chunk not followed by CRLF");
        this.buffer = this.buffer.subarray(CRLF.length);
        body.phase = "size";
        return true;
      }
    }
  }

  private take(count: number): number {
    if (count > 0) {
      this.size += count;
      if (this.size > this.options.maxBodyBytes) throw new Http1Error(`body exceeds ${this.options.maxBodyBytes} bytes`, 413);
      this.parts.push(this.buffer.subarray(0, count));
      this.buffer = this.buffer.subarray(count);
    }
    return count;
  }

  private finish(): void {
    const head = this.head as Http1Head;
    const untilClose = this.body?.kind === "close";
    const body = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.head = undefined;
    this.body = undefined;
    this.parts = [];
    this.size = 0;
    this.options.message(head, body, untilClose);
  }
}

/** Whether the connection stays open after this message (HTTP/1.1 unless "close"; 1.0 only on "keep-alive"). */
export function keepsAlive(version: "1.0" | "1.1", headers: Map<string, string>): boolean {
  const connection = headers.get("connection")?.toLowerCase() ?? "";
  const tokens = connection.split(",").map((t) => t.trim());
  return version === "1.1" ? !tokens.includes("close") : tokens.includes("keep-alive");
}
