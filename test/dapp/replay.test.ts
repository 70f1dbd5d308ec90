/**
 * Determinism and restart safety: the same inputs give byte-identical databases; a restarted dapp skips
 * what it already applied and answers with the status it gave; an unexpected fault rejects one input
 * without stopping the loop.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Hex } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import { databaseDigest, tableDigests } from "../../dapp/db/digest.ts";
import { openDatabase } from "../../dapp/db/open.ts";
import { RollupRequest } from "../../dapp/transports/http-connection.ts";
import type { AdvanceOutcome } from "./rollup-server.ts";
import { PUBLIC_KEY, SCHEMA, SCHEMA_2 } from "./fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, OPERATOR, startHarness, T0 } from "./harness.ts";

const dir = mkdtempSync(path.join(tmpdir(), "dapp-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const s1 = schemaIdOf(SCHEMA);

/** A run of inputs with accepted and rejected ones, as (sender, payload, timestamp). */
const INPUTS: { sender: string; payload: Hex; timestamp: number }[] = [
  { sender: ADMIN, payload: jsonToHex({ type: "register_schema", params: SCHEMA }), timestamp: T0 },
  { sender: ADMIN, payload: jsonToHex({ type: "register_schema", params: SCHEMA_2 }), timestamp: T0 + 12 },
  { sender: ADMIN, payload: jsonToHex({ type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" } }), timestamp: T0 + 13 },
  { sender: ADMIN, payload: jsonToHex({ type: "set_role", params: { address: ATTESTOR, role: "attestor", enabled: true } }), timestamp: T0 + 14 },
  { sender: ADMIN, payload: jsonToHex({ type: "set_role", params: { address: OPERATOR, role: "operator", enabled: true } }), timestamp: T0 + 14 },
  { sender: BOB, payload: jsonToHex({ type: "set_role", params: { address: BOB, role: "admin", enabled: true } }), timestamp: T0 + 15 },
  ...Array.from({ length: 20 }, (_, i) => ({
    sender: ATTESTOR,
    payload: jsonToHex({
      type: "create_attestation",
      params: { schema_id: s1, owner: i % 2 ? ALICE : BOB, provider: "http", encrypted_data: `0x${(i + 1).toString(16).padStart(4, "0")}`, bucket_values: { balance: i % 3 ? "low" : "mid" } },
    }),
    timestamp: T0 + 20 + i,
  })),
  { sender: ALICE, payload: jsonToHex({ type: "grant_access", params: { requester: BOB, schema_id: s1, expires_at: T0 + 1000 } }), timestamp: T0 + 50 },
  { sender: OPERATOR, payload: jsonToHex({ type: "grant_access", params: { requester: ALICE, schema_id: s1, expires_at: T0 + 1000, owner: BOB } }), timestamp: T0 + 51 },
  { sender: ALICE, payload: jsonToHex({ type: "revoke_grant", params: { grant_id: inputIdOf("grant_access", 26) } }), timestamp: T0 + 52 },
  { sender: ALICE, payload: "0x7b" as Hex, timestamp: T0 + 53 },
  { sender: ALICE, payload: jsonToHex({ type: "revoke_grant", params: { grant_id: inputIdOf("grant_access", 26) } }), timestamp: T0 + 54 },
  // ALICE withdraws an attestation of hers (input 7), superseded by a later one (input 9); again is refused.
  { sender: ALICE, payload: jsonToHex({ type: "revoke_attestation", params: { attestation_id: inputIdOf("create_attestation", 7), superseded_by: inputIdOf("create_attestation", 9) } }), timestamp: T0 + 55 },
  { sender: ALICE, payload: jsonToHex({ type: "revoke_attestation", params: { attestation_id: inputIdOf("create_attestation", 7) } }), timestamp: T0 + 56 },
];

async function runAll(dbPath: string, inputs = INPUTS, firstIndex = 0): Promise<{ outcomes: AdvanceOutcome[]; digest: string }> {
  const h = await startHarness({ dbPath });
  const outcomes: AdvanceOutcome[] = [];
  for (const [i, input] of inputs.entries()) outcomes.push(await h.server.advance({ ...input, index: firstIndex + i }));
  const digest = databaseDigest(h.db.$client);
  await h.close();
  return { outcomes, digest };
}

describe("replay", () => {
  it("gives identical tables and identical outputs in two fresh databases", async () => {
    const a = await runAll(path.join(dir, "a.sqlite"));
    const b = await runAll(path.join(dir, "b.sqlite"));
    expect(a.outcomes.map((o) => o.status)).toContain("reject");
    expect(a.outcomes.map((o) => o.status)).toContain("accept");
    expect(b.outcomes).toEqual(a.outcomes);
    expect(b.digest).toBe(a.digest);
    const reopened = openDatabase({ path: path.join(dir, "a.sqlite") });
    const tables = tableDigests(reopened.$client);
    reopened.$client.close();
    expect(Object.fromEntries(tables.map((t) => [t.table, t.rows]))).toEqual({
      attestations: 20,
      consent_nonces: 0,
      encryption_keys: 1,
      grant_keys: 0,
      grants: 2,
      meta: 1,
      nullifier_key_set: 0,
      nullifier_key_shares: 0,
      nullifiers: 0,
      owner_keys: 0,
      revocations: 1,
      roles: 2,
      schemas: 2,
      tls_attestors: 0,
      used_claims: 0,
    });
  });
});

describe("restart", () => {
  it("skips inputs already applied, answers with the last status, then goes on", async () => {
    const dbPath = path.join(dir, "restart.sqlite");
    const first = await runAll(dbPath);
    expect(first.outcomes.at(-1)?.status).toBe("reject");

    // The node re-sends the tail of the run after a restart: nothing is applied twice. Inputs up to the last
    // accepted one were finished long ago and are answered "accept" without running (the last accepted one
    // would get its notices again); rejected inputs after it left no trace, as in the machine, so they run
    // again on the same state and get the same rejection and report.
    const tail = INPUTS.slice(-5);
    const again = await runAll(dbPath, tail, INPUTS.length - 5);
    const lastAccepted = first.outcomes.map((o) => o.status).lastIndexOf("accept");
    expect(lastAccepted).toBeLessThan(INPUTS.length - 1);
    expect(again.outcomes.map((o) => [o.status, o.notices, o.reports])).toEqual(
      tail.map((_, k) => {
        const index = INPUTS.length - 5 + k;
        const original = first.outcomes[index] as AdvanceOutcome;
        if (index > lastAccepted) return ["reject", [], original.reports];
        return ["accept", index === lastAccepted ? original.notices : [], []];
      }),
    );
    expect(again.digest).toBe(first.digest);

    const h = await startHarness({ dbPath });
    const next = await h.server.advance({
      sender: ATTESTOR,
      payload: jsonToHex({ type: "create_attestation", params: { schema_id: s1, owner: ALICE, provider: "http", encrypted_data: "0xff", bucket_values: {} } }),
      timestamp: T0 + 60,
      index: INPUTS.length,
    });
    expect(next.status).toBe("accept");
    expect(next.notices).toEqual([
      jsonToHex({
        event: "attestation:created",
        data: { claimId: inputIdOf("create_attestation", INPUTS.length), owner: ALICE, provider: "http", schema_id: s1, bucket_values: {}, attester: ATTESTOR, timestamp: T0 + 60, expires_at: null, freshness_half_life: SCHEMA.freshnessHalfLife },
      }),
    ]);
    // processed_inputs: up to and including the last accepted input.
    expect(await h.read("health")).toEqual({ status: "ok", database: "ok", processed_inputs: INPUTS.length + 1 });

    // An accepted last input re-delivered gets its notices again, and the state stays as it was.
    const before = databaseDigest(h.db.$client);
    const redelivered = await h.server.advance({ sender: ATTESTOR, payload: "0x" as Hex, timestamp: T0 + 60, index: INPUTS.length });
    expect(redelivered).toEqual({ ...next, index: INPUTS.length });
    expect(databaseDigest(h.db.$client)).toBe(before);
    await h.close();
  });

  it("keeps admins granted earlier when DAPP_ADMINS changes, and never removes the last admin", async () => {
    const dbPath = path.join(dir, "admins.sqlite");
    const before = await startHarness({ dbPath, admins: [ADMIN] });
    expect((await before.input("set_role", { address: ALICE, role: "admin", enabled: true })).status).toBe("accept");
    await before.close();

    const after = await startHarness({ dbPath, admins: [] });
    const blocked = await after.input("set_role", { address: ALICE, role: "admin", enabled: false }, { sender: ALICE, index: 1 });
    expect(blocked.reports).toEqual([
      jsonToHex({ error: { code: "INVALID_PARAMS", message: `address: ${ALICE} is the last admin and cannot be removed` } }),
    ]);
    expect((await after.input("set_role", { address: BOB, role: "admin", enabled: true }, { sender: ALICE, index: 2 })).status).toBe("accept");
    expect((await after.input("set_role", { address: ALICE, role: "admin", enabled: false }, { sender: ALICE, index: 3 })).status).toBe("accept");
    const gone = await after.input("register_schema", SCHEMA, { sender: ALICE, index: 4 });
    expect(gone.reports).toEqual([jsonToHex({ error: { code: "UNAUTHORIZED_SENDER", message: `sender ${ALICE} does not hold the admin role` } })]);
    await after.close();
  });
});

describe("faults", () => {
  it("rejects an input whose handler fails unexpectedly with INTERNAL_ERROR, and keeps serving", async () => {
    const h = await startHarness();
    h.db.$client.exec("drop table encryption_keys");
    const broken = await h.input("register_encryption_key", { publicKey: PUBLIC_KEY, algorithm: "nacl-box" });
    expect(broken.status).toBe("reject");
    expect(broken.reports).toEqual([
      jsonToHex({ error: { code: "INTERNAL_ERROR", message: "internal error: no such table: encryption_keys" } }),
    ]);
    expect((await h.input("register_schema", SCHEMA)).status).toBe("accept");
    expect(await h.read("health")).toEqual({ status: "ok", database: "ok", processed_inputs: 2 });
    await h.close();
  });

  it("writes its outputs ahead of the /finish without waiting, and logs an output the server refused", async () => {
    // A rollup server that refuses every notice: the dapp must still finish the input (the input is
    // committed), in order on its one connection, and say what went wrong.
    const seen: string[] = [];
    let finishes = 0;
    const server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        seen.push(`${req.url} ${req.socket.remotePort}`);
        if (req.url === "/notice") return void res.writeHead(500, { "content-length": "9" }).end("disk full");
        if (req.url !== "/finish") return void res.writeHead(200, { "content-length": "0" }).end();
        finishes++;
        if (finishes > 1) {
          seen.push(`status ${(JSON.parse(body) as { status: string }).status}`);
          return; // held: the test ends here
        }
        const advance = {
          request_type: "advance_state",
          data: {
            metadata: { msg_sender: ADMIN, epoch_index: 0, input_index: 0, block_number: 1, timestamp: T0 },
            payload: jsonToHex({ type: "register_schema", params: SCHEMA }),
          },
        };
        const text = JSON.stringify(advance);
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const db = openDatabase({ path: ":memory:" });
    const lines: string[] = [];
    const { createDapp } = await import("../../dapp/transports/http.ts");
    const dapp = createDapp({ db, admins: [ADMIN], rollupUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log: (l) => lines.push(l) });
    const stop = new AbortController();
    const running = dapp.run({ signal: stop.signal, retryDelayMs: 20 });
    try {
      await expect.poll(() => seen.includes("status accept"), { timeout: 10_000 }).toBe(true);
      await expect.poll(() => lines.some((l) => l.startsWith("could not send /notice")), { timeout: 10_000 }).toBe(true);
      const port = seen[0]?.split(" ")[1];
      expect(seen.map((s) => s.replace(` ${port}`, ""))).toEqual(["/finish", "/notice", "/finish", "status accept"]);
      expect(lines).toContain("could not send /notice: /notice answered 500: disk full");
      expect(lines).toContain("input 0 register_schema: accept");
    } finally {
      stop.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await running;
      db.$client.close();
    }
  });

  it("reconnects when the rollup server is not there yet", async () => {
    const h = await startHarness();
    // A second dapp loop pointed at a closed port keeps retrying instead of failing.
    const { createDapp } = await import("../../dapp/transports/http.ts");
    const lines: string[] = [];
    const orphan = createDapp({ db: h.db, admins: [ADMIN], rollupUrl: "http://127.0.0.1:9", log: (l) => lines.push(l) });
    const stop = new AbortController();
    const running = orphan.run({ signal: stop.signal, retryDelayMs: 20 });
    await expect.poll(() => lines.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    stop.abort();
    await running;
    expect(lines[0]).toMatch(/^rollup server http:\/\/127\.0\.0\.1:9 unreachable/);
    await h.close();
  });

  it("lends its transport to @deroll/app only while the app is made: the process's fetch and Request are left as they were", async () => {
    const h = await startHarness();
    const { createDapp } = await import("../../dapp/transports/http.ts");
    const before = globalThis.fetch;
    createDapp({ db: h.db, admins: [ADMIN], rollupUrl: "http://127.0.0.1:9" });
    expect(globalThis.fetch).toBe(before);
    expect(new Request("http://127.0.0.1/").constructor.name).toBe("Request");
    expect(new Request("http://127.0.0.1/")).not.toBeInstanceOf(RollupRequest);
    await h.close();
  });

  it("has @deroll/app's openapi-fetch build RollupRequests, whose bodies the transport reads without a stream", async () => {
    // dapp/transports/http.ts evaluated @deroll/app, and the openapi-fetch it requires, while RollupRequest was the
    // global Request. That openapi-fetch is the one @deroll/app's own require finds (its CommonJS build).
    await import("../../dapp/transports/http.ts");
    const derollMain = createRequire(import.meta.url).resolve("@deroll/app");
    const { default: createClient } = createRequire(derollMain)("openapi-fetch") as typeof import("openapi-fetch");
    const seen: unknown[] = [];
    const client = createClient<never>({
      baseUrl: "http://127.0.0.1:9",
      fetch: async (input) => {
        seen.push(input);
        return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
      },
    }) as unknown as { POST(path: string, init: { body: unknown; parseAs: "text" }): Promise<{ data?: string }> };
    expect((await client.POST("/finish", { body: { status: "accept" }, parseAs: "text" })).data).toBe("{}");
    expect(seen).toHaveLength(1);
    const request = seen[0] as RollupRequest;
    expect(request).toBeInstanceOf(RollupRequest);
    expect(request.method).toBe("POST");
    expect(request.url).toBe("http://127.0.0.1:9/finish");
    expect(request.bytesGiven?.toString("utf8")).toBe('{"status":"accept"}');
    expect(request.headers.get("content-type")).toBe("application/json");
  });
});
