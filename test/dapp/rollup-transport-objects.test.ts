/**
 * The objects the dapp's HTTP/1.1 client (dapp/transports/http-connection.ts) trades with openapi-fetch: the
 * `BufferedResponse` it answers with (reading once, cloning, streams, every body reader), the
 * `RollupRequest` it stands in for `Request` with (and sends as given), and `withRollupRequests`, which
 * puts RollupRequest in the global `Request` only while openapi-fetch loads.
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { BufferedResponse, createRollupTransport, RollupRequest, withRollupRequests } from "../../dapp/transports/http-connection.ts";
import { cleanups, closeAfterEach } from "./rollup-transport-support.ts";

closeAfterEach();

describe("BufferedResponse", () => {
  function response(body: string | null, status = 200): BufferedResponse {
    return new BufferedResponse(
      { status, statusText: "OK", headers: new Map([["content-type", "application/json"], ["x-id", "7"]]) },
      body === null ? null : Buffer.from(body),
      "http://127.0.0.1:5004/finish",
    );
  }

  it("reads the text once: bodyUsed flips and a second read rejects", async () => {
    const r = response('{"a":1}');
    expect(r.bodyUsed).toBe(false);
    expect(await r.text()).toBe('{"a":1}');
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow(TypeError);
    await expect(r.json()).rejects.toThrow(TypeError);
  });

  it("clone() before reading gives an independent copy; clone() after reading throws", async () => {
    const r = response('{"a":1}', 201);
    const copy = r.clone();
    expect(copy.status).toBe(201);
    expect(copy.statusText).toBe("OK");
    expect(copy.url).toBe("http://127.0.0.1:5004/finish");
    expect(copy.headers.get("x-id")).toBe("7");

    expect(await copy.text()).toBe('{"a":1}');
    expect(copy.bodyUsed).toBe(true);
    expect(r.bodyUsed).toBe(false);
    expect(await r.json()).toEqual({ a: 1 });
    expect(() => r.clone()).toThrow(TypeError);
  });

  it("exposes the bytes as a readable stream", async () => {
    const r = response("stream me");
    const body = r.body;
    expect(body).not.toBeNull();
    const chunks: Uint8Array[] = [];
    for await (const chunk of body as ReadableStream<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe("stream me");
    expect(response(null).body).toBeNull();
  });

  it("reads json(), arrayBuffer(), bytes() and blob()", async () => {
    expect(await response('{"list":[1,2],"s":"x"}').json()).toEqual({ list: [1, 2], s: "x" });

    const buffer = await response("abc").arrayBuffer();
    expect(buffer).toBeInstanceOf(ArrayBuffer);
    expect(buffer.byteLength).toBe(3);
    expect(Buffer.from(buffer).toString()).toBe("abc");

    expect([...(await response("hi").bytes())]).toEqual([0x68, 0x69]);

    const blob = await response("{}").blob();
    expect(blob.type).toBe("application/json");
    expect(await blob.text()).toBe("{}");
  });

  it("reads a null body as empty and reports ok from the status", async () => {
    const empty = response(null, 204);
    expect(empty.ok).toBe(true);
    expect(await empty.text()).toBe("");
    expect(response("no", 400).ok).toBe(false);
  });
});

describe("RollupRequest", () => {
  it("keeps what openapi-fetch gives it: method, URL, the Headers object and the body's bytes", async () => {
    const headers = new Headers({ "content-type": "application/json" });
    const request = new RollupRequest("http://127.0.0.1:5004/finish", { method: "post", headers, body: '{"status":"accept"}', redirect: "follow" });
    expect(request.method).toBe("POST");
    expect(request.url).toBe("http://127.0.0.1:5004/finish");
    expect(request.headers).toBe(headers);
    expect(request.bytesGiven?.toString("utf8")).toBe('{"status":"accept"}');
    expect(request.signal.aborted).toBe(false);
    expect(request.bodyUsed).toBe(false);
    expect(await request.json()).toEqual({ status: "accept" });
    expect(request.bodyUsed).toBe(true);
    await expect(request.text()).rejects.toThrow(TypeError);
  });

  it("takes byte bodies, clones before reading, and refuses what it cannot carry", async () => {
    const bytes = new RollupRequest("http://127.0.0.1/x", { method: "POST", body: new Uint8Array([104, 105]) });
    const copy = bytes.clone();
    expect(await bytes.text()).toBe("hi");
    expect(await copy.text()).toBe("hi");
    expect(() => new RollupRequest("http://127.0.0.1/x", { method: "GET", body: "no" })).toThrow(TypeError);
    expect(() => new RollupRequest("not a url")).toThrow(TypeError);
    expect(() => new RollupRequest(new Request("http://127.0.0.1/x"))).toThrow(/a URL, not a Request/);
    expect(() => new RollupRequest("http://127.0.0.1/x", { method: "POST", body: new URLSearchParams("a=1") })).toThrow(/string or bytes/);
  });

  it("is sent by the transport's fetch with its body as given", async () => {
    const seen: string[] = [];
    const server = createHttpServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${body}`);
        res.writeHead(200, { "content-length": "0" }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const transport = createRollupTransport(url);
    cleanups.push(() => transport.close());
    const answer = await transport.fetch(
      new RollupRequest(`${url}/report`, { method: "POST", headers: new Headers({ "content-type": "application/json" }), body: '{"payload":"0x01"}' }),
    );
    expect(answer.status).toBe(200);
    expect(seen).toEqual(['POST /report application/json {"payload":"0x01"}']);
  });
});

describe("withRollupRequests", () => {
  it("makes RollupRequest the global Request only while its loader runs, and restores it when the loader fails", async () => {
    const original = globalThis.Request;
    const Extended = await withRollupRequests(async () => {
      expect(globalThis.Request).toBe(RollupRequest);
      // What openapi-fetch does when its module is evaluated.
      return class CustomRequest extends Request {};
    });
    expect(globalThis.Request).toBe(original);
    expect(new Extended("http://127.0.0.1/x")).toBeInstanceOf(RollupRequest);
    await expect(
      withRollupRequests(async () => {
        throw new Error("load failed");
      }),
    ).rejects.toThrow("load failed");
    expect(globalThis.Request).toBe(original);
  });
});
