/**
 * The api's read pool (api/rollup/read-pool.ts) over real HTTP endpoints that behave as a sick reader
 * does: its status says serving while its inspects fail. Reads go to the healthy reader, and the pool
 * shows the sick one down, with why, for as long as reads leave it alone, whatever its status says.
 * (Real validators, killed and lagging, are test/api/readers.e2e.test.ts.)
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { RollupReader } from "../../api/rollup/inspect.ts";
import { ReadPool, type ReaderView } from "../../api/rollup/read-pool.ts";
import { WriteMark } from "../../api/rollup/write-mark.ts";
import { until } from "../support/until.ts";

interface Endpoint {
  url: string;
  inspects: number;
  server: Server;
}

/** A v1 endpoint: GET /reader says serving at 5 inputs; an inspect answers `health` (or 500 when `sick`). */
async function endpoint(sick: boolean): Promise<Endpoint> {
  const state = { inspects: 0 };
  const server = createServer((req, res) => {
    if (req.url === "/reader") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ serving: true, stale: false, reason: null, processedInputCount: 5 }));
      return;
    }
    state.inspects += 1;
    if (sick) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "BROKEN", message: "the dapp is gone" } }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "Accepted", exception_payload: null, reports: [{ payload: jsonToHex({ processed_inputs: 5 }) }], processed_input_count: 5 }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    get inspects() {
      return state.inspects;
    },
  };
}

let sick: Endpoint;
let healthy: Endpoint;
let node: Endpoint;

beforeAll(async () => {
  [sick, healthy, node] = [await endpoint(true), await endpoint(false), await endpoint(false)];
});

afterAll(async () => {
  for (const e of [sick, healthy, node]) await new Promise<void>((resolve) => e.server.close(() => resolve()));
});

describe("the read pool", () => {
  it("skips a reader whose status says serving while its inspects fail, and shows it down until its rest is over", async () => {
    const outcomes: string[] = [];
    const pool = new ReadPool([new RollupReader({ rollupUrl: sick.url }), new RollupReader({ rollupUrl: healthy.url })], new RollupReader({ rollupUrl: node.url }), new WriteMark(), {
      waitMs: 1_000,
      pollMs: 20,
      onRead: (target, outcome) => outcomes.push(`${target === sick.url ? "sick" : target === healthy.url ? "healthy" : target} ${outcome}`),
    });
    pool.start();
    try {
      // Both readers take turns to go first: within two reads the sick one is tried, fails, and the healthy one answers.
      for (let i = 0; i < 2; i++) expect(await pool.query("health")).toEqual({ processed_inputs: 5 });
      expect(outcomes).toContain("sick failed");
      expect(node.inspects).toBe(0);
      const sickView = (): ReaderView | undefined => pool.readers().find((r) => r.url === sick.url);
      // Status polls keep saying "serving" meanwhile; the pool's view does not.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sickView()).toEqual({ url: sick.url, kind: "reader", health: "down", processedInputCount: 5, reason: expect.stringContaining("HTTP 500: BROKEN (the dapp is gone)") });
      expect(pool.readers().find((r) => r.url === healthy.url)).toMatchObject({ health: "serving", reason: null });
      // While it rests, reads do not try it.
      const tried = sick.inspects;
      for (let i = 0; i < 4; i++) await pool.query("health");
      expect(sick.inspects).toBe(tried);
      // Its rest over (2 s), its status is what the pool shows again, and reads try it again.
      await until(() => sickView()?.health, (health) => health === "serving", "the sick reader's rest to end", 10_000);
      for (let i = 0; i < 2; i++) await pool.query("health");
      expect(sick.inspects).toBeGreaterThan(tried);
    } finally {
      await pool.stop();
    }
  });
});
