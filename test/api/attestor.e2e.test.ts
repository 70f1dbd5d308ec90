/**
 * Claims proven by the TLS attestor, end to end: the real chain, devnode, dapp and api, the real attestor
 * process (Reclaim's attestor-core) and the api's prover processes, against local HTTPS providers with a
 * throwaway CA. Then what a forger would send straight to the InputBox: each tampered claim is rejected
 * by the dapp with its reason and leaves nothing behind.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { hexToString, zeroAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { contractProof } from "../../devnode/proofs.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectEvents } from "../../client/index.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { claimIdentifier, claimSignText, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import { deployAttestationGate } from "../support/gate.ts";
import { bearer, JSON_HEADERS, TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { startProviderServer, TLS_1_1_ONLY, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";

const field = "data.balance";
const bucketDefinition = { field, boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const schema = {
  provider: "http",
  flowType: "balance",
  domain: "localhost",
  bucketDefinitions: { [field]: { boundaries: bucketDefinition.boundaries, labels: bucketDefinition.labels } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor" as const,
};
const schemaId = schemaIdOf(schema);
const recipient = nacl.box.keyPair();

let pki: TestPki;
let provider: ProviderServer;
let legacy: ProviderServer;
let stack: TestStack;
let adminToken: string;
let userToken: string;

interface ApiAnswer {
  status: number;
  body: { success: boolean; data?: Record<string, unknown>; error?: { code: string; message: string; details?: Record<string, unknown> } };
}

async function call(method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${stack.urls.api}${path}`, {
    method,
    headers: { ...JSON_HEADERS, ...(token === undefined ? {} : bearer(token)) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as ApiAnswer["body"] };
}

function claimBody(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: "http", params: { url, method: "GET", headers: { authorization: "Bearer secret-token" } }, bucketDefinition, ...extra };
}

/** The create_attestation params the api sent for an attestation, read back from the InputBox payload. */
async function sentParams(inputIndex: number, item: number | null): Promise<Record<string, unknown>> {
  const verdict = await stack.client.waitForVerdict(inputIndex);
  const input = JSON.parse(hexToString(verdict.payload)) as { type: string; params: Record<string, unknown> };
  if (input.type === "batch") {
    const items = input.params.items as { params: Record<string, unknown> }[];
    return (items[item ?? 0] as { params: Record<string, unknown> }).params;
  }
  return input.params;
}

/** Signs `claim` as the local attestor would (its key is in DATA_DIR): a forger with the key's power. */
async function signAsAttestor(claim: TlsClaim, key: Hex): Promise<TlsProof> {
  const identifier = claimIdentifier(claim);
  const signed = { ...claim, identifier };
  const signature = await privateKeyToAccount(key).signMessage({ message: claimSignText(signed, identifier) });
  return { claim: signed, signature };
}

function withContext(claim: TlsClaim, change: (context: Record<string, unknown>) => void): TlsClaim {
  const context = JSON.parse(claim.context) as Record<string, unknown>;
  change(context);
  return { ...claim, context: JSON.stringify(context) };
}

async function ownerAttestationCount(owner: string): Promise<number> {
  const answer = await call("GET", `/api/core/attestations/${owner}`);
  return (answer.body.data as unknown as unknown[]).length;
}

beforeAll(async () => {
  pki = createTestPki();
  provider = await startProviderServer({ tls: pki.localhost });
  legacy = await startProviderServer({ tls: { ...pki.localhost, ...TLS_1_1_ONLY } });
  stack = await startStack({
    api: true,
    attestor: true,
    attestorCaFiles: pki.ca.certPath,
    env: { PROVIDER_ALLOWED_HOSTS: "localhost", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", ATTESTOR_PROVERS: "2" },
  });
  adminToken = await tokenFor("admin", stack.addresses.admin);
  userToken = await tokenFor("user", USER_A);
  expect((await call("POST", "/api/core/provider-schema", adminToken, schema)).body.data).toEqual({ schema_id: schemaId });
  const key = { publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" };
  expect((await call("POST", "/api/core/encryption-key", adminToken, key)).status).toBe(200);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await provider?.close();
  await legacy?.close();
  pki?.cleanup();
});

function attestorKey(): Hex {
  return readFileSync(join(stack.dataDir, "attestor-key"), "utf8").trim() as Hex;
}

describe("a schema that requires proof", () => {
  it("refuses claims while no attestor is registered: 502 ZKTLS_PROOF_FAILED with the reason", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
    const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/balance")));
    expect(answer.status).toBe(502);
    expect(answer.body.error?.code).toBe("ZKTLS_PROOF_FAILED");
    expect(answer.body.error?.details).toEqual({ reason: "no attestor is registered in the rollup (an admin registers one with set_tls_attestor)" });
  });

  it("an admin registers the attestor; anyone lists it", async () => {
    const address = privateKeyToAccount(attestorKey()).address.toLowerCase();
    const registered = await call("POST", "/api/core/attestors", adminToken, { address, name: "test attestor" });
    expect(registered).toMatchObject({ status: 200, body: { data: { address, enabled: true } } });
    const listed = await call("GET", "/api/core/attestors");
    expect(listed.body.data).toEqual([{ address, name: "test attestor", addedAt: expect.any(Number) }]);
    const asUser = await call("POST", "/api/core/attestors", userToken, { address });
    expect([asUser.status, asUser.body.error?.code]).toEqual([403, "AUTH_INSUFFICIENT"]);
  });

  it.each(["reveal", "zk"] as const)("a %s claim is recorded with its attestor, sealed, and checked by the dapp", async (mode) => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
    const events = await connectEvents(stack.urls.ws);
    const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/balance"), { proofMode: mode }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.data?.bucket).toBe("mid");
    const claimId = answer.body.data?.claimId as Hex;
    const attestor = privateKeyToAccount(attestorKey()).address.toLowerCase();
    // The WebSocket event names the attestor too (an extension of the specification's three fields).
    const event = await events.waitFor((e) => e.event === "attestation:created" && e.data.claimId === claimId);
    await events.close();
    expect(event.data).toEqual({ claimId, owner: USER_A.toLowerCase(), provider: "http", attestor });

    const view = await call("GET", `/api/core/attestation/${claimId}`);
    expect(view.body.data).toMatchObject({ claimId, bucket: "mid", owner: USER_A.toLowerCase(), schemaId, attestor });
    const rollup = await stack.inspect({ type: "attestation", params: { attestation_id: claimId } });
    expect(rollup.status).toBe("Accepted");

    // The secret header went to the provider and nowhere near the signed claim.
    expect(provider.requests.at(-1)?.headers.authorization).toBe("Bearer secret-token");
    const params = await sentParams(view.body.data?.inputIndex as number, view.body.data?.itemIndex as number | null);
    const proof = params.proof as TlsProof;
    expect(JSON.stringify(proof)).not.toContain("secret-token");
    expect(JSON.parse(proof.claim.context)).toMatchObject({ contextAddress: USER_A.toLowerCase(), contextMessage: schemaId, extractedParameters: { value: "512.5" } });
    expect("responseRedactions" in (JSON.parse(proof.claim.parameters) as object)).toBe(mode === "zk");
  }, 120_000);

  it("a claim can be followed in the api's log from its request id to its input and notice", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
    const response = await fetch(`${stack.urls.api}/api/core/claim`, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...bearer(userToken), "x-request-id": "trace-claim-1" },
      body: JSON.stringify(claimBody(provider.url("/balance"))),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("trace-claim-1");
    const { claimId } = ((await response.json()) as { data: { claimId: string } }).data;
    // The api's lines reach its log file through the stack's pipe: wait for the request's own line too.
    const traced = (): Record<string, unknown>[] =>
      stack
        .logs("api")
        .split("\n")
        .map((line) => line.slice(line.indexOf("{")))
        .filter((line) => line.includes('"reqId":"trace-claim-1"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (let tries = 0; traced().length < 2 && tries < 50; tries++) await new Promise((r) => setTimeout(r, 100));
    const lines = traced();
    const attestor = privateKeyToAccount(attestorKey()).address.toLowerCase();
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "claim recorded", claimId, inputIndex: expect.any(Number), txHash: expect.stringMatching(/^0x/), attestor, mode: "reveal" }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: "request", route: "/api/core/claim", status: 200 }));
  }, 60_000);

  describe("what the attestor path refuses, and why", () => {
    it("a provider that only speaks TLS 1.1: ZKTLS_PROOF_FAILED, TLS 1.2 or later required", async () => {
      legacy.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
      const answer = await call("POST", "/api/core/claim", userToken, claimBody(legacy.url("/balance")));
      expect([answer.status, answer.body.error?.code]).toEqual([502, "ZKTLS_PROOF_FAILED"]);
      expect(String(answer.body.error?.details?.reason)).toContain("TLS 1.2 or later is required");
    });

    it("a body without the field: ZKTLS_PROOF_FAILED, extraction failed", async () => {
      provider.route("/empty", { kind: "json", value: { data: { currency: "EUR" } } });
      const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/empty")));
      expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([
        502,
        "ZKTLS_PROOF_FAILED",
        { reason: "extraction failed: no value at data.balance" },
      ]);
    });

    it("the provider refusing the credentials stays PROVIDER_AUTH_FAILED", async () => {
      provider.route("/locked", { kind: "status", status: 401 });
      const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/locked")));
      expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([502, "PROVIDER_AUTH_FAILED", { provider: "http", status: 401 }]);
    });

    it("plain http cannot be proven: INVALID_PARAMETER", async () => {
      const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/balance").replace("https:", "http:")));
      expect([answer.status, answer.body.error?.code]).toEqual([400, "INVALID_PARAMETER"]);
    });

    it("the attestor down: ZKTLS_PROOF_FAILED, attestor unreachable; nothing is recorded", async () => {
      const before = await ownerAttestationCount(USER_A);
      await stack.kill("attestor");
      try {
        provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
        const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/balance")));
        expect([answer.status, answer.body.error?.code]).toEqual([502, "ZKTLS_PROOF_FAILED"]);
        expect(String(answer.body.error?.details?.reason)).toMatch(/^attestor unreachable: /);
        expect(await ownerAttestationCount(USER_A)).toBe(before);
      } finally {
        await stack.start("attestor");
      }
    });
  });
});

describe("on the base layer", () => {
  it("the consumer contract records a proven attestation with its attestor, and refuses it without", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
    const answer = await call("POST", "/api/core/claim", userToken, claimBody(provider.url("/balance")));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const claimId = answer.body.data?.claimId as Hex;
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    const proof = (await call("GET", `/api/core/attestation/${claimId}/proof`)).body.data as {
      applicationAddress: Address;
      proof: { validity: Parameters<typeof contractProof>[0]; context: Hex };
    };
    const { address, abi, wallet, reader } = await deployAttestationGate(stack, proof.applicationAddress);
    const attestor = privateKeyToAccount(attestorKey()).address;
    const attestation = { claimId, owner: USER_A, provider: "http", schemaId, field, bucket: "mid", attestor };
    const record = (a: typeof attestation) =>
      ({ address, abi, functionName: "record", args: [a, contractProof(proof.proof.validity, proof.proof.context)] }) as const;
    // Without its attestor the notice bytes differ, so the proof does not hold for them.
    await expect(reader.simulateContract({ ...record({ ...attestation, attestor: zeroAddress }), account: wallet.account })).rejects.toThrow(/reverted/);
    const hash = await wallet.writeContract({ ...record(attestation), chain: null });
    expect((await reader.waitForTransactionReceipt({ hash })).status).toBe("success");
    const recorded = (await reader.readContract({ address, abi, functionName: "attestationOf", args: [USER_A, schemaId] })) as { attestor: Address };
    expect(recorded.attestor.toLowerCase()).toBe(attestor.toLowerCase());
  }, 120_000);
});

describe("claims sent straight to the InputBox", () => {
  let genuine: { params: Record<string, unknown>; proof: TlsProof };

  beforeAll(async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
    // Owned by USER_B this time: the forged inputs below are checked against a fresh owner's count.
    const answer = await call("POST", "/api/core/claim", await tokenFor("user", USER_B), claimBody(provider.url("/balance")));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const view = await call("GET", `/api/core/attestation/${answer.body.data?.claimId as string}`);
    const params = await sentParams(view.body.data?.inputIndex as number, view.body.data?.itemIndex as number | null);
    genuine = { params, proof: params.proof as TlsProof };
  }, 120_000);

  async function sendAttestation(params: Record<string, unknown>): Promise<{ status: string; report: unknown }> {
    // Account #0 is the api's wallet, an admin: it holds the attestor role, as the api does.
    const verdict = await stack.send({ type: "create_attestation", params });
    const report = verdict.reports[0] === undefined ? undefined : (JSON.parse(hexToString(verdict.reports[0])) as unknown);
    return { status: verdict.status, report };
  }

  const forgeries: [string, (key: Hex) => Promise<Record<string, unknown>>, RegExp][] = [
    [
      "a replayed claim (the same input again)",
      async () => genuine.params,
      /^proof: this claim was already used by attestation 0x[0-9a-f]{64}$/,
    ],
    [
      "a tampered value, signature left as it was",
      async () => ({ ...genuine.params, proof: { ...genuine.proof, claim: withContext(genuine.proof.claim, (c) => ((c.extractedParameters as Record<string, string>).value = "5000")) } }),
      /^proof: /,
    ],
    [
      "a tampered signature",
      async () => {
        const s = genuine.proof.signature;
        const flipped = `${s.slice(0, 10)}${s[10] === "0" ? "1" : "0"}${s.slice(11)}` as Hex;
        return { ...genuine.params, proof: { ...genuine.proof, signature: flipped } };
      },
      /^proof: (signed by 0x[0-9a-f]{40}, which is not a registered attestor|the signature does not recover)$/,
    ],
    [
      "a claim signed by a key that is not a registered attestor",
      async () => ({ ...genuine.params, proof: await signAsAttestor({ ...genuine.proof.claim, timestampS: genuine.proof.claim.timestampS + 1 }, `0x${"11".repeat(32)}`) }),
      /^proof: signed by 0x[0-9a-f]{40}, which is not a registered attestor$/,
    ],
    [
      "another domain, signed by the attestor's key",
      async (key) => {
        const parameters = genuine.proof.claim.parameters.replace("https://localhost:", "https://127.0.0.1:");
        return { ...genuine.params, proof: await signAsAttestor({ ...genuine.proof.claim, parameters }, key) };
      },
      /^proof: the claim names host 127\.0\.0\.1, the schema's domain is localhost$/,
    ],
    [
      "a bucket the signed value is not in, signed by the attestor's key",
      async (key) => ({
        ...genuine.params,
        bucket_values: { [field]: "high" },
        proof: await signAsAttestor({ ...genuine.proof.claim, timestampS: genuine.proof.claim.timestampS + 2 }, key),
      }),
      /^proof: the signed value falls in bucket "mid", not "high"$/,
    ],
    [
      "a claim made for another owner, signed by the attestor's key",
      async (key) => ({ ...genuine.params, owner: USER_A.toLowerCase(), proof: await signAsAttestor({ ...genuine.proof.claim, timestampS: genuine.proof.claim.timestampS + 3 }, key) }),
      /^proof: the claim was made for another owner$/,
    ],
  ];

  it.each(forgeries)("%s is rejected with its reason and leaves nothing", async (_, forge, message) => {
    const before = await ownerAttestationCount(USER_B);
    const tampered = await forge(attestorKey());
    const { status, report } = await sendAttestation(tampered);
    expect(status).toBe("REJECTED");
    const error = (report as { error: { code: string; message: string } }).error;
    expect(error.message).toMatch(message);
    expect(await ownerAttestationCount(USER_B)).toBe(before);
  });
});
