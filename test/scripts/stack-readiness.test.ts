/**
 * A piece that never gets ready is reported with what its last check saw (scripts/lib/stack-readiness.ts,
 * the supervisor's "not ready after" message): the HTTP status it answered, or why it could not be reached.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answersOk, probe } from "../../scripts/lib/stack-readiness.ts";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.statusCode = req.url === "/limited" ? 429 : 200;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("a readiness probe", () => {
  it("is true when the check is, and says nothing", async () => {
    const said: string[] = [];
    expect(await probe(async () => (await fetch(`${base}/`)).ok, (why) => said.push(why))).toBe(true);
    expect(said).toEqual([]);
  });

  it("says the status a piece answered, the reason it could not be reached, or that it answered not ready", async () => {
    const said: string[] = [];
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const signal = (): AbortSignal => AbortSignal.timeout(2_000);
    expect(await probe(() => answersOk(`${base}/`, signal()), (why) => said.push(why))).toBe(true);
    expect(await probe(() => answersOk(`${base}/limited`, signal()), (why) => said.push(why))).toBe(false);
    expect(await probe(() => answersOk(`http://127.0.0.1:${closedPort}/`, signal()), (why) => said.push(why))).toBe(false);
    expect(await probe(async () => false, (why) => said.push(why))).toBe(false);
    expect(said[0]).toBe(`GET ${base}/limited answered HTTP 429`);
    expect(said[1]).toBe(`fetch failed (connect ECONNREFUSED 127.0.0.1:${closedPort})`);
    expect(said[2]).toBe("it answered, not ready yet");
  });
});
