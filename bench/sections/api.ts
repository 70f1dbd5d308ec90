/**
 * The api section, on the whole stack: `POST /api/core/claim` end to end (provider fetch, bucket, seal,
 * InputBox, verdict) from one client against one addInput round trip from another account, then
 * `GET /api/core/attestation/:id` against the inspect `attestation` figure; and the same claims from 16
 * and 64 clients at once (group commit: the writes section's claims/s rows, with how many InputBox
 * transactions they took). What a write costs in gas is bench/sections/writes.ts.
 */
import nacl from "tweetnacl";
import type { Address, Hex } from "viem";
import { issueToken } from "../../api/auth/tokens.ts";
import { jsonToHex } from "../../common/hex.ts";
import { startProviderServer } from "../../test/support/provider-server.ts";
import { inputsOnChain, type TestStack } from "../../test/support/stack.ts";
import { keepAliveAgent, loopbackTarget, runLoad, send, type LoadRequest, type LoadResult } from "../load.ts";
import { figure } from "../report.ts";
import { summarize, type LatencySummary } from "../stats.ts";
import type { BenchContext, SectionRows } from "./context.ts";
import { addInputData, JWT_SECRET, rpc, type RpcAnswer } from "./whole-stack.ts";

export const GROUP_CONCURRENCY = [1, 16, 64] as const;
const USER = "0x90f79bf6eb2c4f970365e785982e1f101e93b906" as Address;
/** Hardhat account #1: sends the chain floor's inputs (the api's wallet, #0, stays free for the api). */
const ACCOUNT_1 = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const CLAIM_BUCKETS = { field: "data.balance", boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };

/** addInput from account #1 (unlocked on hardhat) until its receipt: the chain's share of a claim. */
async function chainRoundTrips(stack: TestStack, samples: number): Promise<LatencySummary> {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    const sent = await rpc<RpcAnswer<Hex>>(stack.urls.rpc, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: ACCOUNT_1, to: stack.addresses.inputBox, data: addInputData(stack, jsonToHex({ type: "health", params: {} })), gas: "0x100000" }],
    });
    if (sent.result === undefined) throw new Error(`chain floor: ${sent.error?.message ?? "no result"}`);
    for (;;) {
      const receipt = await rpc<RpcAnswer<{ status: Hex } | null>>(stack.urls.rpc, {
        jsonrpc: "2.0",
        id: 2,
        method: "eth_getTransactionReceipt",
        params: [sent.result],
      });
      if (receipt.result !== null && receipt.result !== undefined) break;
    }
    times.push(performance.now() - t);
  }
  return summarize(times, (performance.now() - started) / 1000);
}

/** `inspectAttestation`: the inspect section's `attestation` c1 figure, the floor of the reads. */
export async function apiRows(ctx: BenchContext, stack: TestStack, inspectAttestation: LoadResult): Promise<SectionRows> {
  const { log, profile } = ctx;
  const figures: SectionRows["figures"] = [];
  const notes: string[] = [];
  const provider = await startProviderServer();
  try {
    provider.route("/balance", { kind: "json", value: { data: { balance: "512.5", currency: "EUR" } } });
    const secret = new TextEncoder().encode(JWT_SECRET);
    const adminToken = (await issueToken(secret, stack.addresses.admin, "admin")).token;
    const userToken = (await issueToken(secret, USER, "user")).token;
    const apiTarget = loopbackTarget(stack.urls.api);
    const agent = keepAliveAgent(1);
    const post = async (path: string, token: string, body: unknown) => {
      const answer = await send(agent, apiTarget, {
        method: "POST",
        path,
        body: Buffer.from(JSON.stringify(body)),
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      });
      if (answer.status !== 200) throw new Error(`${path}: HTTP ${answer.status} ${answer.body.toString("utf8")}`);
    };
    await post("/api/core/provider-schema", adminToken, {
      provider: "http",
      flowType: "balance",
      domain: "127.0.0.1",
      bucketDefinitions: { "data.balance": { boundaries: CLAIM_BUCKETS.boundaries, labels: CLAIM_BUCKETS.labels } },
      dataKeys: ["data.currency"],
      freshnessHalfLife: 86400,
    });
    await post("/api/core/encryption-key", adminToken, {
      publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"),
      algorithm: "nacl-box",
    });
    agent.destroy();
    const claimBody = Buffer.from(
      JSON.stringify({
        provider: "http",
        params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
        bucketDefinition: CLAIM_BUCKETS,
      }),
    );
    const claimIds: string[] = [];
    const claimRequest = (): LoadRequest => ({
      method: "POST",
      path: "/api/core/claim",
      body: claimBody,
      headers: { "content-type": "application/json", authorization: `Bearer ${userToken}` },
    });
    const claim = await runLoad({
      baseUrl: stack.urls.api,
      concurrency: 1,
      count: profile.claims,
      warmup: profile.claimWarmup,
      next: claimRequest,
      check: (status, body) => {
        const parsed = JSON.parse(body.toString("utf8")) as { success?: boolean; data?: { claimId?: string } };
        if (status !== 200 || parsed.success !== true || parsed.data?.claimId === undefined) {
          throw new Error(`claim failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
        }
        claimIds.push(parsed.data.claimId);
      },
    });
    log(`claim: p50 ${claim.p50.toFixed(1)} ms p99 ${claim.p99.toFixed(1)} ms`);
    const read = await runLoad({
      baseUrl: stack.urls.api,
      concurrency: 1,
      count: profile.reads,
      warmup: profile.readWarmup,
      next: (i) => ({ method: "GET", path: `/api/core/attestation/${claimIds[i % claimIds.length]}` }),
      check: (status, body) => {
        if (status !== 200 || !body.includes('"success":true')) throw new Error(`read failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
      },
    });
    log(`read: p50 ${read.p50.toFixed(2)} ms p99 ${read.p99.toFixed(2)} ms`);

    // Group commit: the same claims from 16 and 64 clients at once (c1 is the run above).
    const grouped = new Map<number, LoadResult>([[1, claim]]);
    for (const concurrency of [16, 64] as const) {
      const inputsBefore = await inputsOnChain(stack);
      const result = await runLoad({
        baseUrl: stack.urls.api,
        concurrency,
        count: profile.groupClaims[concurrency],
        warmup: concurrency,
        next: claimRequest,
        check: (status, body) => {
          if (status !== 200 || !body.includes('"success":true')) throw new Error(`claim c${concurrency} failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
        },
      });
      grouped.set(concurrency, result);
      const inputs = (await inputsOnChain(stack)) - inputsBefore;
      const claims = result.count + concurrency;
      log(`claims c${concurrency}: ${result.rps.toFixed(0)}/s p50 ${result.p50.toFixed(1)} ms p99 ${result.p99.toFixed(1)} ms; ${claims} claims in ${inputs} inputs`);
      notes.push(`writes c${concurrency}: ${claims} claims went in ${inputs} InputBox transactions (${(claims / inputs).toFixed(1)} a transaction).`);
    }

    // Claim floor: what the chain alone costs, an addInput round trip (send to receipt) from account #1.
    const chainRoundTrip = await chainRoundTrips(stack, profile.chainFloorSamples);
    figures.push(
      figure("api", "claim p50", "ms", claim.p50, { name: "addInput round trip p50", value: chainRoundTrip.p50 }, {
        target: { text: "<= 100 ms", met: (v: number) => v <= 100 },
      }),
      figure("api", "claim p99", "ms", claim.p99, { name: "addInput round trip p99", value: chainRoundTrip.p99 }),
      ...GROUP_CONCURRENCY.flatMap((c) => {
        const result = grouped.get(c) as LoadResult;
        const pipeline = { name: "one wallet's addInput pipeline", value: 1000 / chainRoundTrip.mean };
        const rate = figure("writes", `claims/s c${c}`, "claims/s", result.rps, pipeline, c === 64 ? { target: { text: ">= 1,000/s", met: (v: number) => v >= 1000 } } : {});
        // At c1 the latencies are the claim p50/p99 rows above.
        if (c === 1) return [rate];
        return [
          rate,
          figure("writes", `claim c${c} p50`, "ms", result.p50, { name: "addInput round trip p50", value: chainRoundTrip.p50 }),
          figure("writes", `claim c${c} p99`, "ms", result.p99, { name: "addInput round trip p99", value: chainRoundTrip.p99 }, c === 64 ? { target: { text: "< 250 ms", met: (v: number) => v < 250 } } : {}),
        ];
      }),
      figure("api", "read p50", "ms", read.p50, { name: "inspect attestation c1 p50", value: inspectAttestation.p50 }, {
        target: { text: "<= 5 ms", met: (v: number) => v <= 5 },
      }),
      figure("api", "read p99", "ms", read.p99, { name: "inspect attestation c1 p99", value: inspectAttestation.p99 }),
    );
  } finally {
    await provider.close();
  }
  return { figures, notes };
}
