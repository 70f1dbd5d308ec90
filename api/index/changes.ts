/**
 * The indexer's changes as a stream (docs/index.md, "Answers kept"): `GET /changes` on the indexer is a
 * server-sent event stream that says the indexer's version (its commits, api/index/indexer.ts) when a
 * client connects and after every commit. An api that forwards GraphQL to the indexer (the index on PGlite,
 * which only the indexer's process can open) keeps answers until the next event, as one reading PostgreSQL
 * itself does with LISTEN (api/index/db.ts, `changeListener`): a repeated query then costs the api alone,
 * not a hop to the indexer.
 */
import { request, type IncomingMessage, type ServerResponse } from "node:http";

/** The indexer's side: every client's stream, told each new version once. */
export function changeStream(version: () => number): { serve(req: IncomingMessage, res: ServerResponse): void; announce(): void; close(): void } {
  const clients = new Set<ServerResponse>();
  let announced = version();
  return {
    serve(req, res) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      res.write(`data: ${version()}\n\n`);
      clients.add(res);
      req.on("close", () => clients.delete(res));
    },
    announce() {
      const now = version();
      if (now === announced) return;
      announced = now;
      for (const res of clients) res.write(`data: ${now}\n\n`);
    },
    close() {
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}

/**
 * The api's side: the indexer's version as last heard, undefined while the stream is down (nothing is kept
 * or served then). Each connection is a new epoch of versions: an indexer restarted counts from 0 again,
 * and whatever happened while the stream was down is unknown.
 */
export function indexerChanges(indexerUrl: string, retryMs = 1_000): { version: () => string | undefined; close: () => void } {
  let connections = 0;
  let heard: string | undefined;
  let closed = false;
  let current: { destroy(): void } | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = (): void => {
    const url = new URL("/changes", indexerUrl);
    const req = request(url, { method: "GET", headers: { accept: "text/event-stream" } });
    current = req;
    const lost = (): void => {
      if (current !== req) return;
      current = undefined;
      heard = undefined;
      req.destroy();
      // Unref'd: a stream being retried never keeps a process alive on its own.
      if (!closed) retry = setTimeout(connect, retryMs).unref();
    };
    req.on("error", lost);
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return lost();
      }
      connections += 1;
      const epoch = connections;
      let buffered = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = /^data: (\d{1,15})$/m.exec(event);
          if (data !== null && current === req) heard = `${epoch}:${data[1]}`;
        }
        // A stream that says nothing an event can hold is not the indexer's.
        if (buffered.length > 1_024) lost();
      });
      res.on("end", lost);
      res.on("error", lost);
    });
    req.end();
  };
  connect();
  return {
    version: () => heard,
    close: () => {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const open = current;
      current = undefined;
      heard = undefined;
      open?.destroy();
    },
  };
}
