/**
 * X-Api-Replica on everything a replica answers (docs/operations.md, Api replicas): the api's routes, and
 * what the process answers beside the api (the scrape `GET /metrics`, the explorer); a lone api names
 * none. Through the balancer: test/api/replicas.e2e.test.ts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { explorerSite } from "../../api/explorer.ts";
import { processFetch } from "../../api/main.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

const opened: OfflineApi[] = [];
afterAll(() => {
  for (const api of opened) api.cleanup();
});

async function answersOf(env: Record<string, string>): Promise<Record<string, [number, string | null]>> {
  const api = await offlineApi(env);
  opened.push(api);
  const fetch = processFetch(api.services, api.app, explorerSite(new Map([["index.html", "<!doctype html>"]])));
  const answers: Record<string, [number, string | null]> = {};
  for (const path of ["/metrics", "/healthcheck", "/", "/explorer/app.js"]) {
    const response = await fetch(new Request(`http://127.0.0.1${path}`), undefined);
    await response.arrayBuffer();
    answers[path] = [response.status, response.headers.get("x-api-replica")];
  }
  return answers;
}

describe("X-Api-Replica", () => {
  it("names the replica on the scrape, the api's routes and the explorer, found or not", async () => {
    expect(await answersOf({ API_REPLICA: "api-2" })).toEqual({
      "/metrics": [200, "api-2"],
      "/healthcheck": [200, "api-2"],
      "/": [200, "api-2"],
      "/explorer/app.js": [404, "api-2"],
    });
  });

  it("is not sent by a lone api", async () => {
    const answers = await answersOf({});
    expect(Object.values(answers).map(([, replica]) => replica)).toEqual([null, null, null, null]);
  });
});
