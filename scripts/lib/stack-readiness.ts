/**
 * When a piece of the local stack is ready: each kind's own check (the chain answers eth_chainId, the
 * devnode its health, the dapp is connected to the rollup HTTP server, an api or the balancer answers
 * its health check, Redis PING, the demo provider and attestors accept connections), used by the
 * supervisor (scripts/lib/stack-supervisor.ts) before it starts the next piece; and the chain id a
 * JSON-RPC answers, which the supervisor hands a v1 dapp.
 */
import { connect } from "node:net";
import { attestorNumber, kindOf, readerNumber, replicaIndex, stackUrls, type PieceName, type StackSettings } from "./stack-pieces.ts";

/** The chain id the JSON-RPC at `url` answers. */
export async function chainIdAt(url: string): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await response.json()) as { result?: string };
  if (typeof answer.result !== "string") throw new Error(`${url} did not answer eth_chainId`);
  return Number.parseInt(answer.result, 16);
}

/**
 * The check's answer, false when it throws (not listening yet, a reset, a timeout); `why` is told what a
 * failed check saw, so a piece that never gets ready is reported with it.
 */
export async function probe(check: () => Promise<boolean>, why?: (problem: string) => void): Promise<boolean> {
  try {
    const ready = await check();
    if (!ready) why?.("it answered, not ready yet");
    return ready;
  } catch (error) {
    why?.(error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}` : String(error));
    return false;
  }
}

/** True when `url` answers 2xx; an error naming the status otherwise (said when the piece is never ready). */
export async function answersOk(url: string, signal: AbortSignal): Promise<boolean> {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return true;
}

/** A dapp is ready when it holds a connection to its node's rollup HTTP server, as the node's health says. */
async function dappConnectedTo(healthUrl: string, signal: AbortSignal): Promise<boolean> {
  const response = await fetch(healthUrl, { signal });
  if (!response.ok) throw new Error(`GET ${healthUrl} answered HTTP ${response.status}`);
  if (((await response.json()) as { dappConnected?: boolean }).dappConnected !== true) throw new Error(`${healthUrl}: no dapp connected to the node yet`);
  return true;
}

/** True once the piece answers as a ready piece does. */
export function readinessCheck(piece: PieceName, s: StackSettings): () => Promise<boolean> {
  const urls = stackUrls(s);
  const timeout = () => AbortSignal.timeout(2_000);
  const replica = replicaIndex(piece);
  switch (kindOf(piece)) {
    case "chain":
      return async () => {
        const response = await fetch(urls.rpc, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
          signal: timeout(),
        });
        return response.ok && "result" in ((await response.json()) as object);
      };
    case "devnode":
      return () => answersOk(`${urls.node}/healthz`, timeout());
    case "dapp":
      return () => dappConnectedTo(`${urls.node}/healthz`, timeout());
    case "indexer":
      return () => answersOk(`${urls.index ?? ""}/health`, timeout());
    case "publisher":
      return () => answersOk(`http://127.0.0.1:${s.publisher?.port ?? 0}/healthz`, timeout());
    case "reader":
      return () => answersOk(`${urls.readers[readerNumber(piece) - 1] ?? ""}/healthz`, timeout());
    case "reader-dapp":
      return () => dappConnectedTo(`${urls.readers[readerNumber(piece) - 1] ?? ""}/healthz`, timeout());
    case "api": {
      const port = replica === undefined ? s.apiPort : s.replicas?.ports[replica - 1];
      return () => answersOk(`http://127.0.0.1:${port}/healthcheck`, timeout());
    }
    case "balancer":
      return () => answersOk(`${urls.api}/healthcheck`, timeout());
    case "redis":
      return () => redisAnswers(s.replicas?.redisPort ?? 0);
    case "provider":
      return () => acceptsConnections(s.demoProvider?.port ?? 0);
    case "attestor":
      // Its HTTP server answers 404 outside its WebSocket and browser paths: any answer means it listens.
      return async () => (await fetch(`http://127.0.0.1:${s.attestor?.ports[attestorNumber(piece) - 1] ?? 0}/`, { signal: timeout() })).status > 0;
  }
}

/** True once Redis answers PING (it accepts connections a little before it serves them). */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write("PING\r\n"));
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolveProbe(false);
    });
    socket.once("data", (data) => {
      socket.destroy();
      resolveProbe(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolveProbe(false));
  });
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolveProbe(true);
    });
    socket.once("error", () => resolveProbe(false));
  });
}
