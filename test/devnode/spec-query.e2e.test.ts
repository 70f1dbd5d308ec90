/**
 * The specification's rollup query interface (part B), the same suite against a v1 stack and a v2 stack:
 * `GET /inspect/<percent-encoded JSON>` and `POST /inspect` on the node's port, the Accepted/Rejected
 * envelope with hex reports, every query type, and the rejection messages of DECISIONS.md section 9. On
 * v2 the node answers only `POST /inspect/<application>`: the devnode serves the specification's form
 * through the adapter that `npm run inspect-adapter` runs in front of a real v2 node (devnode/v2/spec-inspect.ts),
 * and that adapter is checked here too, in front of the v2 devnode's own inspect.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexToUtf8, utf8ToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import { specInspectRoute, v2InspectOverHttp } from "../../devnode/v2/spec-inspect.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { schemaInput } from "./fixtures.ts";

const KINDS = [
  { rollups: "v1" as const, via: "the node" },
  { rollups: "v2" as const, via: "the node" },
  { rollups: "v2" as const, via: "npm run inspect-adapter" },
];

describe.each(KINDS)("on a $rollups stack, through $via", ({ rollups, via }) => {
  let stack: TestStack;
  let adapter: Server | undefined;
  let base: string;
  const domain = `spec-${rollups}.example`;
  const schemaId = schemaIdOf(schemaInput(domain).params as unknown as Parameters<typeof schemaIdOf>[0]);

  async function get(query: unknown): Promise<InspectEnvelope> {
    const response = await fetch(`${base}/inspect/${encodeURIComponent(JSON.stringify(query))}`);
    expect(response.status).toBe(200);
    return (await response.json()) as InspectEnvelope;
  }
  async function post(query: unknown): Promise<InspectEnvelope> {
    const response = await fetch(`${base}/inspect`, { method: "POST", body: JSON.stringify(query) });
    expect(response.status).toBe(200);
    return (await response.json()) as InspectEnvelope;
  }
  function result(envelope: InspectEnvelope): unknown {
    expect(envelope.status).toBe("Accepted");
    expect(envelope.reports).toHaveLength(1);
    return JSON.parse(hexToUtf8(envelope.reports[0]?.payload as `0x${string}`));
  }

  beforeAll(async () => {
    stack = await startStack({ rollups });
    base = stack.urls.node;
    if (via !== "the node") {
      adapter = createServer((req, res) => void specInspectRoute(v2InspectOverHttp(stack.urls.node, V2_DEFAULTS.applicationName))(req, res));
      await new Promise<void>((resolve) => adapter?.listen(0, "127.0.0.1", () => resolve()));
      base = `http://127.0.0.1:${(adapter.address() as AddressInfo).port}`;
    }
    expect((await stack.send(schemaInput(domain))).status).toBe("ACCEPTED");
  }, 180_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => (adapter === undefined ? resolve() : adapter.close(() => resolve())));
    await stack?.stop();
  });

  it("answers the envelope's four fields, the same by GET and by POST", async () => {
    const byGet = await get({ type: "all_provider_schemas", params: {} });
    expect(Object.keys(byGet)).toEqual(["status", "exception_payload", "reports", "processed_input_count"]);
    expect(byGet.exception_payload).toBeNull();
    expect(byGet.processed_input_count).toBeGreaterThanOrEqual(1);
    expect(await post({ type: "all_provider_schemas", params: {} })).toEqual(byGet);
  });

  it("answers every query type of the specification", async () => {
    expect(result(await get({ type: "all_provider_schemas", params: {} }))).toContainEqual(expect.objectContaining({ schema_id: schemaId, provider_type: "http" }));
    expect(result(await get({ type: "provider_schema", params: { schema_id: schemaId } }))).toMatchObject({ schema_id: schemaId, data_keys: ["balance"], freshness_half_life: 3600 });
    const owner = "0x90f79bf6eb2c4f970365e785982e1f101e93b906";
    expect(result(await get({ type: "attestations_by_owner", params: { owner } }))).toEqual([]);
    expect(result(await get({ type: "check_access", params: { owner, requester: "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65" } }))).toEqual({ has_access: false, grants: [] });
    expect(result(await get({ type: "grants_by_owner", params: { owner } }))).toEqual([]);
    const health = await get({ type: "health", params: {} });
    expect(result(health)).toEqual({ status: "ok", database: "ok", processed_inputs: health.processed_input_count });
  });

  it.each([
    [{ type: "no_such_query", params: {} }, "unknown query type: no_such_query"],
    [{ type: "provider_schema", params: {} }, "missing required parameter: schema_id"],
    [{ type: "provider_schema", params: { schema_id: `0x${"0".repeat(64)}` } }, `schema not found: 0x${"0".repeat(64)}`],
    [{ type: "attestation", params: { attestation_id: `0x${"1".repeat(64)}` } }, `attestation not found: 0x${"1".repeat(64)}`],
  ])("rejects %j as Rejected with the hex of its message and no reports", async (query, message) => {
    const envelope = await get(query);
    expect(envelope).toEqual({ status: "Rejected", exception_payload: utf8ToHex(message), reports: [], processed_input_count: expect.any(Number) });
  });

  it("rejects a query that is not JSON with `invalid query: ...`", async () => {
    const response = await fetch(`${base}/inspect/not%20json`);
    const envelope = (await response.json()) as InspectEnvelope;
    expect(envelope.status).toBe("Rejected");
    expect(hexToUtf8(envelope.exception_payload as `0x${string}`)).toMatch(/^invalid query: /);
  });
});
