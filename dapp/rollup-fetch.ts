/**
 * The transport under @deroll/app: a `fetch` for its openapi-fetch client, made of node:http over one
 * kept-alive connection. Node's own fetch (undici) cost ~0.6 ms and a few hundred short-lived objects per
 * call here, and the dapp makes two calls per input and per inspect (`/finish` and an output): the
 * transport was the largest share of an inspect and its garbage grew the heap (the README, "Performance").
 * Building the Request and Response objects that the fetch contract needs costs ~0.05 ms.
 */
import { Agent, request as httpRequest } from "node:http";

export interface RollupFetch {
  fetch: typeof fetch;
  /** Drops the connection: a `/finish` that is waiting fails at once (how the loop stops). */
  close(): void;
}

export function createRollupFetch(): RollupFetch {
  // One connection, kept: the dapp makes one call at a time, and the node reads the connection closing
  // as the dapp's death (it then hands the current input out again).
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  function exchange(url: URL, method: string, headers: Headers, body: string | undefined): Promise<Response> {
    const outgoing: Record<string, string | number> = Object.fromEntries(headers);
    if (body !== undefined) outgoing["content-length"] = Buffer.byteLength(body);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: outgoing },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const status = res.statusCode ?? 500;
            const contentType = res.headers["content-type"];
            // A Response may not carry a body on 204/304 (the fetch standard forbids it).
            const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(payload, { status, headers: contentType === undefined ? {} : { "content-type": contentType } }));
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  const rollupFetch: typeof fetch = async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== "http:") throw new TypeError(`the rollup HTTP server must be http://, got ${url.protocol}`);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.text();
    return exchange(url, request.method, request.headers, body);
  };

  return { fetch: rollupFetch, close: () => agent.destroy() };
}
