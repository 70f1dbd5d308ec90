/**
 * The typed client's read-your-writes session (client/index.ts) against a real HTTP server that answers
 * requests in an order it chooses: the input index the session sends only rises, whatever order
 * concurrent writes answer in, and a caller's own higher X-Min-Input-Index is kept.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient } from "../../client/index.ts";

/** Each request's `?wrote=N&wait=MS` says what the server answers and when. */
let server: Server;
let baseUrl: string;
const received: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    received.push(req.headers["x-min-input-index"] as string | undefined);
    const wrote = url.searchParams.get("wrote");
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json", ...(wrote === null ? {} : { "x-input-index": wrote }) });
      res.end(JSON.stringify({ success: true, data: {} }));
    }, Number(url.searchParams.get("wait") ?? 0));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the client's session", () => {
  it("a write that answers later with a lower index does not lower what later requests send", async () => {
    const client = new AttestationClient({ baseUrl });
    // The higher write answers first; the lower one, sent at the same time, answers after it.
    await Promise.all([client.raw("POST", "/w?wrote=9&wait=10"), client.raw("POST", "/w?wrote=4&wait=150")]);
    expect(client.inputIndexSeen).toBe(9);
    received.length = 0;
    await client.raw("GET", "/r");
    expect(received).toEqual(["9"]);
  });

  it("a derived client shares the session; a caller's higher X-Min-Input-Index is kept, a lower one raised", async () => {
    const client = new AttestationClient({ baseUrl });
    await client.raw("POST", "/w?wrote=7");
    const derived = client.withToken("t");
    received.length = 0;
    await derived.raw("GET", "/r", undefined, { "X-Min-Input-Index": "12" });
    await derived.raw("GET", "/r", undefined, { "X-Min-Input-Index": "3" });
    await derived.raw("GET", "/r");
    expect(received).toEqual(["12", "7", "7"]);
    // An answer without the header, or with one that is not an index, leaves the session as it was.
    await derived.raw("POST", "/w?wrote=not-a-number");
    await derived.raw("POST", "/w");
    expect(client.inputIndexSeen).toBe(7);
  });

  it("a new client sends no X-Min-Input-Index before it has seen a write", async () => {
    received.length = 0;
    await new AttestationClient({ baseUrl }).raw("GET", "/r");
    expect(received).toEqual([undefined]);
  });
});
