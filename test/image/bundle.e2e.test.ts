/**
 * What ships is what is tested: `npm run build` makes the bundle Dockerfile.cartesi copies, and this suite
 * runs that bundle (not the sources) as the dapp behind the real chain and devnode, through every input
 * kind and every query type.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexToUtf8 } from "../../common/hex.ts";
import { compactSchemaOf, encodeCompactBatch } from "../../common/compact-batch.ts";
import { inputIdOf, itemIdOf, schemaIdOf, type SchemaContent } from "../../common/ids.ts";
import type { SchemaDetail } from "../../common/wire.ts";
import { PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";

const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"; // hardhat account #1
const requester = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"; // hardhat account #2

const schema: SchemaContent = {
  provider: "http",
  flowType: "balance",
  domain: "bank.example",
  bucketDefinitions: { balance: { boundaries: [0, 100, 1000], labels: ["low", "high"] } },
  dataKeys: ["account"],
  freshnessHalfLife: 86_400,
};
const schemaId = schemaIdOf(schema);

function decodeReport(envelope: { reports: { payload: `0x${string}` }[] }): unknown {
  expect(envelope.reports).toHaveLength(1);
  return JSON.parse(hexToUtf8((envelope.reports[0] as { payload: `0x${string}` }).payload));
}

let stack: TestStack;

beforeAll(async () => {
  execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: PROJECT_ROOT, stdio: "pipe" });
  stack = await startStack({ dappCommand: [process.execPath, "dist/dapp/main.js"] });
});

afterAll(async () => {
  await stack?.stop();
});

describe("the built bundle", () => {
  it("is one module that leaves the native better-sqlite3 and @cartesi/rollup outside and pins their locked versions", () => {
    const bundle = readFileSync(join(PROJECT_ROOT, "dist/dapp/main.js"), "utf8");
    expect(bundle).toMatch(/from\s*"better-sqlite3"/);
    // Loaded only on the libcmt transport, so a dapp on the rollup HTTP server never needs the addon.
    expect(bundle).toMatch(/import\(\s*"@cartesi\/rollup"\s*\)/);
    expect(bundle).not.toMatch(/from\s*"@cartesi\/rollup"/);
    expect(existsSync(join(PROJECT_ROOT, "dist/migrations/meta/_journal.json"))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "dist/package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    expect(manifest.dependencies).toEqual({
      "better-sqlite3": lock.packages["node_modules/better-sqlite3"]?.version,
      "@cartesi/rollup": lock.packages["node_modules/@cartesi/rollup"]?.version,
    });
  });

  it("is the process the devnode feeds (not the sources)", () => {
    expect(stack.logs("dapp")).toContain("[dapp]");
    expect(stack.pid("dapp")).toBeGreaterThan(0);
  });

  it("accepts every input kind and answers every query type", async () => {
    const key = nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(7)).publicKey;
    const steps = [
      { type: "register_schema", params: { ...schema } },
      { type: "register_encryption_key", params: { publicKey: Buffer.from(key).toString("base64"), algorithm: "nacl-box" } },
      { type: "set_role", params: { address: owner, role: "operator", enabled: true } },
    ];
    for (const step of steps) expect((await stack.send(step)).status).toBe("ACCEPTED");

    const attestation = await stack.send({
      type: "create_attestation",
      params: { schema_id: schemaId, owner, provider: "http", encrypted_data: "0xabcd", bucket_values: { balance: "low" } },
    });
    expect(attestation.status).toBe("ACCEPTED");
    const claimId = inputIdOf("create_attestation", attestation.index);

    const grant = await stack.send(
      { type: "grant_access", params: { requester, schema_id: schemaId, expires_at: 4_102_444_800 } },
      1,
    );
    expect(grant.status).toBe("ACCEPTED");
    const grantId = inputIdOf("grant_access", grant.index);

    expect(decodeReport(await stack.inspect({ type: "all_provider_schemas", params: {} }))).toEqual([
      { schema_id: schemaId, name: "bank.example/balance", provider_type: "http", bucket_definitions: schema.bucketDefinitions },
    ]);
    expect(decodeReport(await stack.inspect({ type: "provider_schema", params: { schema_id: schemaId } }))).toMatchObject({
      data_keys: ["account"],
      freshness_half_life: 86_400,
    });
    expect(decodeReport(await stack.inspect({ type: "attestation", params: { attestation_id: claimId } }))).toMatchObject({
      attestation_id: claimId,
      owner,
      bucket_values: { balance: "low" },
    });
    expect(decodeReport(await stack.inspect({ type: "attestations_by_owner", params: { owner } }))).toHaveLength(1);
    expect(decodeReport(await stack.inspect({ type: "check_access", params: { owner, requester } }))).toEqual({
      has_access: true,
      grants: [{ grant_id: grantId, schema_id: schemaId, expires_at: 4_102_444_800, consent: "owner" }],
    });
    expect(decodeReport(await stack.inspect({ type: "grants_by_owner", params: { owner } }))).toHaveLength(1);
    expect(decodeReport(await stack.inspect({ type: "health", params: {} }))).toMatchObject({ status: "ok", database: "ok" });

    expect(decodeReport(await stack.inspect({ type: "encryption_key", params: {} }))).toMatchObject({ algorithm: "nacl-box" });
    expect(decodeReport(await stack.inspect({ type: "tls_attestors", params: {} }))).toEqual([]);
    expect(decodeReport(await stack.inspect({ type: "verify", params: { owner, schema_id: schemaId } }))).toMatchObject({
      valid: true,
      attestation: { attestation_id: claimId },
    });

    const ownerKey = Buffer.from(nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(9)).publicKey).toString("base64");
    const registered = await stack.send({ type: "register_owner_key", params: { public_key: ownerKey, algorithm: "nacl-box" } }, 1);
    expect(registered.status).toBe("ACCEPTED");
    expect(decodeReport(await stack.inspect({ type: "owner_key", params: { owner } }))).toMatchObject({ owner, public_key: ownerKey });

    const revoke = await stack.send({ type: "revoke_grant", params: { grant_id: grantId } }, 1);
    expect(revoke.status).toBe("ACCEPTED");
    expect(decodeReport(await stack.inspect({ type: "grants_by_owner", params: { owner } }))).toEqual([]);

    const withdrawn = await stack.send({ type: "revoke_attestation", params: { attestation_id: claimId, reason: "closed" } }, 1);
    expect(withdrawn.status).toBe("ACCEPTED");
    expect(decodeReport(await stack.inspect({ type: "attestation", params: { attestation_id: claimId } }))).toMatchObject({
      revocation: { reason: "closed" },
    });

    // The compact batch (issue 37): the schema by its short index, the owner once, the bucket by its label's index.
    const detail = decodeReport(await stack.inspect({ type: "provider_schema", params: { schema_id: schemaId, include_index: true } })) as SchemaDetail;
    const compactSchema = compactSchemaOf(detail.schema_index as number, detail.schema_id, detail.provider_type, detail.domain, detail.bucket_definitions);
    const item = (label: string) => ({ type: "create_attestation", params: { schema_id: schemaId, owner: requester, provider: "http", encrypted_data: "0xabcd", bucket_values: { balance: label } } });
    const compact = encodeCompactBatch([{ item: item("low"), schema: compactSchema }, { item: item("high"), schema: compactSchema }]);
    expect(compact.compactItems).toBe(2);
    const batch = await stack.send(compact.payload);
    expect([batch.status, batch.reports]).toEqual(["ACCEPTED", []]);
    expect(decodeReport(await stack.inspect({ type: "attestation", params: { attestation_id: itemIdOf("create_attestation", batch.index, 1) } }))).toMatchObject({
      owner: requester,
      bucket_values: { balance: "high" },
      item_index: 1,
    });
  });

  it("rejects a bad input with its report and a bad query with its message", async () => {
    const bad = await stack.send({ type: "no_such_kind", params: {} });
    expect(bad.status).toBe("REJECTED");
    expect(JSON.parse(hexToUtf8(bad.reports[0] as `0x${string}`))).toMatchObject({ error: { code: "UNKNOWN_KIND" } });

    const envelope = await stack.inspect({ type: "nope", params: {} });
    expect(envelope.status).toBe("Rejected");
    expect(envelope.reports).toEqual([]);
    expect(hexToUtf8(envelope.exception_payload as `0x${string}`)).toBe("unknown query type: nope");
  });
});
