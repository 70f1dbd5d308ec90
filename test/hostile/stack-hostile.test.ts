/**
 * Hostile input against the real stack (hardhat chain, devnode, dapp and api as processes):
 * - inspect queries fuzzed through the devnode's real HTTP interface (bad percent-encoding, non-JSON,
 *   wrong parameter types, oversized), and a sample of hostile advance payloads through the real chain;
 * - SSRF attempts through the api's claim endpoint (loopback, private, link-local, IP spellings, a DNS
 *   name resolving to loopback, redirects to them), owner spoofing on grants and revokes;
 * - header floods, half-open connections, WebSocket floods and oversized frames on the api's real port;
 * - no secret in any log.
 * After each part every process is still up and the dapp's state digest is what the accepted inputs made.
 * The schema and claim bodies and the SSRF targets are in stack-hostile-support.ts.
 */
import fc from "fast-check";
import nacl from "tweetnacl";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { DEFAULT_PRIVATE_KEY } from "../../api/config.ts";
import { AttestationClient, connectEvents, type EventStream } from "../../client/index.ts";
import { hexToUtf8, jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { QUERY_TYPES, type InspectEnvelope } from "../../common/wire.ts";
import { failure, TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { startApiOn } from "../support/api-in-process.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { closeAgent, idleHalfRequests, rawExchange, rawRequest } from "./http.ts";
import { HARDHAT_ADDRESSES } from "./mixed-log.ts";
import { errorOf, fcOptions, figure, fileStateDigest, nested } from "./support.ts";
import { claimFor, decodeURIComponentLoose, DNS_LOOPBACK, schemaFor, SSRF_HOSTS } from "./stack-hostile-support.ts";

let stack: TestStack;
let provider: ProviderServer;
let events: EventStream | undefined;
let dbPath: string;
let userA: AttestationClient;
let userB: AttestationClient;
let adminClient: AttestationClient;
const PROVIDER_SECRET = "provider-credential-5d1c0ffee";
const tokens: string[] = [];

function expectAllUp(): void {
  for (const piece of stack.pieces) expect([piece, stack.isRunning(piece)]).toEqual([piece, true]);
}

beforeAll(async () => {
  provider = await startProviderServer();
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    // The TLS attestor is a piece of the stack too: it must stay up, and its log hold no secret.
    attestor: true,
    env: {
      JWT_SECRET: TEST_JWT_SECRET,
      // Only the provider's name is trusted; every IP spelling of loopback must be refused.
      PROVIDER_ALLOWED_HOSTS: "localhost",
      RATE_LIMITS: "off",
      NOTICE_POLL_MS: "100",
    },
  });
  dbPath = `${stack.dataDir}/dapp.sqlite`;
  const base = new AttestationClient({ baseUrl: stack.urls.api });
  for (const [role, who] of [["admin", stack.addresses.admin], ["user", USER_A], ["user", USER_B]] as const) tokens.push(await tokenFor(role, who));
  adminClient = base.withToken(tokens[0] as string);
  userA = base.withToken(tokens[1] as string);
  userB = base.withToken(tokens[2] as string);
  await adminClient.registerEncryptionKey({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
  events = await connectEvents(stack.urls.ws);
}, 180_000);

afterAll(async () => {
  closeAgent();
  await events?.close();
  await stack?.stop();
  await provider?.close();
});

describe("inspect queries through the devnode's HTTP interface", () => {
  const PREFIXES = ["invalid query: ", "unknown query type: ", "missing required parameter: ", "schema not found: ", "attestation not found: ", "no key registered for 0x", "no content key of attestation 0x", "no nullifier key set registered"];

  function checkEnvelope(text: string): InspectEnvelope {
    const envelope = JSON.parse(text) as InspectEnvelope;
    expect(Number.isInteger(envelope.processed_input_count)).toBe(true);
    if (envelope.status === "Accepted") {
      expect(envelope.exception_payload).toBeNull();
      expect(envelope.reports).toHaveLength(1);
    } else {
      expect(envelope.status).toBe("Rejected");
      expect(envelope.reports).toEqual([]);
      const message = hexToUtf8(envelope.exception_payload ?? "0x");
      expect(PREFIXES.some((p) => message.startsWith(p))).toBe(true);
    }
    return envelope;
  }

  it("random, mis-encoded and mistyped queries: Accepted with one report or Rejected with a specified message", async () => {
    const before = fileStateDigest(dbPath, true);
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 120 });
    const params = fc.dictionary(
      fc.constantFrom("schema_id", "owner", "requester", "attestation_id", "limit", "offset", "at", "include_description", "x"),
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(`0x${"ab".repeat(32)}`, HARDHAT_ADDRESSES[3], -1, 1001, 1e308, "0x")),
      { maxKeys: 4 },
    );
    const query = fc.oneof(
      // Typed queries with random parameters: wrong types, missing and extra ones.
      fc.record({ type: fc.constantFrom(...QUERY_TYPES), params }).map((q) => encodeURIComponent(JSON.stringify(q))),
      // Unknown types, prototype names included.
      fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("__proto__", "constructor", "toString")).map((type) => encodeURIComponent(JSON.stringify({ type, params: {} }))),
      // Any printable text: not JSON, raw JSON characters, stray '%'.
      printable,
      // Bad percent-encoding: '%' without two hex digits, and escapes of bytes that are not UTF-8.
      fc.tuple(printable, fc.constantFrom("%", "%z", "%zz", "%e9", "%c3%28", "%ff%fe", "%ed%a0%80", "%00", "%2")).map(([t, bad]) => `${encodeURIComponent(t)}${bad}`),
      // Valid queries double-encoded, and with params that are not an object.
      fc.constantFrom(...QUERY_TYPES).map((type) => encodeURIComponent(encodeURIComponent(JSON.stringify({ type, params: {} })))),
      fc.tuple(fc.constantFrom(...QUERY_TYPES), fc.jsonValue({ maxDepth: 1 })).map(([type, p]) => encodeURIComponent(JSON.stringify({ type, params: Array.isArray(p) ? p : [p] }))),
      // Deep nesting in the path.
      fc.integer({ min: 10, max: 2000 }).map((depth) => encodeURIComponent(nested(depth))),
    );
    await fc.assert(
      fc.asyncProperty(query, fc.boolean(), async (path, post) => {
        const answer = post
          ? await rawRequest(stack.ports.node, "POST", "/inspect", decodeURIComponentLoose(path))
          : await rawRequest(stack.ports.node, "GET", `/inspect/${path}`);
        expect(answer.status).toBe(200);
        checkEnvelope(answer.text);
      }),
      fcOptions(600),
    );
    expect(fileStateDigest(dbPath, true)).toBe(before);
    expectAllUp();
  });

  it("oversized queries: a path past the header limit is 431, a body past 4 MiB is 413, a 1 MiB query is Rejected; the node keeps serving", async () => {
    const before = fileStateDigest(dbPath, true);
    // The node answers 431 / 413 and closes; a client still writing its request may see the reset instead.
    const refused = (error: unknown) => ({ status: -1, text: String(error), ms: 0 });
    const longPath = await rawRequest(stack.ports.node, "GET", `/inspect/${"%7B".repeat(40_000)}`).catch(refused);
    expect([431, -1]).toContain(longPath.status);
    const hugeBody = await rawRequest(stack.ports.node, "POST", "/inspect", Buffer.alloc(5 * 1024 * 1024, 0x20)).catch(refused);
    expect([413, -1]).toContain(hugeBody.status);
    const big = await rawRequest(stack.ports.node, "POST", "/inspect", JSON.stringify({ type: "health", params: { pad: "x".repeat(1024 * 1024) } }));
    expect(big.status).toBe(200);
    // Unknown parameters are ignored by health: accepted, which is fine; what matters is an answer.
    checkEnvelope(big.text);
    const bigType = await rawRequest(stack.ports.node, "POST", "/inspect", JSON.stringify({ type: "y".repeat(1024 * 1024), params: {} }));
    expect(JSON.parse(bigType.text)).toMatchObject({ status: "Rejected", reports: [] });
    const health = await stack.inspect({ type: "health", params: {} });
    expect(health.status).toBe("Accepted");
    expect(fileStateDigest(dbPath, true)).toBe(before);
    expectAllUp();
  });
});

describe("hostile advance payloads through the real chain", () => {
  it("are rejected with their codes from any sender, change nothing, and the next valid input is accepted", async () => {
    const started = Date.now();
    await stack.send({ type: "register_schema", params: schemaFor("chain-sample.example") });
    const schemaId = schemaIdOf(schemaFor("chain-sample.example"));
    const before = fileStateDigest(dbPath);
    const cases: [Hex, number, string][] = [
      ["0xff00ff", 5, "INVALID_PAYLOAD"],
      ["0xc0af7b7d", 6, "INVALID_PAYLOAD"],
      [utf8ToHex("not json at all"), 7, "INVALID_PAYLOAD"],
      [utf8ToHex('{"type":"register_schema","params":{"provider":"ht'), 0, "INVALID_PAYLOAD"],
      [utf8ToHex(nested(20_000)), 8, "INVALID_PAYLOAD"],
      [utf8ToHex(`{"type":"register_schema","params":{"provider":${nested(5_000)}}}`), 0, "INVALID_PARAMS"],
      [jsonToHex([{ type: "register_schema" }]), 9, "INVALID_PAYLOAD"],
      [jsonToHex({ type: "__proto__", params: {} }), 0, "UNKNOWN_KIND"],
      [jsonToHex({ type: "drop_all", params: {} }), 5, "UNKNOWN_KIND"],
      [jsonToHex({ type: "set_role", params: { address: 5, role: [], enabled: "yes" } }), 0, "INVALID_PARAMS"],
      [jsonToHex({ type: "register_schema", params: { ...schemaFor("x".repeat(200_000)) } }), 0, "INVALID_PARAMS"],
      [jsonToHex({ type: "register_schema", params: schemaFor("forged.example") }), 6, "UNAUTHORIZED_SENDER"],
      [jsonToHex({ type: "set_role", params: { address: HARDHAT_ADDRESSES[7], role: "admin", enabled: true } }), 7, "UNAUTHORIZED_SENDER"],
      [jsonToHex({ type: "create_attestation", params: { schema_id: schemaId, owner: HARDHAT_ADDRESSES[8], provider: "http", encrypted_data: "0x01", bucket_values: { "data.balance": "low" } } }), 8, "UNAUTHORIZED_SENDER"],
      [jsonToHex({ type: "grant_access", params: { requester: HARDHAT_ADDRESSES[9], schema_id: schemaId, expires_at: 4_000_000_000, owner: HARDHAT_ADDRESSES[3] } }), 9, "UNAUTHORIZED_SENDER"],
      [jsonToHex({ type: "grant_access", params: { requester: HARDHAT_ADDRESSES[9], schema_id: `0x${"12".repeat(32)}`, expires_at: 4_000_000_000 } }), 9, "SCHEMA_NOT_FOUND"],
      [jsonToHex({ type: "revoke_grant", params: { grant_id: `0x${"34".repeat(32)}` } }), 5, "GRANT_NOT_FOUND"],
    ];
    // And random byte strings, which are never valid inputs.
    for (const bytes of fc.sample(fc.uint8Array({ minLength: 1, maxLength: 300 }), 12)) {
      cases.push([`0x${Buffer.from(bytes).toString("hex")}`, 5 + (bytes.length % 5), "INVALID_PAYLOAD"]);
    }
    const sent = await Promise.all(cases.map(([payload, sender]) => stack.client.addInput(payload, sender)));
    for (const [i, input] of sent.entries()) {
      const verdict = await stack.client.waitForVerdict(input.index);
      const [, , code] = cases[i] as [Hex, number, string];
      expect([i, verdict.status, errorOf(verdict.reports[0])?.code, verdict.notices]).toEqual([i, "REJECTED", code, []]);
    }
    expect(fileStateDigest(dbPath)).toBe(before);
    const next = await stack.send({ type: "register_schema", params: schemaFor("after-hostile.example") });
    expect(next.status).toBe("ACCEPTED");
    expectAllUp();
    figure(`chain sample: ${cases.length} hostile inputs through the real chain in ${((Date.now() - started) / 1000).toFixed(1)} s, all rejected with their codes`);
  });
});

describe("SSRF through the claim endpoint", () => {
  beforeAll(async () => {
    // A schema for every target host, so each claim reaches the provider fetch and its checks.
    const hosts = [...SSRF_HOSTS.map(([host]) => new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, "")), DNS_LOOPBACK, "127.0.0.1"];
    for (const host of new Set(hosts)) expect((await stack.send({ type: "register_schema", params: schemaFor(host) })).status).toBe("ACCEPTED");
  });

  it("refuses loopback, private, link-local and metadata targets in every spelling: 400 INVALID_PARAMETER, nothing contacted", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
    const contacted = provider.connections;
    for (const [host, why] of SSRF_HOSTS) {
      for (const scheme of ["http", "https"]) {
        const url = `${scheme}://${host}:${provider.port}/balance?token=${PROVIDER_SECRET}`;
        const started = Date.now();
        const error = await failure(userA.claim(claimFor(url, { authorization: `Bearer ${PROVIDER_SECRET}` })), url);
        expect([why, scheme, error.status, error.code, error.details?.parameter]).toEqual([why, scheme, 400, "INVALID_PARAMETER", "params.url"]);
        // The value names the URL without its query, and never the secret or a resolved address.
        expect(JSON.stringify(error.details) + error.message).not.toContain(PROVIDER_SECRET);
        expect(Date.now() - started).toBeLessThan(10_000);
      }
    }
    expect(provider.connections).toBe(contacted);
  });

  it("refuses a DNS name that resolves to loopback (an api that trusts only 127.0.0.1)", async () => {
    const other = await startApiOn(stack, { PROVIDER_ALLOWED_HOSTS: "127.0.0.1" });
    try {
      const client = new AttestationClient({ baseUrl: other.url, token: tokens[1] as string });
      provider.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
      const contacted = provider.connections;
      const error = await failure(client.claim(claimFor(`http://${DNS_LOOPBACK}:${provider.port}/balance`)), DNS_LOOPBACK);
      expect([error.status, error.code, error.details?.parameter]).toEqual([400, "INVALID_PARAMETER", "params.url"]);
      // It never says which address the name resolved to.
      expect(JSON.stringify(error.details)).not.toContain("127.0.0.1");
      // A redirect from the trusted literal to the name: refused too.
      provider.route("/to-name", { kind: "redirect", location: `http://${DNS_LOOPBACK}:${provider.port}/balance` });
      const redirected = await failure(client.claim(claimFor(`http://127.0.0.1:${provider.port}/to-name`)), "redirect to localhost");
      expect([redirected.status, redirected.code]).toEqual([502, "PROVIDER_UNAVAILABLE"]);
      expect(provider.connections).toBe(contacted + 1);
    } finally {
      await other.stop();
    }
  });

  it("refuses redirects to such targets: 502 PROVIDER_UNAVAILABLE, the target never contacted, no credential forwarded", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 5 } } });
    const targets = [
      `http://127.0.0.1:${provider.port}/balance`,
      `http://[::1]:${provider.port}/balance`,
      `http://2130706433:${provider.port}/balance`,
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      "http://10.0.0.1/admin",
      "http://[fd00::1]/",
      "file:///etc/passwd",
      "gopher://127.0.0.1:6379/_INFO",
    ];
    for (const [i, location] of targets.entries()) {
      provider.route(`/redirect-${i}`, { kind: "redirect", location, status: i % 2 === 0 ? 302 : 307 });
      const before = provider.requests.length;
      const error = await failure(userA.claim(claimFor(`http://localhost:${provider.port}/redirect-${i}`, { "x-api-key": PROVIDER_SECRET })), location);
      expect([location, error.status, error.code]).toEqual([location, 502, "PROVIDER_UNAVAILABLE"]);
      expect(error.details?.error).toBe("provider redirected to a target that is not allowed");
      // Only the redirecting request reached the provider.
      expect(provider.requests.slice(before).map((r) => r.path)).toEqual([`/redirect-${i}`]);
    }
    // A redirect chain that loops is cut after 3 hops.
    provider.route("/loop", { kind: "redirect", location: `http://localhost:${provider.port}/loop` });
    const loop = await failure(userA.claim(claimFor(`http://localhost:${provider.port}/loop`)));
    expect([loop.status, loop.code]).toEqual([502, "PROVIDER_UNAVAILABLE"]);
  });

  it("a header value carrying CR/LF is refused naming the header, never echoing the value", async () => {
    const error = await failure(userA.claim(claimFor(`http://localhost:${provider.port}/balance`, { "x-api-key": `${PROVIDER_SECRET}\r\nX-Injected: 1` })));
    expect([error.status, error.code, error.details?.parameter]).toEqual([400, "INVALID_PARAMETER", "params.headers"]);
    expect(JSON.stringify(error.details) + error.message).not.toContain(PROVIDER_SECRET);
  });

  it("the allow-listed provider still works after all that", async () => {
    provider.route("/balance", { kind: "json", value: { data: { balance: 500 } } });
    const result = await userA.claim(claimFor(`http://localhost:${provider.port}/balance`, { authorization: `Bearer ${PROVIDER_SECRET}` }));
    expect(result.bucket).toBe("mid");
    expectAllUp();
  });
});

describe("owner spoofing on grants and revokes", () => {
  it("the owner is the token's address whatever the body says; another user's or the admin's revoke is NOT_OWNER; the chain refuses relays from non-operators", async () => {
    const schemaId = schemaIdOf(schemaFor("127.0.0.1"));
    const requester = HARDHAT_ADDRESSES[9] as Hex;
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    // A body naming another owner: the extra member does not make USER_B the owner.
    const spoofed = await userA.raw("POST", "/api/core/grant", { requester, schemaId, expiresAt, owner: USER_B, sub: USER_B });
    expect(spoofed.status).toBe(200);
    const grantId = (spoofed.body as { data: { grantId: Hex } }).data.grantId;
    expect((await userA.access(USER_A, requester)).hasAccess).toBe(true);
    expect((await userA.access(USER_B, requester)).hasAccess).toBe(false);

    const stranger = await failure(userB.revokeGrant(grantId));
    expect([stranger.status, stranger.code]).toEqual([403, "NOT_OWNER"]);
    const adminRevoke = await failure(adminClient.revokeGrant(grantId));
    expect([adminRevoke.status, adminRevoke.code]).toEqual([403, "NOT_OWNER"]);

    // Straight to the InputBox: a non-operator relaying for USER_A, or revoking USER_A's grant.
    const before = fileStateDigest(dbPath);
    const relay = await stack.send({ type: "grant_access", params: { requester: HARDHAT_ADDRESSES[8], schema_id: schemaId, expires_at: expiresAt, owner: USER_A } }, 6);
    expect([relay.status, errorOf(relay.reports[0])?.code]).toEqual(["REJECTED", "UNAUTHORIZED_SENDER"]);
    const revoke = await stack.send({ type: "revoke_grant", params: { grant_id: grantId } }, 6);
    expect([revoke.status, errorOf(revoke.reports[0])?.code]).toEqual(["REJECTED", "NOT_OWNER"]);
    const relayedRevoke = await stack.send({ type: "revoke_grant", params: { grant_id: grantId, owner: USER_A } }, 6);
    expect([relayedRevoke.status, errorOf(relayedRevoke.reports[0])?.code]).toEqual(["REJECTED", "UNAUTHORIZED_SENDER"]);
    expect(fileStateDigest(dbPath)).toBe(before);
    expect((await userA.access(USER_A, requester)).grants.map((g) => g.grantId)).toEqual([grantId]);
  });
});

describe("random bodies through the api's real port", () => {
  it("every answer is JSON in the error shape with a specified code, never a 500, and the api stays up", async () => {
    const SPEC_CODES = new Set(["INVALID_REQUEST", "INVALID_PARAMETER", "INVALID_KEY_FORMAT", "AUTH_INVALID", "AUTH_MISSING", "SCHEMA_NOT_FOUND", "ROLLUP_REJECTED", "ENCRYPTION_KEY_MISSING", "PROVIDER_UNAVAILABLE", "PROVIDER_INVALID_RESPONSE"]);
    const endpoints = ["/api/core/provider-schema", "/api/core/encryption-key", "/api/core/claim", "/api/core/grant", "/api/core/auth/login"];
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 300 }),
      fc.record({ provider: fc.constantFrom("http", "ftp", ""), params: fc.record({ url: fc.webUrl(), method: fc.constantFrom("GET", "TRACE", "POST") }), bucketDefinition: fc.jsonValue({ maxDepth: 2 }) }).map((v) => JSON.stringify(v)),
    );
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoints), body, async (path, text) => {
        const token = path.includes("provider-schema") || path.includes("encryption-key") ? tokens[0] : tokens[1];
        const response = await fetch(`${stack.urls.api}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token ?? ""}` },
          body: text,
          signal: AbortSignal.timeout(30_000),
        });
        const parsed = (await response.json()) as { success: boolean; error?: { code: string } };
        answered++;
        if (response.status === 200) return;
        expect(parsed.success).toBe(false);
        expect([response.status, SPEC_CODES.has(parsed.error?.code ?? "")]).toEqual([response.status, true]);
        expect(response.status).not.toBe(500);
      }),
      fcOptions(200),
    );
    expect(answered).toBeGreaterThanOrEqual(200);
    expectAllUp();
  });
});

describe("floods on the api's real port", () => {
  it("oversized headers are refused by the server (431) and the api keeps serving", async () => {
    const big = await rawExchange(stack.ports.api, `GET /healthcheck HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`);
    expect(big.text).toMatch(/^HTTP\/1\.1 431 /);
    const many = Array.from({ length: 4000 }, (_, i) => `X-H${i}: v`).join("\r\n");
    const flood = await rawExchange(stack.ports.api, `GET /healthcheck HTTP/1.1\r\nHost: x\r\n${many}\r\n\r\n`);
    expect(flood.text).toMatch(/^HTTP\/1\.1 431 /);
    const garbage = await rawExchange(stack.ports.api, "\u0000\u0001GARBAGE / HTTP/9.9\r\n\r\n");
    expect(garbage.text).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${stack.urls.api}/healthcheck`)).status).toBe(200);
  });

  it("200 half-sent requests held open do not stop others from being served", async () => {
    const release = await idleHalfRequests(stack.ports.api, 200);
    try {
      for (let i = 0; i < 20; i++) {
        const answer = await rawRequest(stack.ports.api, "GET", "/healthcheck", undefined, 10_000);
        expect(answer.status).toBe(200);
      }
    } finally {
      release();
    }
  });

  it("WebSocket: 200 connections, a message flood, binary and oversized frames; events still reach a fresh subscriber", async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<WebSocket>((resolve, reject) => {
            const socket = new WebSocket(stack.urls.ws);
            socket.once("open", () => resolve(socket));
            socket.once("error", reject);
          }),
      ),
    );
    try {
      // A flood of messages from one client: each answered, none crashes the hub.
      const flooder = sockets[0] as WebSocket;
      let replies = 0;
      flooder.on("message", () => replies++);
      for (let i = 0; i < 2000; i++) flooder.send(i % 3 === 0 ? "{bad json" : JSON.stringify({ subscribe: ["grant:created"], owner: i % 2 ? null : USER_A }));
      await expect.poll(() => replies, { timeout: 20_000 }).toBe(2000);
      // Binary frames get an error message; a frame over the 4 KiB cap closes that client with 1009.
      const binary = sockets[1] as WebSocket;
      const binaryReply = new Promise<string>((resolve) => binary.once("message", (data) => resolve(String(data))));
      binary.send(Buffer.from([1, 2, 3]));
      expect(JSON.parse(await binaryReply)).toMatchObject({ event: "error", data: { code: "INVALID_REQUEST" } });
      const big = sockets[2] as WebSocket;
      const closed = new Promise<number>((resolve) => big.once("close", (code) => resolve(code)));
      big.send("x".repeat(64 * 1024));
      expect(await closed).toBe(1009);
      // The api still serves HTTP and relays events to a fresh client.
      expect((await fetch(`${stack.urls.api}/healthcheck`)).status).toBe(200);
      const fresh = await connectEvents(stack.urls.ws, { subscribe: ["grant:created"], owner: USER_B });
      try {
        const granted = await userB.grant({ requester: HARDHAT_ADDRESSES[7] as Hex, schemaId: schemaIdOf(schemaFor("127.0.0.1")), expiresAt: Math.floor(Date.now() / 1000) + 600 });
        const event = await fresh.waitFor((e) => e.event === "grant:created");
        expect(event.data).toMatchObject({ grantId: granted.grantId });
      } finally {
        await fresh.close();
      }
    } finally {
      for (const socket of sockets) socket.terminate();
    }
    expectAllUp();
  });
});

describe("secrets", () => {
  it("no log of any piece holds the JWT secret, the wallet key, a token or a provider credential", () => {
    for (const piece of stack.pieces) {
      const log = stack.logs(piece);
      expect(log.length).toBeGreaterThan(0);
      // The hardhat node prints its well-known development keys at start (public test accounts): only
      // the other pieces are held to the wallet key.
      const walletKey = piece === "chain" ? [] : [DEFAULT_PRIVATE_KEY.slice(2)];
      for (const secret of [TEST_JWT_SECRET, ...walletKey, PROVIDER_SECRET, ...tokens]) {
        expect([piece, secret.slice(0, 12), log.includes(secret)]).toEqual([piece, secret.slice(0, 12), false]);
      }
    }
    // The provider saw its credential (the allowed claim), so the check above is not vacuous.
    expect(provider.requests.some((r) => r.headers.authorization === `Bearer ${PROVIDER_SECRET}`)).toBe(true);
  });
});
