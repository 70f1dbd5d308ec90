/**
 * Reads that scale past the node (docs/operations.md, Readers): an api whose inspect reads go to two
 * readers (validators on the stack's chain with their own dapps). What only readers can get wrong: a
 * write followed at once by a read of it never misses, with readers that lag on purpose (their chain
 * connections held, so they see no new input), and past READ_WAIT_MS the node answers and the response
 * says so; a client's own X-Min-Input-Index is honoured and a bad one refused; a reader killed under read
 * load fails no read; a reader in mismatch (here one whose dapp was started with other admins, so its
 * state contradicts the claims on chain) is skipped, and no read fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaIdOf } from "../../common/ids.ts";
import { JSON_HEADERS, TEST_JWT_SECRET, bearer, tokenFor } from "../support/api-fixtures.ts";
import { startApiOn } from "../support/api-in-process.ts";
import { until } from "../support/until.ts";
import { startPausableProxy, type PausableProxy } from "../support/pausable-proxy.ts";
import { freePorts, startStack, type TestStack } from "../support/stack.ts";

let stack: TestStack;
/** Each reader's way to the chain. */
let chains: PausableProxy[] = [];
let adminToken: string;
let clientNo = 0;
const READ_WAIT_MS = 1_500;

beforeAll(async () => {
  const [chainPort] = await freePorts(1);
  chains = await Promise.all([startPausableProxy(chainPort as number), startPausableProxy(chainPort as number)]);
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    readers: 2,
    ports: { chain: chainPort as number },
    readerRpcUrls: chains.map((c) => c.url),
    env: { JWT_SECRET: TEST_JWT_SECRET, TRUST_PROXY: "true", READ_WAIT_MS: String(READ_WAIT_MS), RATE_LIMITS: "off" },
  });
  adminToken = await tokenFor("admin", stack.addresses.admin);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  for (const chain of chains) await chain.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: { success: boolean; data?: unknown; error?: { code: string; message: string } };
}

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  clientNo += 1;
  const headers = { "x-forwarded-for": `192.0.2.${clientNo % 250}`, ...(init.headers as Record<string, string> | undefined) };
  const response = await fetch(`${stack.urls.api}${path}`, { ...init, headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer["body"] };
}

let domainNo = 0;
/** A new schema (a write) and, at once, a read of it: the read must see the write. */
async function writeThenRead(): Promise<{ wrote: Answer; read: Answer }> {
  domainNo += 1;
  const content = {
    provider: "http",
    flowType: "balance",
    domain: `bank${domainNo}.example`,
    bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000], labels: ["low", "high"] } },
    dataKeys: ["data.currency"],
    freshnessHalfLife: 3600,
  };
  const wrote = await call("/api/core/provider-schema", { method: "POST", headers: { ...JSON_HEADERS, ...bearer(adminToken) }, body: JSON.stringify(content) });
  const read = await call(`/api/core/schemas/${schemaIdOf(content)}`);
  return { wrote, read };
}

async function readers(): Promise<{ url: string; health: string; processedInputCount: number }[]> {
  const status = await call("/api/core/status");
  return (status.body.data as { readers: { url: string; health: string; processedInputCount: number }[] }).readers;
}

describe("reads from readers", () => {
  it("a write's answer says its input index, and its read at once sees it: from the readers, not the node", async () => {
    for (let i = 0; i < 5; i++) {
      const { wrote, read } = await writeThenRead();
      expect(wrote.status, JSON.stringify(wrote.body)).toBe(200);
      expect(wrote.headers.get("x-input-index")).toMatch(/^\d+$/);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.headers.get("x-read-fallback")).toBeNull();
    }
    const metrics = await (await fetch(`${stack.urls.api}/metrics`)).text();
    for (const url of stack.urls.readers) expect(metrics).toContain(`api_rollup_reads_total{target="${url}",outcome="ok"}`);
    expect(metrics).not.toContain('target="node"');
  });

  it("with one reader lagging, reads go to the other; with both lagging, the node answers past READ_WAIT_MS and says so", async () => {
    chains[0]?.pause();
    try {
      for (let i = 0; i < 3; i++) {
        const { wrote, read } = await writeThenRead();
        expect(wrote.status).toBe(200);
        expect(read.status, JSON.stringify(read.body)).toBe(200);
        expect(read.headers.get("x-read-fallback")).toBeNull();
      }
      chains[1]?.pause();
      const started = Date.now();
      const { wrote, read } = await writeThenRead();
      expect(wrote.status).toBe(200);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.headers.get("x-read-fallback")).toBe(`node; readers behind input ${wrote.headers.get("x-input-index")}`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(READ_WAIT_MS);
    } finally {
      for (const chain of chains) chain.resume();
    }
    // Caught up again, they answer again.
    const { read } = await writeThenRead();
    expect(read.status).toBe(200);
    expect(read.headers.get("x-read-fallback")).toBeNull();
  });

  it("X-Min-Input-Index: a client's index is waited for; a bad one is refused before anything runs", async () => {
    const { wrote } = await writeThenRead();
    const index = Number(wrote.headers.get("x-input-index"));
    const seen = await call("/api/core/schemas", { headers: { "X-Min-Input-Index": String(index) } });
    expect([seen.status, seen.headers.get("x-read-fallback")]).toEqual([200, null]);
    // An input no reader (nor the node) has: the node answers once the wait is over, and the answer says so.
    const ahead = await call("/api/core/schemas", { headers: { "X-Min-Input-Index": String(index + 1000) } });
    expect(ahead.status).toBe(200);
    expect(ahead.headers.get("x-read-fallback")).toBe(`node; readers behind input ${index + 1000}`);
    for (const bad of ["-1", "1.5", "0x10", "abc", "99999999999999999999"]) {
      const refused = await call("/api/core/schemas", { headers: { "X-Min-Input-Index": bad } });
      expect([refused.status, refused.body.error?.code], bad).toEqual([400, "INVALID_PARAMETER"]);
      expect(refused.body.error?.message).toBe("Invalid X-Min-Input-Index: expected an input index (a non-negative integer)");
    }
  });

  it("a reader killed under read load fails no read: the other answers, and the status shows it down", async () => {
    const { wrote } = await writeThenRead();
    expect(wrote.status).toBe(200);
    const failed: string[] = [];
    const fellBack: string[] = [];
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        const answer = await call("/api/core/schemas");
        if (answer.status !== 200) failed.push(`${answer.status} ${JSON.stringify(answer.body.error)}`);
        const fallback = answer.headers.get("x-read-fallback");
        if (fallback !== null) fellBack.push(fallback);
        done += 1;
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, worker));
    while (done < 60) await new Promise((r) => setTimeout(r, 10));
    await stack.kill("reader-1", "SIGKILL");
    await load;
    expect([done, failed]).toEqual([240, []]);
    // The other reader answered what reader 1 could not: the node only when both were slow past READ_WAIT_MS.
    expect(fellBack.length, fellBack.join("; ")).toBeLessThan(done / 10);
    const metrics = await (await fetch(`${stack.urls.api}/metrics`)).text();
    expect(metrics).toContain(`api_rollup_reads_total{target="${stack.urls.readers[1]}",outcome="ok"}`);
    await new Promise((r) => setTimeout(r, 600));
    expect((await readers()).map((r) => r.health)).toEqual(["down", "serving"]);
    await stack.start("reader-1");
  });

  it("a reader in mismatch is skipped, and no read fails", { timeout: 120_000 }, async () => {
    // A validator whose dapp has other admins: the admin's schemas are rejected there, so the next claim
    // over them contradicts its state and it stops serving reads (503 READER_MISMATCH).
    const wrong = await startStack({
      externalRpcUrl: stack.urls.rpc,
      env: { DEVNODE_ROLE: "validator", DEVNODE_CHAIN: "external", DAPP_ADMINS: "0x000000000000000000000000000000000000dead", EPOCH_INTERVAL_MS: "0" },
    });
    const api = await startApiOn(stack, { READ_URLS: `${wrong.urls.node},${stack.urls.readers[0]}`, READ_WAIT_MS: String(READ_WAIT_MS), READER_POLL_MS: "100" });
    try {
      await writeThenRead();
      await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
      const refused = await until(
        async () => (await fetch(`${wrong.urls.node}/reader`)).json() as Promise<{ serving: boolean; reason: string | null }>,
        (r) => !r.serving,
        "the wrong reader to find the mismatch",
        60_000,
      );
      expect(refused.reason).toMatch(/^a claim on chain does not match this reader's state: /);
      const inspect = await fetch(`${wrong.urls.node}/inspect/${encodeURIComponent('{"type":"health","params":{}}')}`);
      expect(inspect.status).toBe(503);
      const fellBack: string[] = [];
      for (let i = 0; i < 20; i++) {
        const answer = await fetch(`${api.url}/api/core/schemas`);
        expect(answer.status).toBe(200);
        const fallback = answer.headers.get("x-read-fallback");
        if (fallback !== null) fellBack.push(fallback);
      }
      // The good reader answers; the node only when it was slow past READ_WAIT_MS (a loaded machine).
      expect(fellBack.length, fellBack.join("; ")).toBeLessThan(5);
      const status = (await (await fetch(`${api.url}/api/core/status`)).json()) as { data: { readers: { url: string; health: string; reason: string | null }[] } };
      expect(status.data.readers[0]).toMatchObject({ url: wrong.urls.node, health: "not-serving", reason: refused.reason });
      expect(status.data.readers[1]).toMatchObject({ health: "serving" });
    } finally {
      await api.stop();
      await wrong.stop();
    }
  });
});
