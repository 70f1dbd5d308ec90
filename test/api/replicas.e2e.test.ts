/**
 * Api replicas behind haproxy (`npm start -- --api-replicas N`, docs/operations.md): what only a
 * replicated api can get wrong. Limits and login nonces are shared through Redis; WebSocket clients on
 * any replica see every event once; a replica killed under load loses no write it answered as a
 * success, and clients fail over to the others; Redis going away degrades limits to each replica's own.
 * The whole api suite also runs through the balancer (test/api/e2e-replicas.test.ts).
 */
import nacl from "tweetnacl";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { seriesValue } from "../support/prometheus.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { JSON_HEADERS, TEST_JWT_SECRET, USER_A_KEY, bearer, tokenFor } from "../support/api-fixtures.ts";

let stack: TestStack;
let provider: ProviderServer;
/** When the balancer started checking the replicas. */
let startedAt = 0;
let adminToken: string;
let clientNo = 0;

const BUCKETS = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };

/** A client address of its own (the stack trusts X-Forwarded-For), so each test's limits are its own. */
function clientAddress(): string {
  clientNo += 1;
  return `203.0.113.${clientNo}`;
}

interface Answer {
  status: number;
  replica: string | null;
  body: { success: boolean; data?: Record<string, unknown>; error?: { code: string } } | undefined;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: Answer["body"];
  try {
    body = JSON.parse(text) as Answer["body"];
  } catch {
    body = undefined;
  }
  return { status: response.status, replica: response.headers.get("x-api-replica"), body };
}

function claimBody(): string {
  return JSON.stringify({
    provider: "http",
    params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
    bucketDefinition: { field: "data.balance", ...BUCKETS },
  });
}

async function claim(token: string, from = clientAddress()): Promise<Answer> {
  return call(`${stack.urls.api}/api/core/claim`, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...bearer(token), "x-forwarded-for": from },
    body: claimBody(),
  });
}

/** A WebSocket client that keeps what it received and whether the server closed it. */
interface EventClient {
  events: { event: string; data: Record<string, unknown> }[];
  closed: Promise<number>;
  close(): void;
}

async function listen(url: string): Promise<EventClient> {
  const socket = new WebSocket(url);
  const events: EventClient["events"] = [];
  socket.on("message", (data) => events.push(JSON.parse(String(data)) as EventClient["events"][number]));
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return { events, closed, close: () => socket.close() };
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

beforeAll(async () => {
  provider = await startProviderServer();
  provider.route("/balance", { kind: "json", value: { data: { balance: 512, currency: "EUR" } } });
  stack = await startStack({
    api: true,
    apiReplicas: 2,
    env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", TRUST_PROXY: "true", JWT_SECRET: TEST_JWT_SECRET, NOTICE_POLL_MS: "100" },
  });
  startedAt = Date.now();
  adminToken = await tokenFor("admin", stack.addresses.admin);
  const admin = { ...JSON_HEADERS, ...bearer(adminToken) };
  const schema = await call(`${stack.urls.api}/api/core/provider-schema`, {
    method: "POST",
    headers: { ...admin, "x-forwarded-for": clientAddress() },
    body: JSON.stringify({ provider: "http", flowType: "balance", domain: "127.0.0.1", bucketDefinitions: { "data.balance": BUCKETS }, dataKeys: [], freshnessHalfLife: 86400 }),
  });
  expect(schema.status).toBe(200);
  const key = await call(`${stack.urls.api}/api/core/encryption-key`, {
    method: "POST",
    headers: { ...admin, "x-forwarded-for": clientAddress() },
    body: JSON.stringify({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" }),
  });
  expect(key.status).toBe(200);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await provider?.close();
});

describe("one api tier, two processes", () => {
  it("the balancer spreads requests over both replicas, and one client's limit is counted once across them", async () => {
    const from = clientAddress();
    const answers: { status: number; replica: string | null; remaining: string | null }[] = [];
    for (let i = 0; i < 11; i++) {
      const response = await fetch(`${stack.urls.api}/api/core/attestations/${stack.addresses.admin}`, { headers: { "x-forwarded-for": from } });
      await response.arrayBuffer();
      answers.push({ status: response.status, replica: response.headers.get("x-api-replica"), remaining: response.headers.get("x-ratelimit-remaining") });
    }
    expect(new Set(answers.map((a) => a.replica))).toEqual(new Set(["api-1", "api-2"]));
    // 10 a minute for this group: replica by replica, the count goes on where the other left it.
    expect(answers.slice(0, 10).map((a) => [a.status, a.remaining])).toEqual(Array.from({ length: 10 }, (_, i) => [200, String(9 - i)]));
    expect(answers[10]?.status).toBe(429);
    // Another client is not touched by it.
    const other = await fetch(`${stack.urls.api}/api/core/attestations/${stack.addresses.admin}`, { headers: { "x-forwarded-for": clientAddress() } });
    expect(other.status).toBe(200);
    // What a replica answers beside the api names it too: the scrape and the explorer through the balancer.
    for (const path of ["/metrics", "/metrics", "/"]) {
      const answer = await call(`${stack.urls.api}${path}`);
      expect([path, answer.status, answer.replica]).toEqual([path, 200, expect.stringMatching(/^api-[12]$/)]);
    }
  });

  it("a SIWE nonce handed out by one replica logs in at the other, once", async () => {
    const [one, two] = stack.apiReplicaUrls as [string, string];
    const nonceAnswer = await call(`${one}/api/core/auth/nonce`);
    expect(nonceAnswer.replica).toBe("api-1");
    const nonce = String(nonceAnswer.body?.data?.nonce);
    const account = privateKeyToAccount(USER_A_KEY);
    const login = async (url: string) => {
      const domain = new URL(url).host;
      const message = createSiweMessage({ address: account.address, chainId: 31337, domain, nonce, uri: url, version: "1" });
      return call(`${url}/api/core/auth/login`, {
        method: "POST",
        headers: JSON_HEADERS,
        body: JSON.stringify({ message, signature: await account.signMessage({ message }) }),
      });
    };
    const first = await login(two);
    expect([first.status, first.replica]).toEqual([200, "api-2"]);
    expect(first.body?.data?.token).toEqual(expect.any(String));
    // Consumed across the tier: neither replica takes it again.
    for (const url of [one, two]) expect((await login(url)).body?.error?.code).toBe("AUTH_INVALID");
  });

  it("a WebSocket client on either replica gets every event once, whichever replica wrote it", async () => {
    const [one, two] = stack.apiReplicaUrls as [string, string];
    const clients = await Promise.all([one, two].map((url) => listen(`${url.replace("http", "ws")}/ws`)));
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const token = await tokenFor("user", owner);
    const made: { claimId: string; replica: string | null }[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await claim(token);
      expect(answer.status).toBe(200);
      made.push({ claimId: String(answer.body?.data?.claimId), replica: answer.replica });
    }
    expect(new Set(made.map((m) => m.replica))).toEqual(new Set(["api-1", "api-2"]));
    for (const client of clients) {
      const ids = () => client.events.filter((e) => e.event === "attestation:created").map((e) => String(e.data.claimId));
      await until(ids, (seen) => made.every((m) => seen.includes(m.claimId)), "every claim's event");
      // Once each: a later poll must not relay it again.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const m of made) expect(ids().filter((id) => id === m.claimId)).toHaveLength(1);
      client.close();
    }
  });
});

describe("the balancer's health checks", () => {
  it("are not a client: a replica does not count them, and a client cannot pass for one through the balancer", async () => {
    const [one] = stack.apiReplicaUrls as [string];
    for (let i = 0; i < 120; i++) {
      const response = await fetch(`${one}/healthcheck`, { headers: { "X-Balancer-Check": "1" } });
      await response.arrayBuffer();
      expect([response.status, response.headers.get("x-ratelimit-limit")]).toEqual([200, null]);
    }
    // Through the balancer the header is stripped: the client is counted as any other.
    const from = clientAddress();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${stack.urls.api}/healthcheck`, { headers: { "X-Balancer-Check": "1", "x-forwarded-for": from } });
      await response.arrayBuffer();
      remaining.push(response.headers.get("x-ratelimit-remaining") ?? "none");
    }
    expect(remaining).toEqual(["99", "98", "97"]);
  });
});

describe("a replica killed under load", () => {
  it("no write answered as a success is lost, the clients fail over, and the replica comes back", async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const token = await tokenFor("user", owner);
    const viaBalancer = await listen(stack.urls.ws);
    const total = 48;
    const concurrency = 12;
    const outcomes: Answer[] = [];
    let next = 0;
    let killed: Promise<void> | undefined;
    const worker = async () => {
      while (next < total) {
        next += 1;
        let answer: Answer;
        try {
          answer = await claim(token);
        } catch (error) {
          // The connection itself broke: a failure the client sees, never a success.
          answer = { status: 0, replica: null, body: { success: false, error: { code: String(error) } } };
        }
        outcomes.push(answer);
        // Mid-run, with requests in flight on both replicas.
        if (outcomes.length === 10) killed = stack.kill("api-2");
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await killed;
    expect(stack.isRunning("api-2")).toBe(false);

    const succeeded = outcomes.filter((o) => o.status === 200).map((o) => String(o.body?.data?.claimId));
    // Both replicas were taking writes when one died.
    expect(new Set(outcomes.slice(0, 10).map((o) => o.replica))).toEqual(new Set(["api-1", "api-2"]));
    const failed = outcomes.filter((o) => o.status !== 200);
    // Only requests in flight on the killed replica can fail (the balancer sends no new one there).
    expect(failed.length).toBeLessThanOrEqual(concurrency);
    // A broken connection (status 0 here) or the balancer's 502/503: never an answer that claims success.
    for (const f of failed) expect([0, 502, 503, 504]).toContain(f.status);

    // Failing over: the same client asks again through the balancer, and api-1 answers.
    for (let i = 0; i < failed.length; i++) {
      const retried = await claim(token);
      expect([retried.status, retried.replica]).toEqual([200, "api-1"]);
      succeeded.push(String(retried.body?.data?.claimId));
    }
    expect(succeeded).toHaveLength(total);

    // Every success is in the rollup: read straight from the node, not through any api.
    for (const claimId of succeeded) {
      const envelope = await stack.inspect({ type: "attestation", params: { attestation_id: claimId } });
      expect([claimId, envelope.status]).toEqual([claimId, "Accepted"]);
    }

    // The events client was on one replica or the other; on api-2 its socket ended with the process.
    // Either way, through the balancer, events flow again.
    const again = await listen(stack.urls.ws);
    const after = await claim(token);
    expect(after.status).toBe(200);
    await until(() => again.events.some((e) => e.event === "attestation:created" && e.data.claimId === after.body?.data?.claimId), Boolean, "the event after the kill");
    again.close();
    viaBalancer.close();

    // Group commit still batched on the replica that stayed up.
    const text = await metrics(stack.apiReplicaUrls[0] as string);
    expect(seriesValue(text, "api_writes_per_transaction_sum")).toBeGreaterThan(seriesValue(text, "api_writes_per_transaction_count"));

    // Back in the tier once its health check passes.
    await stack.start("api-2");
    await until(
      async () => (await call(`${stack.urls.api}/api/core/health`, { headers: { "x-forwarded-for": clientAddress() } })).replica,
      (replica) => replica === "api-2",
      "api-2 answering through the balancer again",
    );
  }, 180_000);
});

describe("Redis away", () => {
  it("limited requests are refused rather than counted apart, the metrics say so, and limits are shared again once Redis is back", async () => {
    await stack.kill("redis");
    const from = clientAddress();
    // The windows the other replica counted in may still be open: nothing is allowed uncounted for a minute.
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${stack.urls.api}/api/core/health`, { headers: { "x-forwarded-for": from } });
      const body = (await response.json()) as { error?: { code: string; details?: { retry_after?: number } } };
      expect([response.status, body.error?.code]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    }
    // A client's /healthcheck is limited too; the balancer's own checks are not, so a replica still answers.
    const check = await call(`${stack.urls.api}/healthcheck`, { headers: { "x-forwarded-for": clientAddress() } });
    expect([check.status, check.replica === null]).toEqual([429, false]);
    for (const url of stack.apiReplicaUrls) {
      // Each replica asked once itself, whichever the balancer picked above: each refuses on its own.
      const direct = await fetch(`${url}/api/core/health`, { headers: { "x-forwarded-for": clientAddress() } });
      await direct.arrayBuffer();
      expect(direct.status).toBe(429);
      const text = await until(() => metrics(url), (t) => seriesValue(t, "api_redis_up") === 0, "api_redis_up 0");
      expect(seriesValue(text, "api_shared_state_fallbacks_total")).toBeGreaterThan(0);
    }
    expect(stack.logs("api-1")).toContain("Redis unreachable");

    await stack.start("redis");
    for (const url of stack.apiReplicaUrls) await until(() => metrics(url), (t) => seriesValue(t, "api_redis_up") === 1, "api_redis_up 1");
    // Shared again: one client's count goes on across both replicas.
    const shared = clientAddress();
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${stack.urls.api}/api/core/health`, { headers: { "x-forwarded-for": shared } });
      await response.arrayBuffer();
      remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["99", "98", "97", "96"]);
  }, 60_000);
});

describe("after more than 100 of the balancer's checks in a minute", () => {
  it("both replicas are still in it (its checks never meet the health group's limit)", async () => {
    // Two replicas checked every 500 ms: past 30 s the checks alone are over 100.
    const wait = startedAt + 32_000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const replicas = new Set<string | null>();
    for (let i = 0; i < 6; i++) {
      const answer = await call(`${stack.urls.api}/healthcheck`, { headers: { "x-forwarded-for": clientAddress() } });
      expect(answer.status).toBe(200);
      replicas.add(answer.replica);
    }
    expect(replicas).toEqual(new Set(["api-1", "api-2"]));
  }, 60_000);
});
