/**
 * The attestation-data extension without a stack: which grant decides (decideGrant), how an opened box
 * becomes JSON (openJsonObject), the ENCRYPTION_SECRET_KEY setting, and the checks that answer before
 * any rollup round trip (the rollup here refuses connections).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nacl from "tweetnacl";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../api/config.ts";
import { ApiError } from "../../api/errors.ts";
import { decideGrant, openJsonObject } from "../../api/data/read.ts";
import { sealAnonymous, SealError, sealForKey } from "../../common/seal.ts";
import { sealToOwner } from "../../common/content-seal.ts";
import { newBoxKeyPair, openAttestedData } from "../../client/keys.ts";
import type { GrantView } from "../../common/wire.ts";
import { bearer, tokenFor, USER_A, type ErrorShape } from "../support/api-fixtures.ts";
import { offlineApi, type OfflineApi } from "../support/api-in-process.ts";

const REQUESTER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const OTHER = "0x90f79bf6eb2c4f870365e785982e1f101e93b906";
const SCHEMA = `0x${"a".repeat(64)}` as Hex;
const OTHER_SCHEMA = `0x${"b".repeat(64)}` as Hex;
const id = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;
const grant = (n: number, expiresAt: number, over: Partial<GrantView> = {}): GrantView => ({
  grant_id: id(n),
  requester: REQUESTER,
  schema_id: SCHEMA,
  created_at: 1,
  expires_at: expiresAt,
  consent: "relayed",
  ...over,
});

describe("decideGrant", () => {
  const now = 1_000;

  it("allows on a grant unexpired at now, even among expired ones", () => {
    expect(decideGrant([grant(1, 900), grant(2, 1_001), grant(3, 950)], REQUESTER, SCHEMA, now)).toEqual({ kind: "allowed", grantId: id(2) });
  });

  it("counts a grant expiring exactly at now as expired (live while expires_at > now, as check_access)", () => {
    expect(decideGrant([grant(1, now)], REQUESTER, SCHEMA, now)).toEqual({ kind: "expired", grantId: id(1), expiredAt: now });
  });

  it("names the latest-expiring grant when all have expired", () => {
    expect(decideGrant([grant(1, 900), grant(2, 990), grant(3, 950)], REQUESTER, SCHEMA, now)).toEqual({
      kind: "expired",
      grantId: id(2),
      expiredAt: 990,
    });
  });

  it("ignores grants for another requester or another schema; compares addresses and ids case-insensitively", () => {
    const others = [grant(1, 5_000, { requester: OTHER }), grant(2, 5_000, { schema_id: OTHER_SCHEMA })];
    expect(decideGrant(others, REQUESTER, SCHEMA, now)).toEqual({ kind: "none" });
    expect(decideGrant([], REQUESTER, SCHEMA, now)).toEqual({ kind: "none" });
    expect(decideGrant([grant(3, 5_000)], REQUESTER.toUpperCase().replace("0X", "0x"), SCHEMA.toUpperCase().replace("0X", "0x"), now)).toEqual({
      kind: "allowed",
      grantId: id(3),
    });
  });
});

describe("openJsonObject", () => {
  const pair = nacl.box.keyPair();
  const publicKey = Buffer.from(pair.publicKey).toString("base64");
  const seal = (text: string) => sealForKey(new TextEncoder().encode(text), publicKey);
  function reasonOf(run: () => unknown): unknown {
    try {
      run();
    } catch (thrown) {
      // As the api's onError maps it (api/app.ts): the shared sealing code's errors carry the wire's codes.
      const error = thrown instanceof SealError ? new ApiError(thrown.code, thrown.message, thrown.details) : thrown;
      if (error instanceof ApiError) return [error.code, error.status, error.details];
      throw error;
    }
    throw new Error("expected a failure");
  }

  it("opens a sealed JSON object", () => {
    expect(openJsonObject(seal('{"data.balance":5}'), pair.secretKey)).toEqual({ "data.balance": 5 });
  });

  it("opens a sealed box of values alone and names them with the schema (claims since issue 37)", () => {
    const sealed = sealAnonymous(new TextEncoder().encode('["EUR",512.5]'), publicKey);
    expect(openJsonObject(sealed, pair.secretKey, { dataKeys: ["data.currency"], bucketFields: ["data.balance"] })).toEqual({ "data.currency": "EUR", "data.balance": 512.5 });
    expect(reasonOf(() => openJsonObject(sealed, pair.secretKey, { dataKeys: [], bucketFields: ["data.balance"] }))).toEqual([
      "DECRYPTION_FAILED",
      500,
      { reason: "the values do not match the schema's names" },
    ]);
  });

  it("a wrong key or tampered data is DECRYPTION_FAILED {reason}", () => {
    expect(reasonOf(() => openJsonObject(seal("{}"), nacl.box.keyPair().secretKey))).toEqual([
      "DECRYPTION_FAILED",
      500,
      { reason: "wrong key or tampered data" },
    ]);
    const sealed = seal("{}");
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith("00") ? "01" : "00"}`;
    expect(reasonOf(() => openJsonObject(tampered, pair.secretKey))).toEqual(["DECRYPTION_FAILED", 500, { reason: "wrong key or tampered data" }]);
  });

  it("a plaintext that is not JSON, or JSON that is not an object, is DECRYPTION_FAILED without quoting it", () => {
    const secret = "balance is 98765432";
    const error = reasonOf(() => openJsonObject(seal(secret), pair.secretKey));
    expect(error).toEqual(["DECRYPTION_FAILED", 500, { reason: "plaintext is not JSON" }]);
    expect(JSON.stringify(error)).not.toContain("98765432");
    expect(reasonOf(() => openJsonObject(seal("[1,2]"), pair.secretKey))).toEqual([
      "DECRYPTION_FAILED",
      500,
      { reason: "plaintext is not a JSON object" },
    ]);
  });
});

describe("ENCRYPTION_SECRET_KEY", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "api-data-config-"));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("is optional, and decodes base64 of 32 bytes", () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).encryptionSecretKey).toBeUndefined();
    const key = nacl.box.keyPair().secretKey;
    expect(loadConfig({ DATA_DIR: tempDir(), ENCRYPTION_SECRET_KEY: Buffer.from(key).toString("base64") }).encryptionSecretKey).toEqual(key);
  });

  it.each([
    ["not base64", "not base64 at all!"],
    ["the wrong length", Buffer.from(new Uint8Array(31).fill(7)).toString("base64")],
  ])("a value that is %s stops the start naming the variable, never echoing the value", (_, value) => {
    let thrown: unknown;
    try {
      loadConfig({ DATA_DIR: tempDir(), ENCRYPTION_SECRET_KEY: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe("ENCRYPTION_SECRET_KEY");
    expect((thrown as ConfigError).message).toContain("ENCRYPTION_SECRET_KEY");
    expect((thrown as ConfigError).message).not.toContain(value);
  });
});

describe("GET /api/core/attestation/:claimId/data before the rollup", () => {
  let api: OfflineApi;
  beforeAll(async () => {
    api = await offlineApi({ RATE_LIMITS: "off" });
  });
  afterAll(() => api.cleanup());

  it("without a token: 401 AUTH_MISSING, before any rollup read", async () => {
    const response = await api.app.request(`/api/core/attestation/${id(1)}/data`);
    const body = (await response.json()) as ErrorShape;
    expect([response.status, body.error.code, body.error.details]).toEqual([401, "AUTH_MISSING", undefined]);
  });

  it("a malformed claim id: 404 ATTESTATION_NOT_FOUND {claim_id}, without a round trip", async () => {
    const response = await api.app.request("/api/core/attestation/xyz/data", { headers: bearer(await tokenFor("user", USER_A)) });
    const body = (await response.json()) as ErrorShape;
    expect([response.status, body.error.code, body.error.details]).toEqual([404, "ATTESTATION_NOT_FOUND", { claim_id: "xyz" }]);
  });

  it("an unreachable rollup: 503 ROLLUP_UNAVAILABLE", async () => {
    const response = await api.app.request(`/api/core/attestation/${id(1)}/data`, { headers: bearer(await tokenFor("user", USER_A)) });
    expect([response.status, ((await response.json()) as ErrorShape).error.code]).toEqual([503, "ROLLUP_UNAVAILABLE"]);
  });
});

describe("openAttestedData (client/keys.ts, what npm run open uses): data sealed before issue 37 and since", () => {
  const mine = newBoxKeyPair();
  const schema = { dataKeys: ["data.currency"], bucketFields: ["data.balance"] };
  const named = { "data.currency": "EUR", "data.balance": 512.5 };

  it.each([
    ["the named object in the nonce-carrying box (before)", () => sealForKey(new TextEncoder().encode(JSON.stringify(named)), mine.publicKey)],
    ["the values in a sealed box (since)", () => sealAnonymous(new TextEncoder().encode('["EUR",512.5]'), mine.publicKey)],
    ["the values sealed to the owner (OKS1)", () => sealToOwner(new TextEncoder().encode('["EUR",512.5]'), [mine.publicKey])],
  ])("opens %s to the named object", (_name, seal) => {
    expect(openAttestedData(seal(), mine, undefined, schema)).toEqual(named);
  });

  it("says why values cannot be named without their schema", () => {
    expect(() => openAttestedData(sealAnonymous(new TextEncoder().encode('["EUR",512.5]'), mine.publicKey), mine)).toThrow(/needs its schema/);
  });
});
