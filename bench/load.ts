/**
 * The one HTTP client every figure uses (echo floor, inspect, api): node:http over a keep-alive agent
 * with one socket per concurrent worker, each worker sending its next request when the previous answer
 * has been read in full. Only loopback targets are accepted.
 */
import { Agent, request } from "node:http";
import { summarize, type LatencySummary } from "./stats.ts";

export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  body?: Buffer;
  headers?: Record<string, string>;
}

export interface LoadOptions {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  concurrency: number;
  /** Timed requests. */
  count: number;
  /** Untimed requests first (connections opened, JIT warm, SQLite pages cached). */
  warmup: number;
  /** Request number `i` (warmup requests included, numbered first). */
  next(i: number): LoadRequest;
  /** Throws when an answer is wrong; the run stops with that error. Default: status 200. */
  check?(status: number, body: Buffer, i: number): void;
}

export interface LoadResult extends LatencySummary {
  concurrency: number;
  /** Response bytes of the last answer (to show how big the answers were). */
  lastBodyBytes: number;
}

export interface HttpAnswer {
  status: number;
  body: Buffer;
}

export function loopbackTarget(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" || url.hostname !== "127.0.0.1") {
    throw new Error(`benchmarks only send traffic to http://127.0.0.1 (got ${baseUrl})`);
  }
  return url;
}

/** One request on `agent`; resolves with the whole answer. */
export function send(agent: Agent, target: URL, req: LoadRequest): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = req.body.length;
    const outgoing = request(
      { agent, host: target.hostname, port: target.port, method: req.method, path: req.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

export function keepAliveAgent(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets, keepAliveMsecs: 60_000 });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = loopbackTarget(options.baseUrl);
  const agent = keepAliveAgent(options.concurrency);
  const check =
    options.check ??
    ((status: number, body: Buffer) => {
      if (status !== 200) throw new Error(`HTTP ${status}: ${body.toString("utf8").slice(0, 300)}`);
    });
  const total = options.warmup + options.count;
  const samples: number[] = [];
  let issued = 0;
  let lastBodyBytes = 0;
  let timedStart = 0;

  async function worker(): Promise<void> {
    for (;;) {
      const i = issued++;
      if (i >= total) return;
      // The clock starts when the first timed request is issued (warmup requests may still be in flight).
      if (i === options.warmup) timedStart = performance.now();
      const t = performance.now();
      const answer = await send(agent, target, options.next(i));
      const elapsed = performance.now() - t;
      check(answer.status, answer.body, i);
      lastBodyBytes = answer.body.length;
      if (i >= options.warmup) samples.push(elapsed);
    }
  }
  try {
    await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - timedStart) / 1000;
  return { ...summarize(samples, seconds), concurrency: options.concurrency, lastBodyBytes };
}
