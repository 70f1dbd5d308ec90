/**
 * `npm run input -- decode <hex>` (scripts/lib/decode-input.ts): a compact batch printed as the JSON batch
 * of its items, its schemas asked of the node by their short index (here a stand-in inspect server that
 * answers `provider_schema` as the dapp does); JSON text as itself; unreadable items and payloads said.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactSchemaOf, encodeCompactBatch } from "../../common/compact-batch.ts";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { decodeInputPayload } from "../../scripts/lib/decode-input.ts";
import { SCHEMA } from "../dapp/fixtures.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const schemaId = schemaIdOf(SCHEMA);
const schema = compactSchemaOf(4, schemaId, "http", SCHEMA.domain, SCHEMA.bucketDefinitions);
const OWNER = "0x90f79bf6eb2c4f970365e785982e1f101e93b906";
const claim = { type: "create_attestation", params: { schema_id: schemaId, owner: OWNER, provider: "http", encrypted_data: "0xabcd", bucket_values: { balance: "mid" } } };
const grant = { type: "revoke_grant", params: { grant_id: schemaId } };
const payload = encodeCompactBatch([{ item: claim, schema }, { item: grant }]).payload;

describe("decodeInputPayload", () => {
  it("reads a compact batch as the JSON batch of its items, asking for each schema index once", async () => {
    const asked: number[] = [];
    const decoded = await decodeInputPayload(payload, async (index) => {
      asked.push(index);
      return index === 4 ? schema : undefined;
    });
    expect(decoded).toEqual({ json: { type: "batch", params: { items: [claim, grant] } }, problems: [] });
    expect(asked).toEqual([4]);
  });

  it("shows an item it cannot read as the dapp reports it, and a payload that is no input", async () => {
    const decoded = await decodeInputPayload(payload, async () => undefined);
    const message = "compact batch item 0, byte 26: schema index 4 was never assigned";
    expect(decoded).toEqual({ json: { type: "batch", params: { items: [{ unreadable: { code: "SCHEMA_NOT_FOUND", message } }, grant] } }, problems: [message] });
    expect(await decodeInputPayload(`${payload}00`, async () => schema)).toEqual({ json: null, problems: [`compact batch, byte ${(payload.length - 2) / 2}: 1 trailing bytes after the last item`] });
    expect(await decodeInputPayload(jsonToHex(grant), async () => undefined)).toEqual({ json: grant, problems: [] });
    expect(await decodeInputPayload(utf8ToHex("no"), async () => undefined)).toEqual({ json: null, problems: ["neither a compact batch nor UTF-8 JSON"] });
  });
});

describe("npm run input -- decode", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // Answers provider_schema by schema_index as the dapp would, for index 4 only.
    server = createServer((request, response) => {
      const query = JSON.parse(decodeURIComponent((request.url ?? "").replace(/^\/inspect\//, ""))) as { params: { schema_index?: number } };
      const found = query.params.schema_index === 4;
      const report = { schema_id: schemaId, name: "n", provider_type: "http", bucket_definitions: SCHEMA.bucketDefinitions, data_keys: SCHEMA.dataKeys, freshness_half_life: 1, domain: SCHEMA.domain, schema_index: 4 };
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(found ? { status: "Accepted", exception_payload: null, reports: [{ payload: jsonToHex(report) }], processed_input_count: 1 } : { status: "Rejected", exception_payload: utf8ToHex("schema not found"), reports: [], processed_input_count: 1 }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function run(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...processArgs("scripts/input.ts"), ...args], { cwd: PROJECT_ROOT, env: { ...process.env, NODE_PORT: String(port) } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.on("close", (status) => resolve({ status, stdout, stderr }));
    });
  }

  it("prints the JSON a compact batch means, its schema read from the node", { timeout: 60_000 }, async () => {
    const out = await run(["decode", payload]);
    expect([out.status, out.stderr]).toEqual([0, ""]);
    expect(JSON.parse(out.stdout)).toEqual({ type: "batch", params: { items: [claim, grant] } });
  });

  it("says what it cannot read and exits 1; a bad argument is a usage error (exit 2)", { timeout: 60_000 }, async () => {
    const unknown = encodeCompactBatch([{ item: claim, schema: { ...schema, index: 9 } }]).payload;
    const out = await run(["decode", unknown as Hex]);
    expect(out.status).toBe(1);
    expect(out.stderr).toContain("schema index 9 was never assigned");
    const bad = await run(["decode", "xyz"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("decode takes one payload");
  });
});
