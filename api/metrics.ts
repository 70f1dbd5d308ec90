/**
 * The api's Prometheus metrics (`GET /metrics`, docs/operations.md): one registry per api, made at start
 * and handed to what records into it. Request counts and latencies are recorded by one middleware, by
 * route pattern (never the raw path, which holds ids); the rest is read from the services when scraped,
 * so nothing is added to the write path but one histogram observation per transaction.
 */
import type { MiddlewareHandler } from "hono";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ReadFailureReason } from "./rollup/inspect.ts";
import type { ReadOutcome } from "./rollup/read-pool.ts";
import type { StackPiece } from "./stack-status.ts";

export interface ApiMetrics {
  registry: Registry;
  /** Counts and times every request; put first, so it sees every answer, errors included. */
  middleware: MiddlewareHandler;
  /** One answered request, as the middleware counts it (for answers made outside hono: api/graphql/kept-listener.ts). */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** Group commit: the writes each transaction carried. */
  observeGroup(writes: number): void;
  /** The TLS attestor's claims, by mode and outcome, and how long they took. */
  observeProof(mode: string, outcome: "ok" | "failed", seconds: number): void;
  /** A mined InputBox transaction: its gas and whether it succeeded. */
  observeTransaction(gasUsed: bigint, succeeded: boolean): void;
  /** Redis could not answer a rate-limit or nonce call: the replica used its own state. */
  observeSharedStateFallback(): void;
  /**
   * An inspect read tried at a reader (its URL) or answered by the node ("node"), how it went and, when it
   * failed there (the read moved on to the next reader or the node), why.
   */
  observeRead(target: string, outcome: ReadOutcome, reason?: ReadFailureReason): void;
  /** The Prometheus text exposition. */
  text(): Promise<string>;
}

export interface MetricSources {
  /** WebSocket clients connected now. */
  wsClients(): number;
  /** Prover processes running now. */
  provers(): number;
  /** Whether the shared Redis is connected; undefined when there is none. */
  redisUp(): boolean | undefined;
  /** The stack's pieces as its supervisor last wrote them (api/stack-status.ts); null outside a stack. */
  stackPieces?(): StackPiece[] | null;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createApiMetrics(sources: MetricSources): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({ name: "api_http_requests_total", help: "HTTP requests answered, by route pattern, method and status", labelNames: ["route", "method", "status"], registers });
  const latency = new Histogram({ name: "api_http_request_duration_seconds", help: "Time to answer an HTTP request, by route pattern and method", labelNames: ["route", "method"], buckets: LATENCY_BUCKETS, registers });
  const refused = new Counter({ name: "api_rate_limited_total", help: "Requests refused with 429 RATE_LIMITED, by route pattern", labelNames: ["route"], registers });
  const groups = new Histogram({ name: "api_writes_per_transaction", help: "Writes one InputBox transaction carried (group commit)", buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers });
  const proofs = new Histogram({ name: "api_attestor_claim_duration_seconds", help: "Claims made through the TLS attestor, by proof mode and outcome, and their time", labelNames: ["mode", "outcome"], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60], registers });
  new Gauge({ name: "api_websocket_clients", help: "WebSocket clients connected", registers, collect() { this.set(sources.wsClients()); } });
  const transactions = new Counter({ name: "api_transactions_total", help: "InputBox transactions mined, by outcome", labelNames: ["outcome"], registers });
  const gas = new Histogram({ name: "api_transaction_gas_used", help: "Gas each mined InputBox transaction used", buckets: [30_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000], registers });
  const fallbacks = new Counter({ name: "api_shared_state_fallbacks_total", help: "Rate-limit and nonce calls Redis could not answer, so this replica used its own state", registers });
  new Gauge({
    name: "stack_piece_restarts",
    help: "Times the stack restarted each piece after it exited on its own (the supervisor's count; absent outside a stack)",
    labelNames: ["piece"],
    registers,
    collect() {
      for (const p of sources.stackPieces?.() ?? []) this.set({ piece: p.piece }, p.restarts);
    },
  });
  new Gauge({
    name: "api_redis_up",
    help: "1 while the Redis shared by replicas is connected, 0 while not (absent without REDIS_URL)",
    registers,
    collect() {
      const up = sources.redisUp();
      if (up !== undefined) this.set(up ? 1 : 0);
    },
  });
  const reads = new Counter({
    name: "api_rollup_reads_total",
    help: "Inspect reads, by where they went (a reader's URL, or node), how (ok, behind, failed, fallback) and, when failed (the read moved on to the next reader or the node), why (reason: refused, reset, timeout, network, 5xx, http, failed, malformed)",
    labelNames: ["target", "outcome", "reason"],
    registers,
  });
  new Gauge({ name: "api_prover_processes", help: "Prover processes running (TLS attestor claims)", registers, collect() { this.set(sources.provers()); } });

  // Each request's series found once: prom-client hashes a labels object on every call, a cost the api's
  // cheapest answers (kept GraphQL answers, api/graphql/kept-listener.ts) feel. Routes are patterns, so few.
  const series = new Map<string, { count: { inc(): void }; time: { observe(value: number): void } }>();
  const observeRequest = (route: string, method: string, status: number, seconds: number): void => {
    const key = `${route} ${method} ${status}`;
    let found = series.get(key);
    if (found === undefined) {
      found = { count: requests.labels(route, method, String(status)), time: latency.labels(route, method) };
      series.set(key, found);
    }
    found.count.inc();
    found.time.observe(seconds);
    if (status === 429) refused.inc({ route });
  };
  const middleware: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // Unknown paths share one label: a scanner must not mint a series per path.
      const route = c.req.routePath === "*" || c.req.routePath === "/*" ? "(unmatched)" : c.req.routePath;
      observeRequest(route, c.req.method, c.res.status, (performance.now() - started) / 1000);
    }
  };

  return {
    registry,
    middleware,
    observeRequest,
    observeGroup: (writes) => groups.observe(writes),
    observeProof: (mode, outcome, seconds) => proofs.observe({ mode, outcome }, seconds),
    observeSharedStateFallback: () => fallbacks.inc(),
    observeRead: (target, outcome, reason) => reads.inc(reason === undefined ? { target, outcome } : { target, outcome, reason }),
    observeTransaction: (gasUsed, succeeded) => {
      transactions.inc({ outcome: succeeded ? "success" : "reverted" });
      gas.observe(Number(gasUsed));
    },
    text: () => registry.metrics(),
  };
}
