/**
 * A TCP relay a test can hold or cut: in front of a chain's JSON-RPC, it makes whoever reads through it fall
 * behind on purpose (pause: no byte moves either way until resume; requests just wait) or lose its
 * connection (cut: every connection reset and new ones refused until resume).
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

export interface PausableProxy {
  url: string;
  pause(): void;
  resume(): void;
  cut(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  held: { to: Socket; chunk: Buffer }[];
}

export async function startPausableProxy(targetPort: number): Promise<PausableProxy> {
  let state: "open" | "paused" | "cut" = "open";
  const pairs = new Set<Pair>();
  const relay = (pair: Pair, to: Socket) => (chunk: Buffer) => {
    if (state === "paused") pair.held.push({ to, chunk });
    else to.write(chunk);
  };
  const server: Server = createServer((client) => {
    if (state === "cut") return void client.destroy();
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    const pair: Pair = { client, upstream, held: [] };
    pairs.add(pair);
    client.on("data", relay(pair, upstream));
    upstream.on("data", relay(pair, client));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pause() {
      state = "paused";
    },
    resume() {
      state = "open";
      for (const pair of pairs) {
        for (const { to, chunk } of pair.held.splice(0)) to.write(chunk);
      }
    },
    cut() {
      state = "cut";
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream.destroy();
      }
      pairs.clear();
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
