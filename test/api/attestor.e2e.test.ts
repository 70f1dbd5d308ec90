/**
 * Claims proven by TLS attestors, end to end: the real chain, devnode, dapp and api, two real attestor
 * processes (Reclaim's attestor-core with our check of what it signs), the api's prover processes and
 * `npm run prove` on the user's side, against a local HTTPS provider with a throwaway CA whose answer
 * needs a secret header. What is shown: the bucket is proven and the value is nowhere the public can read
 * it (calldata, notices, reports, the node's and the dapp's files, the readers, the logs); the api never
 * receives the provider's header when the user proves; a schema with a quorum of two takes two signatures
 * and refuses one; and what a forger sends straight to the InputBox is rejected without a trace.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getAddress, hexToString, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectEvents, type BatchProof } from "../../client/index.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { binRange } from "../../common/range-pattern.ts";
import { openSealed } from "../../common/seal.ts";
import { namedContent } from "../../common/sealed-content.ts";
import { boxKeyPairOf, openAttestedData } from "../../client/keys.ts";
import { canonicalJson } from "../../common/canonical.ts";
import { claimParameters, type TlsProof } from "../../common/tls-claim.ts";
import { bearer, JSON_HEADERS, TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { batchOf, deployAttestationGate, deployAttestationRegistry, recordArgs } from "../support/gate.ts";
import { startProviderServer, TLS_1_1_ONLY, type ProviderServer } from "../support/provider-server.ts";
import { startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { field, definition, bucketDefinition, schema, quorumSchema, schemaId, quorumSchemaId, recipient, VALUE, VALUE_HEX, SENTINEL, USER_B_KEY, callApi, signAs, runProjectScript, attestorKeyIn, filesUnder, type ApiAnswer, type ProjectScript } from "./attestor-e2e-support.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";
import { uniquePerAccountTests } from "./attestor-e2e-unique.ts";

let pki: TestPki;
let provider: ProviderServer;
let legacy: ProviderServer;
let stack: TestStack;
let proxy: RecordingProxy;
let adminToken: string;
let userToken: string;

/** The api of this stack, called as a client would. */
const call = (method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer> => callApi(stack.urls.api, method, path, token, body);

function claimBody(path = "/balance", extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: "http", params: { url: provider.url(path), method: "GET", headers: { authorization: SENTINEL } }, bucketDefinition, schemaId, ...extra };
}

/** The create_attestation params of an attestation, read back from its input's payload. */
async function sentParams(claimId: string): Promise<Record<string, unknown>> {
  const view = await call("GET", `/api/core/attestation/${claimId}`);
  const verdict = await stack.client.waitForVerdict(view.body.data?.inputIndex as number);
  const input = JSON.parse(hexToString(verdict.payload)) as { type: string; params: Record<string, unknown> };
  if (input.type === "batch") {
    const items = input.params.items as { params: Record<string, unknown> }[];
    return (items[(view.body.data?.itemIndex as number | null) ?? 0] as { params: Record<string, unknown> }).params;
  }
  return input.params;
}

const attestorKey = (k: number): Hex => attestorKeyIn(stack.dataDir, k);
const attestorAddress = (k: number): Address => privateKeyToAccount(attestorKey(k)).address.toLowerCase() as Address;
const ownerAttestationCount = async (owner: string): Promise<number> => ((await call("GET", `/api/core/attestations/${owner}`)).body.data as unknown as unknown[]).length;

/** `npm run <script>` as a user runs it, against this stack. */
const script = (name: ProjectScript, args: string[]) => runProjectScript(name, args, { ROLLUP_URL: stack.urls.node, RPC_URL: stack.urls.rpc, ATTESTOR_URL: stack.urls.attestors.join(","), ATTESTOR_CA_FILES: pki.ca.certPath });
const prove = (args: string[]) => script("prove", args);

beforeAll(async () => {
  pki = createTestPki();
  provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/balance", {
    kind: "handler",
    handle(req, res) {
      if (req.headers.authorization !== SENTINEL) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"bad credentials"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(`{"data":{"balance":${VALUE},"currency":"EUR"}}`);
    },
  });
  legacy = await startProviderServer({ tls: { ...pki.localhost, ...TLS_1_1_ONLY } });
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    attestor: true,
    attestors: 2,
    attestorCaFiles: pki.ca.certPath,
    env: { PROVIDER_ALLOWED_HOSTS: "localhost", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", ATTESTOR_PROVERS: "2", LOG_LEVEL: "info" },
  });
  proxy = await startRecordingProxy(Number(new URL(stack.urls.api).port));
  adminToken = await tokenFor("admin", stack.addresses.admin);
  userToken = await tokenFor("user", USER_A);
  for (const s of [schema, quorumSchema]) expect((await call("POST", "/api/core/provider-schema", adminToken, s)).body.data).toEqual({ schema_id: schemaIdOf(s) });
  const key = { publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" };
  expect((await call("POST", "/api/core/encryption-key", adminToken, key)).status).toBe(200);
}, 240_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  await provider?.close();
  await legacy?.close();
  pki?.cleanup();
});

describe("a schema that requires proof", () => {
  it("refuses claims while no attestor is registered: 502 ZKTLS_PROOF_FAILED with the reason", async () => {
    const answer = await call("POST", "/api/core/claim", userToken, claimBody());
    expect(answer.status).toBe(502);
    expect(answer.body.error?.code).toBe("ZKTLS_PROOF_FAILED");
    expect(answer.body.error?.details).toEqual({ reason: "no attestor is registered in the rollup (an admin registers one with set_tls_attestor)" });
  });

  it("an admin registers both attestors; anyone lists them", async () => {
    for (const k of [1, 2]) {
      const registered = await call("POST", "/api/core/attestors", adminToken, { address: attestorAddress(k), name: `attestor ${k}` });
      expect(registered).toMatchObject({ status: 200, body: { data: { address: attestorAddress(k), enabled: true } } });
    }
    const listed = await call("GET", "/api/core/attestors");
    expect(listed.body.data).toEqual([
      { address: attestorAddress(1), name: "attestor 1", addedAt: expect.any(Number) },
      { address: attestorAddress(2), name: "attestor 2", addedAt: expect.any(Number) },
    ]);
    const asUser = await call("POST", "/api/core/attestors", userToken, { address: attestorAddress(1) });
    expect([asUser.status, asUser.body.error?.code]).toEqual([403, "AUTH_INSUFFICIENT"]);
  });

  it.each(["reveal", "zk"] as const)("a %s claim through the api proves the bucket; its input holds the range, never the value", async (mode) => {
    const events = await connectEvents(stack.urls.ws);
    const answer = await call("POST", "/api/core/claim", userToken, claimBody("/balance", { proofMode: mode }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.data?.bucket).toBe("high");
    const claimId = answer.body.data?.claimId as Hex;
    const event = await events.waitFor((e) => e.event === "attestation:created" && e.data.claimId === claimId);
    await events.close();
    expect(event.data).toEqual({ claimId, owner: USER_A.toLowerCase(), provider: "http", attestor: attestorAddress(1) });
    const view = await call("GET", `/api/core/attestation/${claimId}`);
    expect(view.body.data).toMatchObject({ claimId, bucket: "high", owner: USER_A.toLowerCase(), schemaId, attestor: attestorAddress(1), attestors: [attestorAddress(1)] });

    const params = await sentParams(claimId);
    const [proof] = params.proofs as TlsProof[];
    const range = binRange(definition, "high");
    if (proof === undefined || range === undefined) throw new Error("no proof");
    expect(JSON.parse(proof.claim.parameters)).toEqual(claimParameters({ url: provider.url("/balance"), method: "GET", field, range }));
    expect(JSON.parse(proof.claim.context)).not.toHaveProperty("extractedParameters");
    expect(JSON.stringify(params)).not.toContain(VALUE);
    expect(JSON.stringify(params)).not.toContain("sentinel");
    // The sealed data holds the value, for the registered key's holder only.
    expect(namedContent(openSealed(params.encrypted_data as string, recipient.secretKey), { dataKeys: ["data.currency"], bucketFields: [field] })).toEqual({ ok: true, value: { "data.currency": "EUR", [field]: 4321.987 } });
  }, 120_000);

  it("a schema that requires two attestors: the api proves through both, in two TLS sessions", async () => {
    const answer = await call("POST", "/api/core/claim", userToken, claimBody("/balance", { schemaId: quorumSchemaId, proofMode: "zk" }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const claimId = answer.body.data?.claimId as Hex;
    expect((await call("GET", `/api/core/attestation/${claimId}`)).body.data).toMatchObject({ attestors: [attestorAddress(1), attestorAddress(2)] });
    const proofs = (await sentParams(claimId)).proofs as TlsProof[];
    expect(proofs).toHaveLength(2);
    expect(new Set(proofs.map((p) => JSON.parse(p.claim.context).nonce)).size).toBe(2);
    expect(provider.requests.filter((r) => r.path === "/balance").length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("a claim can be followed in the api's log from its request id to its input and notice", async () => {
    const response = await fetch(`${stack.urls.api}/api/core/claim`, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...bearer(userToken), "x-request-id": "trace-claim-1" },
      body: JSON.stringify(claimBody()),
    });
    expect(response.status).toBe(200);
    const { claimId } = ((await response.json()) as { data: { claimId: string } }).data;
    const traced = (): Record<string, unknown>[] =>
      stack
        .logs("api")
        .split("\n")
        .map((line) => line.slice(line.indexOf("{")))
        .filter((line) => line.includes('"reqId":"trace-claim-1"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (let tries = 0; traced().length < 2 && tries < 50; tries++) await new Promise((r) => setTimeout(r, 100));
    const lines = traced();
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "claim recorded", claimId, inputIndex: expect.any(Number), txHash: expect.stringMatching(/^0x/), attestors: [attestorAddress(1)], mode: "reveal" }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: "request", route: "/api/core/claim", status: 200 }));
  }, 60_000);

  describe("what the attestor path refuses, and why", () => {
    it("a provider that only speaks TLS 1.1: ZKTLS_PROOF_FAILED, TLS 1.2 or later required", async () => {
      legacy.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
      const answer = await call("POST", "/api/core/claim", userToken, { ...claimBody(), params: { url: legacy.url("/balance"), method: "GET", headers: {} } });
      expect([answer.status, answer.body.error?.code]).toEqual([502, "ZKTLS_PROOF_FAILED"]);
      expect(String(answer.body.error?.details?.reason)).toContain("TLS 1.2 or later is required");
    });

    it("a body without the field: ZKTLS_PROOF_FAILED, extraction failed", async () => {
      provider.route("/empty", { kind: "json", value: { data: { currency: "EUR" } } });
      const answer = await call("POST", "/api/core/claim", userToken, claimBody("/empty"));
      expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([502, "ZKTLS_PROOF_FAILED", { reason: "extraction failed: no value at data.balance" }]);
    });

    it("a value outside every bucket: PROVIDER_INVALID_RESPONSE, without the value", async () => {
      provider.route("/negative", { kind: "json", value: { data: { balance: -12.5 } } });
      const answer = await call("POST", "/api/core/claim", userToken, claimBody("/negative"));
      expect([answer.status, answer.body.error?.code]).toEqual([502, "PROVIDER_INVALID_RESPONSE"]);
      expect(JSON.stringify(answer.body)).not.toContain("12.5");
    });

    it("the provider refusing the credentials stays PROVIDER_AUTH_FAILED", async () => {
      const answer = await call("POST", "/api/core/claim", userToken, { ...claimBody(), params: { url: provider.url("/balance"), method: "GET", headers: { authorization: "Bearer wrong" } } });
      expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([502, "PROVIDER_AUTH_FAILED", { provider: "http", status: 401 }]);
    });

    it("plain http cannot be proven: INVALID_PARAMETER", async () => {
      const answer = await call("POST", "/api/core/claim", userToken, { ...claimBody(), params: { url: provider.url("/balance").replace("https:", "http:"), method: "GET", headers: {} } });
      expect([answer.status, answer.body.error?.code]).toEqual([400, "INVALID_PARAMETER"]);
    });

    it("the attestor down: ZKTLS_PROOF_FAILED, attestor unreachable; nothing is recorded", async () => {
      const before = await ownerAttestationCount(USER_A);
      await stack.kill("attestor");
      try {
        const answer = await call("POST", "/api/core/claim", userToken, claimBody());
        expect([answer.status, answer.body.error?.code]).toEqual([502, "ZKTLS_PROOF_FAILED"]);
        expect(String(answer.body.error?.details?.reason)).toMatch(/^attestor unreachable: /);
        expect(await ownerAttestationCount(USER_A)).toBe(before);
      } finally {
        await stack.start("attestor");
      }
    });
  });
});

describe("proving on the user's side (npm run prove)", () => {
  it("through the api: recorded, and the api received neither the provider's header nor the value", async () => {
    const token = await tokenFor("user", USER_B);
    const before = proxy.received().length;
    const run = await prove(["--url", provider.url("/balance"), "--schema", schemaId, "--header", `Authorization: ${SENTINEL}`, "--token", token, "--api", proxy.url]);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { claimId: Hex; bucket: string; via: string; attestors: string[] };
    expect(out).toMatchObject({ bucket: "high", via: "api", attestors: [attestorAddress(1)] });
    expect((await call("GET", `/api/core/attestation/${out.claimId}`)).body.data).toMatchObject({ owner: USER_B.toLowerCase(), bucket: "high", attestors: [attestorAddress(1)] });
    // Everything the api was sent on this run, and everything it logged.
    const received = proxy.received().subarray(before).toString("latin1");
    expect(received).toContain("/api/core/claim/proven");
    for (const secret of ["sentinel-5b1e9c0d", VALUE, VALUE_HEX]) {
      expect(received).not.toContain(secret);
      expect(stack.logs("api")).not.toContain(secret);
    }
  }, 120_000);

  it("straight to the InputBox from the owner's own wallet, without any role", async () => {
    const run = await prove(["--url", provider.url("/balance"), "--schema", schemaId, "--header", `Authorization: ${SENTINEL}`, "--mode", "reveal", "--key", USER_B_KEY]);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { claimId: Hex; via: string };
    expect(out.via).toBe("inputbox");
    const view = await stack.inspect({ type: "attestation", params: { attestation_id: out.claimId } });
    expect(view.status).toBe("Accepted");
    const attestation = JSON.parse(hexToString(view.reports[0]?.payload as Hex)) as { owner: string; bucket_values: Record<string, string> };
    expect(attestation).toMatchObject({ owner: USER_B.toLowerCase(), bucket_values: { [field]: "high" } });
  }, 120_000);

  it("a schema with a quorum of two: two attestors' claims are accepted, one is refused", async () => {
    const run = await prove(["--url", provider.url("/balance"), "--schema", quorumSchemaId, "--header", `Authorization: ${SENTINEL}`, "--key", USER_B_KEY]);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { claimId: Hex; attestors: string[] };
    expect(out.attestors).toEqual([attestorAddress(1), attestorAddress(2)]);
    const params = await sentParams(out.claimId);
    const one = { ...params, proofs: [(params.proofs as TlsProof[])[0]] };
    const before = await ownerAttestationCount(USER_B);
    const verdict = await stack.send({ type: "create_attestation", params: one }, USER_B as Address);
    expect(verdict.status).toBe("REJECTED");
    expect(JSON.parse(hexToString(verdict.reports[0] as Hex))).toEqual({
      error: { code: "PROOF_REJECTED", message: `proof: schema ${quorumSchemaId} requires claims from 2 attestors, got 1` },
    });
    expect(await ownerAttestationCount(USER_B)).toBe(before);
  }, 120_000);

  it("failures are reported with the specification's codes", async () => {
    const wrong = await prove(["--url", provider.url("/balance"), "--schema", schemaId, "--header", "Authorization: Bearer wrong", "--key", USER_B_KEY]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/^PROVIDER_AUTH_FAILED: provider refused the request \(HTTP 401\) \{"provider":"http","status":401\}/);
    const empty = await prove(["--url", provider.url("/empty"), "--schema", schemaId, "--key", USER_B_KEY]);
    expect(empty.status).toBe(1);
    expect(empty.stderr).toMatch(/^ZKTLS_PROOF_FAILED: zkTLS proof failed: extraction failed: no value at data\.balance/);
  }, 120_000);
});

describe("a proven schema that seals to the owner (docs/consent.md)", () => {
  const sealedSchema = { ...schema, flowType: "balance-owner-sealed", sealing: "owner" as const };
  const sealedSchemaId = schemaIdOf(sealedSchema);
  let secretFile: string;
  beforeAll(async () => {
    expect((await call("POST", "/api/core/provider-schema", adminToken, sealedSchema)).body.data).toEqual({ schema_id: sealedSchemaId });
    secretFile = join(stack.dataDir, "user-b-owner.secret");
  });

  it("the user seals on its side for its own key (npm run consent -- key), and opens it with npm run open; the admin's key does not", async () => {
    const missing = await prove(["--url", provider.url("/balance"), "--schema", sealedSchemaId, "--header", `Authorization: ${SENTINEL}`, "--key", USER_B_KEY]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`OWNER_KEY_MISSING: schema ${sealedSchemaId} seals data to its owner's key, and ${USER_B.toLowerCase()} has registered none`);

    const token = await tokenFor("user", USER_B);
    const key = await script("consent", ["key", "--key", USER_B_KEY, "--secret-file", secretFile, "--token", token, "--api", stack.urls.api]);
    expect(key.status, key.stderr).toBe(0);
    expect(key.stdout).toMatch(new RegExp(`^key 0x[0-9a-f]{64} registered for ${USER_B}`));
    expect(key.stderr).toContain(`its secret key is in ${secretFile}`);

    const run = await prove(["--url", provider.url("/balance"), "--schema", sealedSchemaId, "--header", `Authorization: ${SENTINEL}`, "--key", USER_B_KEY]);
    expect(run.status, run.stderr).toBe(0);
    const { claimId } = JSON.parse(run.stdout) as { claimId: Hex };
    const opened = await script("open", [claimId, "--token", token, "--secret-file", secretFile, "--api", stack.urls.api]);
    expect(opened.status, opened.stderr).toBe(0);
    expect(JSON.parse(opened.stdout)).toEqual({ claimId, owner: USER_B.toLowerCase(), schemaId: sealedSchemaId, data: { "data.currency": "EUR", [field]: Number(VALUE) } });

    // The admin's registered key opens the specification's sealing, not this one.
    const sealed = (await call("GET", `/api/core/attestation/${claimId}/data`, token)).body.data as { encrypted_data: Hex; data?: unknown };
    expect(sealed.data).toBeUndefined();
    expect(() => openAttestedData(sealed.encrypted_data, boxKeyPairOf(Buffer.from(recipient.secretKey).toString("base64")))).toThrow();
    // Another user's token gets no key to it.
    const stranger = await script("open", [claimId, "--token", userToken, "--secret-file", secretFile, "--api", stack.urls.api]);
    expect(stranger.status).toBe(1);
    expect(stranger.stderr).toMatch(/^NO_GRANT_FOUND: /);
  }, 180_000);
});

describe("the value, searched for where the public can read", () => {
  it("is in no calldata, notice, report, reader answer, file of the node or the dapp, or log", async () => {
    const traces = [VALUE, VALUE_HEX];
    // Calldata: every transaction the chain holds.
    const chain = stack.client.publicClient;
    const latest = await chain.getBlockNumber();
    let transactions = 0;
    for (let n = 0n; n <= latest; n++) {
      const block = await chain.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        transactions++;
        for (const trace of traces) expect(tx.input, `transaction ${tx.hash}`).not.toContain(trace);
      }
    }
    expect(transactions).toBeGreaterThan(10);
    // The reader: every input's payload, notices and reports.
    const read = await stack.graphql<unknown>("{ inputs(first: 1000) { edges { node { index payload notices { edges { node { payload } } } reports { edges { node { payload } } } } } } }");
    const readText = JSON.stringify(read);
    for (const trace of traces) expect(readText).not.toContain(trace);
    const decoded = (readText.match(/0x[0-9a-f]+/g) ?? []).map((hex) => hexToString(hex as Hex));
    expect(decoded.filter((text) => text.includes('"proofs"')).length).toBeGreaterThan(5);
    for (const text of decoded) for (const trace of [VALUE, "sentinel"]) expect(text).not.toContain(trace);
    // The rollup's answers about every attestation.
    for (const owner of [USER_A, USER_B]) {
      const envelope = await stack.inspect({ type: "attestations_by_owner", params: { owner } });
      const answer = hexToString(envelope.reports[0]?.payload as Hex);
      expect(answer).toContain("attestation_id");
      for (const trace of traces) expect(answer).not.toContain(trace);
    }
    // The node's record, the dapp's database, the attestors' keys, and every log (info level) of every process.
    const files = filesUnder(stack.dataDir);
    expect(files.some((f) => f.endsWith(".log"))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file).toString("latin1");
      for (const trace of [...traces, "sentinel-5b1e9c0d"]) expect(bytes, file).not.toContain(trace);
    }
  }, 120_000);
});

describe("on the base layer", () => {
  it("the registry records a proven attestation with its attestor, and refuses it without", async () => {
    const answer = await call("POST", "/api/core/claim", userToken, claimBody());
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const claimId = answer.body.data?.claimId as Hex;
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    const found = (await call("GET", `/api/core/attestation/${claimId}/batch`)).body.data as BatchProof;
    const registry = await deployAttestationRegistry(stack, found.applicationAddress as Address);
    const gate = await deployAttestationGate(stack, registry.address);
    expect(batchOf(found).kinds[0]).toMatchObject({ schemaId, provider: "http", field, bucket: "high", attestors: [attestorAddress(1)] });
    const [notice, proof] = recordArgs(found);
    // Without its attestor the notice's bytes differ, so the proof does not hold for them.
    const record = (bytes: Hex) => ({ address: registry.address, abi: registry.abi, functionName: "record", args: [bytes, proof], account: registry.wallet.account }) as const;
    await expect(registry.reader.simulateContract(record(notice.replace(attestorAddress(1).slice(2), "00".repeat(20)) as Hex))).rejects.toThrow(/ProofRejected/);
    expect((await registry.reader.waitForTransactionReceipt({ hash: await registry.wallet.writeContract({ ...record(notice), chain: null }) })).status).toBe("success");
    const recorded = (await registry.reader.readContract({ address: gate.address, abi: gate.abi, functionName: "attestationOf", args: [USER_A, schemaId] })) as { claimId: Hex; attestor: Address; attestorCount: number };
    expect(recorded).toMatchObject({ claimId, attestor: getAddress(attestorAddress(1)), attestorCount: 1 });
  }, 120_000);
});

describe("claims sent straight to the InputBox", () => {
  let genuine: { params: Record<string, unknown>; proof: TlsProof };

  beforeAll(async () => {
    // Owned by USER_B: the forged inputs below are checked against its count.
    const answer = await call("POST", "/api/core/claim", await tokenFor("user", USER_B), claimBody());
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const params = await sentParams(answer.body.data?.claimId as string);
    genuine = { params, proof: (params.proofs as TlsProof[])[0] as TlsProof };
  }, 120_000);

  /** Parameters for another range or field, signed with the attestor's own key: what a corrupt attestor could sign. */
  async function signedWith(change: { range?: { lo: string; hi: string | null; hiInclusive: boolean }; field?: string; url?: string }): Promise<TlsProof> {
    const parameters = canonicalJson(
      claimParameters({ url: change.url ?? provider.url("/balance"), method: "GET", field: change.field ?? field, range: change.range ?? (binRange(definition, "high") as NonNullable<ReturnType<typeof binRange>>) }),
    );
    return signAs({ ...genuine.proof.claim, parameters, timestampS: genuine.proof.claim.timestampS + 1 }, attestorKey(1));
  }

  const forgeries: [string, () => Promise<Record<string, unknown>>, RegExp, number?][] = [
    ["a replayed claim (the same input again)", async () => genuine.params, /^proof: this claim was already used by attestation 0x[0-9a-f]{64}$/],
    [
      "a widened range, signature left as it was",
      async () => {
        const wider = canonicalJson(claimParameters({ url: provider.url("/balance"), method: "GET", field, range: { lo: "0", hi: "10000", hiInclusive: true } }));
        return { ...genuine.params, proofs: [{ ...genuine.proof, claim: { ...genuine.proof.claim, parameters: wider } }] };
      },
      /^proof: the claim's identifier does not match its content$/,
    ],
    [
      "a tampered signature",
      async () => {
        const s = genuine.proof.signature;
        return { ...genuine.params, proofs: [{ ...genuine.proof, signature: `${s.slice(0, 10)}${s[10] === "0" ? "1" : "0"}${s.slice(11)}` }] };
      },
      /^proof: (signed by 0x[0-9a-f]{40}, which is not a registered attestor|the signature does not recover)$/,
    ],
    [
      "a claim signed by a key that is not a registered attestor",
      async () => ({ ...genuine.params, proofs: [await signAs({ ...genuine.proof.claim, timestampS: genuine.proof.claim.timestampS + 1 }, `0x${"11".repeat(32)}`)] }),
      /^proof: signed by 0x[0-9a-f]{40}, which is not a registered attestor$/,
    ],
    ["a wider range, signed by the attestor's key", async () => ({ ...genuine.params, proofs: [await signedWith({ range: { lo: "100", hi: "10000", hiInclusive: true } })] }), /^proof: the claim does not prove that data\.balance lies in bucket "high"$/],
    ["a shifted range, signed by the attestor's key", async () => ({ ...genuine.params, proofs: [await signedWith({ range: { lo: "1500", hi: "10500", hiInclusive: true } })] }), /^proof: the claim does not prove that data\.balance lies in bucket "high"$/],
    ["a pattern over another key, signed by the attestor's key", async () => ({ ...genuine.params, proofs: [await signedWith({ field: "data.limit" })] }), /^proof: the claim is not about field data\.balance$/],
    ["another domain, signed by the attestor's key", async () => ({ ...genuine.params, proofs: [await signedWith({ url: provider.url("/balance").replace("localhost", "127.0.0.1") })] }), /^proof: the claim names host 127\.0\.0\.1, the schema's domain is localhost$/],
    ["a bucket the claim does not prove", async () => ({ ...genuine.params, bucket_values: { [field]: "mid" } }), /^proof: the claim does not prove that data\.balance lies in bucket "mid"$/],
    ["a claim made for another owner, relayed by the admin", async () => ({ ...genuine.params, owner: USER_A.toLowerCase(), proofs: [await signedWith({})] }), /^proof: the claim was made for another owner$/],
    [
      "a claim relayed for another owner by someone without a role",
      async () => ({ ...genuine.params, proofs: [await signedWith({})] }),
      // Hardhat account #1: a wallet with no role in the rollup.
      new RegExp(`^sender 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 does not hold the attestor role and is not the owner ${USER_B.toLowerCase()} it names$`),
      1,
    ],
  ];

  it.each(forgeries)("%s is rejected with its reason and leaves nothing", async (_, forge, message, sender) => {
    const before = await ownerAttestationCount(USER_B);
    const verdict = await stack.send({ type: "create_attestation", params: await forge() }, sender ?? 0);
    expect(verdict.status).toBe("REJECTED");
    const error = (JSON.parse(hexToString(verdict.reports[0] as Hex)) as { error: { code: string; message: string } }).error;
    expect(error.message).toMatch(message);
    expect(await ownerAttestationCount(USER_B)).toBe(before);
  });
});

uniquePerAccountTests({ call, claimBody, attestorKey, attestorAddress, ownerAttestationCount, providerUrl: (path) => provider.url(path), stack: () => stack, adminToken: () => adminToken, userToken: () => userToken });
