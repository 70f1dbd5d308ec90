/**
 * The api's metrics (api/metrics.ts) on the real app: requests by route pattern, method and status, their
 * latency, rate-limit refusals, and what a scrape reads from the services. The scrape over HTTP is in the
 * end-to-end suite (test/api/e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";
import { seriesValue } from "../support/prometheus.ts";

let api: OfflineApi;
beforeAll(async () => {
  api = await offlineApi();
});
afterAll(() => api?.cleanup());

describe("api metrics", () => {
  it("counts requests by route pattern (never the raw path), method and status, and times them", async () => {
    for (let i = 0; i < 3; i++) expect((await api.app.request("/healthcheck")).status).toBe(200);
    expect((await api.app.request(`/api/core/attestation/0x${"ab".repeat(32)}`)).status).toBe(503);
    expect((await api.app.request("/no/such/route")).status).toBe(404);
    const text = await api.services.metrics.text();
    expect(seriesValue(text, 'api_http_requests_total{route="/healthcheck",method="GET",status="200"}')).toBe(3);
    expect(seriesValue(text, 'api_http_requests_total{route="/api/core/attestation/:claimId",method="GET",status="503"}')).toBe(1);
    expect(seriesValue(text, 'api_http_requests_total{route="(unmatched)",method="GET",status="404"}')).toBe(1);
    expect(text).not.toContain("abab");
    expect(seriesValue(text, 'api_http_request_duration_seconds_count{route="/healthcheck",method="GET"}')).toBe(3);
    expect(seriesValue(text, "api_websocket_clients")).toBe(0);
    expect(seriesValue(text, "api_prover_processes")).toBe(0);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });

  it("counts rate-limit refusals by route", async () => {
    const fresh = await offlineApi();
    try {
      // The health group allows 100 a minute per client; the 101st is refused.
      for (let i = 0; i < 101; i++) await fresh.app.request("/healthcheck");
      const text = await fresh.services.metrics.text();
      expect(seriesValue(text, 'api_rate_limited_total{route="/healthcheck"}')).toBe(1);
      expect(seriesValue(text, 'api_http_requests_total{route="/healthcheck",method="GET",status="429"}')).toBe(1);
      expect(seriesValue(text, 'api_http_requests_total{route="/healthcheck",method="GET",status="200"}')).toBe(100);
    } finally {
      fresh.cleanup();
    }
  });
});
