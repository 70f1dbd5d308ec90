/**
 * CORS on every answer of the api (api/app.ts): browsers' explorers and EAS applications read the api from
 * other origins. The headers are prepared on the context before the route answers (hono's own cors sets
 * them on the answer, which copies every answer into a full Response), so what is checked here is that
 * every kind of answer still carries them: a route's, a refusal, a missing route, a thrown error, and the
 * preflight, which hono's cors still answers.
 */
import { afterAll, describe, expect, it } from "vitest";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

const opened: OfflineApi[] = [];
afterAll(() => {
  for (const api of opened) api.cleanup();
});

const EXPOSED = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", "x-request-id", "x-api-replica", "x-input-index", "x-read-fallback"];

async function answer(path: string, init?: RequestInit): Promise<Response> {
  const api = opened[0] ?? (await offlineApi({}));
  if (opened.length === 0) opened.push(api);
  return api.app.request(path, init);
}

describe("CORS", () => {
  it.each([
    ["a route's answer", "/healthcheck", undefined, 200],
    ["a missing route", "/no/such/route", undefined, 404],
    ["a body refused", "/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: "{" }, 400],
    ["a header refused before the route", "/healthcheck", { headers: { "X-Min-Input-Index": "minus one" } }, 400],
  ] as const)("%s carries Allow-Origin * and the exposed headers", async (_name, path, init, status) => {
    const response = await answer(path, init);
    expect(response.status).toBe(status);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")?.toLowerCase().split(",")).toEqual(EXPOSED);
  });

  it("a preflight is answered 204 with the methods and headers a client may send", async () => {
    const response = await answer("/graphql", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET,POST,DELETE,OPTIONS");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toBe("authorization,content-type,x-min-input-index");
  });
});
