/**
 * The load generator of every HTTP figure: `concurrency` workers, each on its own keep-alive connection,
 * each sending its next request when the previous answer has been read in full. Two clients: "wire"
 * (bench/wire-client.ts, lean, the default: it measures the servers rather than itself) and "node"
 * (node:http's client, what a typical Node caller pays). Floors and figures compared with each other
 * always use the same client. Only loopback targets are accepted.
 */
import { Agent, request } from "node:http";
import { summarize, type LatencySummary } from "./stats.ts";
import { requestBytes, WireConnection } from "./wire-client.ts";

export type ClientKind = "wire" | "node";

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
  /** Default "wire". */
  client?: ClientKind;
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
  client: ClientKind;
  /** Response bytes of the last answer (to show how big the answers were). */
  lastBodyBytes: number;
  /** The timed latencies (ms) and the timed wall time, so runs can be merged. */
  samples: number[];
  seconds: number;
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

/** One connection per worker, whichever client. */
interface Connection {
  send(req: LoadRequest): Promise<HttpAnswer>;
  close(): void;
}

function connection(kind: ClientKind, target: URL): Connection {
  if (kind === "node") {
    const agent = keepAliveAgent(1);
    return { send: (req) => send(agent, target, req), close: () => agent.destroy() };
  }
  const port = Number(target.port);
  const wire = new WireConnection(target.hostname, port);
  return {
    send: (req) => wire.request(requestBytes(target.hostname, port, req.method, req.path, req.headers, req.body)),
    close: () => wire.close(),
  };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = loopbackTarget(options.baseUrl);
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

  const connections: Connection[] = [];
  async function worker(): Promise<void> {
    const conn = connection(options.client ?? "wire", target);
    connections.push(conn);
    for (;;) {
      const i = issued++;
      if (i >= total) return;
      // The clock starts when the first timed request is issued (warmup requests may still be in flight).
      if (i === options.warmup) timedStart = performance.now();
      const t = performance.now();
      const answer = await conn.send(options.next(i));
      const elapsed = performance.now() - t;
      check(answer.status, answer.body, i);
      lastBodyBytes = answer.body.length;
      if (i >= options.warmup) samples.push(elapsed);
    }
  }
  try {
    await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  } finally {
    for (const conn of connections) conn.close();
  }
  const seconds = (performance.now() - timedStart) / 1000;
  return {
    ...summarize(samples, seconds),
    concurrency: options.concurrency,
    client: options.client ?? "wire",
    lastBodyBytes,
    samples,
    seconds,
  };
}

/**
 * Runs several loads in `rounds` alternating slices (each round runs 1/rounds of every load, warmups in
 * the first round only), so a burst of noise from the rest of the machine falls on all of them alike,
 * and a figure and its floor are measured under the same conditions. Results are in `loads` order.
 */
export async function runInterleaved(loads: readonly LoadOptions[], rounds: number): Promise<LoadResult[]> {
  const parts: LoadResult[][] = loads.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [k, load] of loads.entries()) {
      const share = Math.floor(load.count / rounds) + (round < load.count % rounds ? 1 : 0);
      if (share === 0) continue;
      const offset = round * Math.floor(load.count / rounds);
      const warmup = round === 0 ? load.warmup : 0;
      parts[k]?.push(
        await runLoad({
          ...load,
          count: share,
          warmup,
          next: (i) => load.next(i < warmup ? i : load.warmup + offset + (i - warmup)),
        }),
      );
    }
  }
  return parts.map((results, k) => {
    const samples = results.flatMap((r) => r.samples);
    const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
    const load = loads[k] as LoadOptions;
    return {
      ...summarize(samples, seconds),
      concurrency: load.concurrency,
      client: load.client ?? "wire",
      lastBodyBytes: results[results.length - 1]?.lastBodyBytes ?? 0,
      samples,
      seconds,
    };
  });
}
