/**
 * The indexer process (`npm run index`, a piece of `npm start`; docs/index.md): validates its configuration,
 * opens the index (PGlite under DATA_DIR, or DATABASE_URL's server) and migrates it, follows the node's
 * notices into it, and serves on INDEX_PORT: EAS's GraphQL over the index (`/graphql`), `/health`, `/ready`
 * (200 once it has caught up with the node since it started) and Prometheus `/metrics`. Stops on SIGINT or
 * SIGTERM after the input it is applying.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { messageOf } from "../../common/errors.ts";
import { graphqlExecutor } from "../graphql/execute.ts";
import { MAX_QUERY_BYTES, type GraphqlRequest } from "../graphql/request.ts";
import { IndexConfigError, loadIndexerConfig, type IndexerConfig } from "./config.ts";
import { changeStream } from "./changes.ts";
import { openIndex } from "./db.ts";
import { Indexer } from "./indexer.ts";
import { indexSource } from "./source.ts";

const log = (line: string): void => void process.stdout.write(`[indexer] ${line}\n`);

/** How often the indexer checks the node still has what it indexed, and asks which epochs are claimed. */
const VERIFY_EVERY_MS = 5_000;
const PROVEN_EVERY_MS = 1_000;
/** Longest a request naming an input the index has not reached waits for it (X-Min-Input-Index). */
export const MIN_INPUT_WAIT_MS = 5_000;

function config(): IndexerConfig {
  try {
    return loadIndexerConfig(process.env);
  } catch (error) {
    if (error instanceof IndexConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_QUERY_BYTES * 4) throw new Error(`the request body passes ${MAX_QUERY_BYTES * 4} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void => void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));

/** A GraphQL request from a POST body or a GET query string, or why it is not one. */
function graphqlRequest(method: string, url: URL, text: string): GraphqlRequest | string {
  let raw: unknown;
  if (method === "GET") {
    let variables: unknown = null;
    const v = url.searchParams.get("variables");
    try {
      if (v !== null) variables = JSON.parse(v);
    } catch {
      return "variables: expected a JSON object";
    }
    raw = { query: url.searchParams.get("query"), variables, operationName: url.searchParams.get("operationName") };
  } else {
    try {
      raw = JSON.parse(text);
    } catch {
      return "the body is not JSON";
    }
  }
  const r = raw as { query?: unknown; variables?: unknown; operationName?: unknown } | null;
  if (typeof r?.query !== "string" || r.query === "") return "query: expected a GraphQL document";
  if (r.variables != null && (typeof r.variables !== "object" || Array.isArray(r.variables))) return "variables: expected a JSON object";
  if (r.operationName != null && typeof r.operationName !== "string") return "operationName: expected a string";
  return { query: r.query, variables: (r.variables ?? null) as Record<string, unknown> | null, operationName: (r.operationName ?? null) as string | null };
}

async function main(): Promise<void> {
  const cfg = config();
  const index = await openIndex(cfg.location, { migrate: true, readTimeoutMs: cfg.readTimeoutMs });
  const source = indexSource({ ...cfg, nodeUrl: cfg.rollupUrl, timeoutMs: 10_000 });
  const registry = new Registry();
  const registers = [registry];
  const applied = new Counter({ name: "index_inputs_applied_total", help: "Inputs whose notices this process applied", registers });
  const failures = new Counter({ name: "index_read_failures_total", help: "Rounds that failed (the node or the database); the next one retries", registers });
  const lag = new Histogram({ name: "index_lag_seconds", help: "From an input's block time to its rows being queryable", buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60], registers });
  const indexer = new Indexer(index, source, {
    application: cfg.dappAddress.toLowerCase(),
    pageSize: cfg.pageSize,
    log,
    onApplied: (_input, _made, lagMs) => {
      applied.inc();
      if (lagMs !== undefined && lagMs >= 0) lag.observe(lagMs / 1000);
    },
  });
  await indexer.prepare();
  new Gauge({ name: "index_last_input", help: "The last input whose notices are indexed", registers, collect() { this.set(indexer.state.lastInput); } });
  new Gauge({ name: "index_proven_through", help: "The highest input known to be in a claimed epoch", registers, collect() { this.set(indexer.state.provenThrough); } });
  new Gauge({ name: "index_attestations", help: "Attestations in the index", registers, collect() { this.set(indexer.state.attestations); } });

  let caughtUp = false;
  let stopping = false;
  let lastError: string | undefined;
  const waiters = new Set<() => void>();
  const reached = (input: number): boolean => indexer.state.lastInput >= input;
  const waitFor = (input: number, ms: number): Promise<boolean> =>
    reached(input)
      ? Promise.resolve(true)
      : new Promise((resolve) => {
          const check = (): void => {
            if (!reached(input)) return;
            clearTimeout(timer);
            waiters.delete(check);
            resolve(true);
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            resolve(reached(input));
          }, ms);
          waiters.add(check);
        });

  // Answers are kept until this indexer's next commit: it is the only writer of its index. The api's
  // replicas that forward to it hear of each commit on /changes and keep theirs until then too.
  const run = graphqlExecutor(index, () => String(indexer.version));
  const changes = changeStream(() => indexer.version);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://index");
    const route = `${req.method} ${url.pathname}`;
    if (route === "GET /health") return json(res, 200, { status: "ok", caughtUp, ...indexer.state, location: cfg.location.kind, ...(lastError === undefined ? {} : { lastError }) });
    if (route === "GET /ready") return json(res, caughtUp ? 200 : 503, { ready: caughtUp, ...indexer.state });
    if (route === "GET /changes") return changes.serve(req, res);
    if (route === "GET /metrics") {
      void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text));
      return;
    }
    if (route !== "POST /graphql" && route !== "GET /graphql") return json(res, 404, { errors: [{ message: `no route ${route}` }] });
    void (async () => {
      let text = "";
      try {
        if (req.method === "POST") text = await body(req);
      } catch (error) {
        return json(res, 413, { errors: [{ message: messageOf(error) }] });
      }
      const request = graphqlRequest(req.method ?? "GET", url, text);
      if (typeof request === "string") return json(res, 400, { errors: [{ message: request }] });
      // Read-your-writes: a client that names the input its write made waits (boundedly) for the index to hold it.
      const min = req.headers["x-min-input-index"];
      if (typeof min === "string" && /^\d{1,12}$/.test(min) && !(await waitFor(Number(min), MIN_INPUT_WAIT_MS))) {
        return json(res, 503, { errors: [{ message: `the index has not reached input ${min} yet (it holds up to ${indexer.state.lastInput})`, extensions: { code: "INDEX_BEHIND" } }] }, { "retry-after": "1", "x-index-input": String(indexer.state.lastInput) });
      }
      const answer = await run(request);
      const headers = { "x-index-input": String(indexer.state.lastInput) };
      if (answer.text === undefined) json(res, answer.status, answer.body, headers);
      else res.writeHead(answer.status, { "content-type": "application/json", ...headers }).end(answer.text);
    })().catch((error: unknown) => json(res, 500, { errors: [{ message: messageOf(error), extensions: { code: "INTERNAL_ERROR" } }] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  log(`following ${source.url} into ${cfg.location.kind === "pglite" ? `PGlite at ${cfg.location.dir}` : `PostgreSQL (schema ${cfg.location.schema})`}; serving http://${cfg.host}:${cfg.port}/graphql`);

  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const loop = (async () => {
    let verified = 0;
    let provenAt = 0;
    let backoff = cfg.pollMs;
    while (!stopping) {
      try {
        if (Date.now() - verified >= VERIFY_EVERY_MS) {
          await indexer.verify();
          verified = Date.now();
        }
        const step = await indexer.step();
        for (const waiter of [...waiters]) waiter();
        if (step.caughtUp && !caughtUp) {
          caughtUp = true;
          log(`caught up: input ${indexer.state.lastInput}, ${indexer.state.attestations} attestations`);
        }
        if (Date.now() - provenAt >= PROVEN_EVERY_MS) {
          await indexer.markProven();
          provenAt = Date.now();
        }
        if (lastError !== undefined) log(`reading again after: ${lastError}`);
        lastError = undefined;
        backoff = cfg.pollMs;
        changes.announce();
        if (step.caughtUp) await sleep(cfg.pollMs);
      } catch (error) {
        // A round that failed may have committed inputs before it did.
        changes.announce();
        failures.inc();
        const message = messageOf(error);
        if (message !== lastError) log(`cannot index now (retrying): ${message}`);
        lastError = message;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  })();

  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping after the input being applied`);
    await loop;
    changes.close();
    server.close();
    await index.close();
    log("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  console.error(`[indexer] ${messageOf(error)}`);
  process.exit(1);
});
