/**
 * The dapp's one connection to the rollup HTTP server: a small HTTP/1.1 client over a single kept-alive
 * TCP socket, with requests answered in the order they were written.
 *
 * Why not Node's own clients: every input and every inspect costs the dapp two or three exchanges with
 * the server, in a row, so the client's own cost per exchange is most of an inspect. undici's fetch cost
 * ~0.5 ms and node:http's client ~0.06 ms more per exchange than writing the bytes ourselves (docs/performance.md
 * has the figures); the server is always the same one, on loopback, so the client needs
 * little of HTTP: Content-Length, chunked and read-until-close bodies, keep-alive, `Connection: close`.
 *
 * Order is the point of one connection: the server reads requests in the order they were written, so a
 * caller may write an output (`/notice`, `/report`) and then `/finish` without waiting for the output's
 * answer in between (HTTP/1.1 pipelining), and the server still sees the output first.
 */
import { connect, type Socket } from "node:net";
import { bodyFraming, Http1Error, Http1Parser, keepsAlive } from "../../common/http1.ts";

export interface RollupAnswer {
  status: number;
  statusText: string;
  /** Header names lower-case; repeated headers joined with ", ". */
  headers: Map<string, string>;
  body: Buffer;
}

export interface RollupTransport {
  /** Writes `POST <base path><path>` with a JSON body; settles with the server's answer. */
  post(path: string, json: string): Promise<RollupAnswer>;
  /** The same connection as a `fetch`, for @deroll/app's openapi-fetch client (dapp/transports/http.ts). */
  fetch: typeof fetch;
  /** Drops the connection: requests waiting for an answer (a long-polling `/finish`) fail at once. */
  close(): void;
}

/** Larger than any answer the server gives (an advance carries at most a few MiB of hex); bounds memory. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export class RollupTransportError extends Error {
  override readonly name = "RollupTransportError";
}

interface Exchange {
  head: boolean;
  resolve(answer: RollupAnswer): void;
  reject(error: Error): void;
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/** Reads the answers of one connection in order; `done` gets each with whether the connection stays open. */
function answerParser(nextExchange: () => Exchange | undefined, done: (answer: RollupAnswer, keepAlive: boolean) => void): Http1Parser {
  return new Http1Parser({
    maxBodyBytes: MAX_ANSWER_BYTES,
    framing(head) {
      const status = STATUS_LINE.exec(head.startLine);
      if (status === null) throw new Http1Error(`not an HTTP/1.x status line: ${JSON.stringify(head.startLine.slice(0, 80))}`);
      const code = Number(status[2]);
      // 1xx answers (100 Continue) come before the real one and have no body.
      if (code < 200) return { kind: "skip" };
      const exchange = nextExchange();
      if (exchange === undefined) throw new Http1Error(`an answer (${code}) arrived with no request waiting`);
      if (exchange.head || code === 204 || code === 304) return { kind: "length", length: 0 };
      return bodyFraming(head.headers, MAX_ANSWER_BYTES, "close");
    },
    message(head, body, untilClose) {
      const status = STATUS_LINE.exec(head.startLine) as RegExpExecArray;
      const keepAlive = !untilClose && keepsAlive(status[1] === "0" ? "1.0" : "1.1", head.headers);
      done({ status: Number(status[2]), statusText: status[3] ?? "", headers: head.headers, body }, keepAlive);
    },
  });
}

/** The body half of a Request or Response whose bytes are already in memory (no web stream unless asked). */
abstract class BufferedBody {
  private used = false;

  protected constructor(protected readonly payload: Buffer | null) {}

  abstract readonly headers: Headers;

  get bodyUsed(): boolean {
    return this.used;
  }

  /** Made only when asked for: nothing on the dapp's path reads the stream. */
  get body(): ReadableStream<Uint8Array> | null {
    const payload = this.payload;
    if (payload === null) return null;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(payload));
        controller.close();
      },
    });
  }

  protected consume(): Buffer {
    if (this.used) throw new TypeError("Body is unusable: Body has already been read");
    this.used = true;
    return this.payload ?? Buffer.alloc(0);
  }

  readonly text = async (): Promise<string> => this.consume().toString("utf8");
  readonly json = async (): Promise<unknown> => JSON.parse(this.consume().toString("utf8"));
  readonly arrayBuffer = async (): Promise<ArrayBuffer> => new Uint8Array(this.consume()).buffer;
  readonly bytes = async (): Promise<Uint8Array> => new Uint8Array(this.consume());
  readonly blob = async (): Promise<Blob> => new Blob([new Uint8Array(this.consume())], { type: this.headers.get("content-type") ?? "" });
  readonly formData = async (): Promise<FormData> => {
    throw new TypeError("the rollup HTTP server's requests and answers are never form data");
  };
}

/**
 * A `Response` over an answer already read in full. undici's Response wraps its body in a web stream, and
 * building and reading one cost more per `/finish` than the rest of the dapp's transport; openapi-fetch
 * only reads the status, the headers and the text.
 */
export class BufferedResponse extends BufferedBody implements Response {
  readonly headers: Headers;
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly type: Response["type"] = "basic";
  readonly redirected = false;

  constructor(
    answer: Omit<RollupAnswer, "body">,
    payload: Buffer | null,
    readonly url: string,
  ) {
    super(payload);
    this.status = answer.status;
    this.statusText = answer.statusText;
    this.ok = answer.status >= 200 && answer.status < 300;
    this.headers = new Headers([...answer.headers]);
  }

  readonly clone = (): Response => {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed");
    return new BufferedResponse({ status: this.status, statusText: this.statusText, headers: new Map(this.headers) }, this.payload, this.url);
  };
}

/**
 * A `Request` whose body is kept as the bytes it was given. @deroll/app posts through openapi-fetch, which
 * builds every request as a subclass of the global `Request`, the one in place when its module was
 * evaluated; undici's costs ~70 µs per `/finish` in the dapp (it makes an AbortSignal and a web stream,
 * and reading the body back goes through the stream). `withRollupRequests` evaluates that module while
 * this class is the global `Request`, and the transport's `fetch` then reads these bodies directly.
 * It takes what openapi-fetch gives it: a string URL, and a string or byte body.
 */
export class RollupRequest extends BufferedBody implements Request {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly cache: Request["cache"] = "default";
  readonly credentials: Request["credentials"] = "same-origin";
  readonly destination: Request["destination"] = "";
  readonly integrity: string;
  readonly mode: Request["mode"] = "cors";
  readonly redirect: Request["redirect"];
  readonly referrer = "about:client";
  readonly referrerPolicy: Request["referrerPolicy"] = "";
  readonly keepalive: boolean;
  readonly duplex: Request["duplex"] = "half";
  private readonly init: RequestInit;
  private abortSignal: AbortSignal | undefined;

  constructor(input: string | URL | Request, init: RequestInit = {}) {
    if (typeof input !== "string" && !(input instanceof URL)) throw new TypeError("RollupRequest takes a URL, not a Request");
    const method = (init.method ?? "GET").toUpperCase();
    const body = init.body ?? null;
    if (body !== null && (method === "GET" || method === "HEAD")) throw new TypeError(`a ${method} request cannot have a body`);
    let payload: Buffer | null;
    if (body === null) payload = null;
    else if (typeof body === "string") payload = Buffer.from(body, "utf8");
    else if (body instanceof ArrayBuffer) payload = Buffer.from(new Uint8Array(body));
    else if (ArrayBuffer.isView(body)) payload = Buffer.from(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    else throw new TypeError("RollupRequest takes a string or bytes body");
    super(payload);
    this.url = new URL(input).href;
    this.method = method;
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    this.redirect = init.redirect ?? "follow";
    this.integrity = init.integrity ?? "";
    this.keepalive = init.keepalive ?? false;
    this.abortSignal = init.signal ?? undefined;
    this.init = init;
  }

  get signal(): AbortSignal {
    this.abortSignal ??= new AbortController().signal;
    return this.abortSignal;
  }

  /** The body's bytes as given, without marking it read (the transport's own use). */
  get bytesGiven(): Buffer | null {
    return this.payload;
  }

  readonly clone = (): Request => {
    if (this.bodyUsed) throw new TypeError("Request.clone: Body has already been consumed");
    return new RollupRequest(this.url, { ...this.init, method: this.method, headers: new Headers(this.headers), body: this.payload });
  };
}

/**
 * Runs `load` (an `import()` of @deroll/app) while `RollupRequest` is the global `Request`, then puts the
 * global back. Only the modules that `load` evaluates for the first time see it; if openapi-fetch had been
 * evaluated before, its requests are undici's and the transport reads them the slower way (both work).
 */
export async function withRollupRequests<T>(load: () => Promise<T>): Promise<T> {
  const original = globalThis.Request;
  globalThis.Request = RollupRequest;
  try {
    return await load();
  } finally {
    globalThis.Request = original;
  }
}

/** A transport to `baseUrl` (`http://host:port[/path]`); connects on first use and again after a drop. */
export function createRollupTransport(baseUrl: string): RollupTransport {
  const base = new URL(baseUrl);
  if (base.protocol !== "http:") throw new RollupTransportError(`the rollup HTTP server must be http://, got ${base.protocol}`);
  const host = base.hostname.replace(/^\[|\]$/g, "");
  const port = Number(base.port || 80);
  const basePath = base.pathname.replace(/\/+$/, "");
  const hostHeader = base.host;

  let socket: Socket | undefined;
  let waiting: Exchange[] = [];

  function fail(from: Socket, error: Error): void {
    from.destroy();
    // A dropped connection's late events ("close" after "end" or after our own destroy) must not fail
    // the requests already waiting on its successor: its own were failed when it was dropped.
    if (socket !== from) return;
    socket = undefined;
    const failed = waiting;
    waiting = [];
    for (const exchange of failed) exchange.reject(error);
  }

  function open(): Socket {
    const next = connect({ host, port, noDelay: true });
    const parser = answerParser(
      () => waiting[0],
      (answer, keepAlive) => {
        const exchange = waiting.shift();
        if (!keepAlive) fail(next, new RollupTransportError("the server closed the connection"));
        exchange?.resolve(answer);
      },
    );
    next.on("data", (chunk: Buffer) => {
      try {
        parser.push(chunk);
      } catch (error) {
        fail(next, new RollupTransportError(error instanceof Error ? error.message : String(error)));
      }
    });
    next.on("end", () => {
      parser.end();
      fail(next, new RollupTransportError("the server closed the connection before answering"));
    });
    next.on("error", (error) => fail(next, error));
    next.on("close", () => fail(next, new RollupTransportError("the connection to the rollup HTTP server closed")));
    return next;
  }

  function exchange(method: string, path: string, headers: Iterable<[string, string]>, body: Buffer | undefined): Promise<RollupAnswer> {
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${hostHeader}\r\n`;
    for (const [name, value] of headers) {
      // The framing headers are ours to set.
      if (name === "host" || name === "content-length" || name === "connection" || name === "transfer-encoding") continue;
      head += `${name}: ${value}\r\n`;
    }
    head += body === undefined ? "\r\n" : `content-length: ${body.length}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      socket ??= open();
      waiting.push({ head: method === "HEAD", resolve, reject });
      socket.write(body === undefined || body.length === 0 ? head : Buffer.concat([Buffer.from(head, "latin1"), body]));
    });
  }

  const JSON_HEADERS: [string, string][] = [["content-type", "application/json"]];

  const rollupFetch: typeof fetch = async (input, init) => {
    const request = input instanceof RollupRequest || input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== base.origin) throw new TypeError(`this transport only reaches ${base.origin}, not ${url.origin}`);
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    let body: Buffer | undefined;
    if (hasBody) body = request instanceof RollupRequest ? (request.bytesGiven ?? undefined) : Buffer.from(await request.arrayBuffer());
    const answer = await exchange(request.method, url.pathname + url.search, request.headers, body);
    const empty = answer.status === 204 || answer.status === 304 || request.method === "HEAD";
    return new BufferedResponse(answer, empty ? null : answer.body, url.href);
  };

  return {
    post: (path, json) => exchange("POST", basePath + path, JSON_HEADERS, Buffer.from(json)),
    fetch: rollupFetch,
    close() {
      if (socket !== undefined) fail(socket, new RollupTransportError("the transport was closed"));
    },
  };
}
