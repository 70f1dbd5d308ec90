/**
 * A small HTTP/1.1 server for the rollup HTTP API (devnode/rollup-server.ts): the one dapp is its only
 * client, on a kept-alive loopback connection where each input and each inspect costs two or three
 * exchanges in a row. node:http's server cost ~25 µs more per exchange than this one, a tenth of an
 * inspect (docs/performance.md). What it does of HTTP/1.1: Content-Length and chunked request
 * bodies, `Expect: 100-continue`, keep-alive (1.1 by default, 1.0 on request), `Connection: close`,
 * pipelined requests answered in order, and a clear 4xx/5xx before closing on anything it cannot read.
 */
import { createServer, type Server, type Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { bodyFraming, Http1Error, Http1Parser, keepsAlive } from "../common/http1.ts";
import { createDevnodeLog, unexpected, type Log } from "./log.ts";

export interface Http1Request {
  method: string;
  /** The request target as sent (origin form: path and query). */
  path: string;
  headers: Map<string, string>;
  body: Buffer;
}

export interface Http1Response {
  status: number;
  contentType?: string;
  body: string;
}

export interface Http1ServerOptions<Session> {
  /** A new connection; what it returns is handed to every request of that connection. */
  connect(socket: Socket): Session;
  disconnect(session: Session): void;
  /** Called in the order requests arrive; answers go out in that order whenever they are ready. */
  handle(request: Http1Request, session: Session): Http1Response | Promise<Http1Response>;
  maxBodyBytes: number;
  /** An idle connection (no request being read or answered) is closed after this long. */
  keepAliveMs: number;
  /** Where a failure of `handle` is reported (the node's labelled log; plain `[devnode]` lines by default). */
  logError?: Log;
}

export interface Http1Server extends Server {
  /** Destroys every open connection (node:http's Server has the same method). */
  closeAllConnections(): void;
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.([01])$/;

interface Slot {
  answer?: Buffer;
  close: boolean;
}

function serialize(response: Http1Response, head: boolean, close: boolean, keepAliveMs: number): Buffer {
  const body = Buffer.from(response.body, "utf8");
  let text = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? "Unknown"}\r\n`;
  if (response.contentType !== undefined) text += `content-type: ${response.contentType}\r\n`;
  text += `content-length: ${body.length}\r\n`;
  // The hint matters: Node's fetch drops an idle connection after 4 s without it, which the rollup model
  // would read as the dapp's death.
  text += close ? "connection: close\r\n\r\n" : `connection: keep-alive\r\nkeep-alive: timeout=${Math.max(1, Math.floor(keepAliveMs / 1000))}\r\n\r\n`;
  const headBytes = Buffer.from(text, "latin1");
  return head || body.length === 0 ? headBytes : Buffer.concat([headBytes, body]);
}

export function createHttp1Server<Session>(options: Http1ServerOptions<Session>): Http1Server {
  const sockets = new Set<Socket>();

  // Not half-open: a client ending its side is a client gone. The model reads the dapp's death from its
  // connection closing, and a dead dapp's pending /finish must not keep the connection open.
  const server = createServer({ noDelay: true, allowHalfOpen: false }, (socket) => {
    sockets.add(socket);
    const session = options.connect(socket);
    const slots: Slot[] = [];
    let closing = false;

    // Answers leave in request order: a slot waits until every earlier one has gone.
    function flush(): void {
      while (slots.length > 0 && slots[0]?.answer !== undefined) {
        const slot = slots.shift() as Slot;
        socket.write(slot.answer as Buffer);
        if (slot.close) {
          slots.length = 0;
          socket.end();
          return;
        }
      }
    }

    function refuse(error: unknown): void {
      const status = error instanceof Http1Error ? error.status : 400;
      const message = error instanceof Error ? error.message : String(error);
      closing = true;
      parser.stop();
      slots.push({ answer: serialize({ status, contentType: "text/plain; charset=utf-8", body: message }, false, true, options.keepAliveMs), close: true });
      flush();
    }

    const parser = new Http1Parser({
      maxBodyBytes: options.maxBodyBytes,
      framing(head) {
        const line = REQUEST_LINE.exec(head.startLine);
        if (line === null) throw new Http1Error(`not an HTTP/1.x request line: ${JSON.stringify(head.startLine.slice(0, 80))}`);
        const framing = bodyFraming(head.headers, options.maxBodyBytes, "empty");
        // Only when nothing is waiting to be answered: an interim answer must not pass an earlier final one.
        if (head.headers.get("expect")?.toLowerCase() === "100-continue" && slots.length === 0) socket.write("HTTP/1.1 100 Continue\r\n\r\n");
        return framing;
      },
      message(head, body) {
        const line = REQUEST_LINE.exec(head.startLine) as RegExpExecArray;
        const method = line[1] as string;
        const close = !keepsAlive(line[3] === "0" ? "1.0" : "1.1", head.headers);
        const slot: Slot = { close };
        slots.push(slot);
        if (close) {
          // Nothing after a "close" request is read, let alone acted on (RFC 9112 9.6).
          closing = true;
          parser.stop();
        }
        const answer = (response: Http1Response): void => {
          slot.answer = serialize(response, method === "HEAD", close, options.keepAliveMs);
          flush();
        };
        let result: Http1Response | Promise<Http1Response>;
        try {
          result = options.handle({ method, path: line[2] as string, headers: head.headers, body }, session);
        } catch (error) {
          result = Promise.reject(error);
        }
        if (result instanceof Promise) {
          result.then(answer, (error: unknown) => {
            unexpected(options.logError ?? createDevnodeLog("plain").error, "rollup HTTP server", error);
            answer({ status: 500, contentType: "text/plain; charset=utf-8", body: error instanceof Error ? error.message : String(error) });
          });
        } else {
          answer(result);
        }
      },
    });

    socket.on("data", (chunk: Buffer) => {
      if (closing) return;
      try {
        parser.push(chunk);
      } catch (error) {
        refuse(error);
      }
    });
    // Fires after every idle period, not once: a busy connection is checked again at the next one.
    socket.setTimeout(options.keepAliveMs);
    socket.on("timeout", () => {
      if (slots.length === 0 && !parser.midMessage) socket.destroy();
    });

    socket.on("error", () => socket.destroy());
    // The client's end is its departure (not half-open), told at once: "close" only follows once our side
    // has closed too, and work handed out in between would go to a dead dapp.
    let gone = false;
    const leave = (): void => {
      if (gone) return;
      gone = true;
      options.disconnect(session);
    };
    socket.once("end", leave);
    socket.once("close", () => {
      sockets.delete(socket);
      leave();
    });
  });

  return Object.assign(server, {
    closeAllConnections(): void {
      for (const socket of sockets) socket.destroy();
    },
  });
}
