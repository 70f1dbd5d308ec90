/**
 * `npm run bench -- --attestor`: what a claim proven by the TLS attestor costs, in both modes, against a
 * plain claim measured in the same run. The whole stack runs (chain, devnode, dapp, api) with the real
 * attestor process and the api's prover process, against a local HTTPS provider with a throwaway CA;
 * claims go one at a time through `POST /api/core/claim`. Memory is each process's peak RSS (VmHWM).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { privateKeyToAccount } from "viem/accounts";
import { issueToken } from "../api/auth/tokens.ts";
import { startProviderServer } from "../test/support/provider-server.ts";
import { startStack } from "../test/support/stack.ts";
import { createTestPki } from "../test/support/tls.ts";
import { procStatusKiB } from "./procs.ts";
import { figure, type Figure } from "./report.ts";
import { summarize, type LatencySummary } from "./stats.ts";

const JWT_SECRET = "bench-secret-bench-secret-bench-secret-0123";
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const field = "data.balance";
const buckets = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };

export interface AttestorBenchOptions {
  /** Claims per mode (after one untimed claim each). */
  claims: number;
  log: (line: string) => void;
}

export async function attestorRows(options: AttestorBenchOptions): Promise<{ figures: Figure[]; notes: string[] }> {
  const pki = createTestPki();
  const provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
  const stack = await startStack({
    api: true,
    attestor: true,
    attestorCaFiles: pki.ca.certPath,
    // One prover: the figures are one claim's, not a pool's.
    env: { PROVIDER_ALLOWED_HOSTS: "localhost", NODE_EXTRA_CA_CERTS: pki.ca.certPath, JWT_SECRET, RATE_LIMITS: "off", ATTESTOR_PROVERS: "1" },
  });
  try {
    const secret = new TextEncoder().encode(JWT_SECRET);
    const admin = (await issueToken(secret, stack.addresses.admin, "admin")).token;
    const user = (await issueToken(secret, USER, "user")).token;
    const post = async (path: string, token: string, body: unknown): Promise<Record<string, unknown>> => {
      const response = await fetch(`${stack.urls.api}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const base = { provider: "http", domain: "localhost", bucketDefinitions: { [field]: buckets }, dataKeys: ["data.currency"], freshnessHalfLife: 3600 };
    const plain = (await post("/api/core/provider-schema", admin, { ...base, flowType: "plain" })).data as { schema_id: string };
    const proven = (await post("/api/core/provider-schema", admin, { ...base, flowType: "proven", proof: "attestor" })).data as { schema_id: string };
    await post("/api/core/encryption-key", admin, { publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
    const attestorKey = readFileSync(join(stack.dataDir, "attestor-key"), "utf8").trim() as `0x${string}`;
    await post("/api/core/attestors", admin, { address: privateKeyToAccount(attestorKey).address, name: "bench" });

    const claims = async (schemaId: string, mode: "reveal" | "zk" | undefined, label: string): Promise<LatencySummary> => {
      const body = {
        provider: "http",
        params: { url: provider.url("/balance"), method: "GET", headers: {} },
        bucketDefinition: { field, ...buckets },
        schemaId,
        ...(mode === undefined ? {} : { proofMode: mode }),
      };
      await post("/api/core/claim", user, body);
      const samples: number[] = [];
      const started = performance.now();
      for (let i = 0; i < options.claims; i++) {
        const t = performance.now();
        await post("/api/core/claim", user, body);
        samples.push(performance.now() - t);
      }
      const summary = summarize(samples, (performance.now() - started) / 1000);
      options.log(`${label}: p50 ${summary.p50.toFixed(0)} ms, p99 ${summary.p99.toFixed(0)} ms over ${summary.count} claims`);
      return summary;
    };
    const apiPid = stack.pid("api");
    if (apiPid === undefined) throw new Error("the api is not running");
    const proverPeakMiB = (): number => {
      const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(apiPid)], { encoding: "utf8" }).trim().split(/\s+/).filter(Boolean);
      return Math.max(0, ...children.map((pid) => procStatusKiB(Number(pid), "VmHWM") / 1024));
    };

    const plainClaims = await claims(plain.schema_id, undefined, "plain claim");
    const revealClaims = await claims(proven.schema_id, "reveal", "proven claim, reveal");
    const revealPeak = proverPeakMiB();
    const zkClaims = await claims(proven.schema_id, "zk", "proven claim, zk (Stwo)");
    const zkPeak = proverPeakMiB();
    const apiPeak = procStatusKiB(apiPid, "VmHWM") / 1024;
    const attestorPid = stack.pid("attestor");
    const attestorPeak = attestorPid === undefined ? Number.NaN : procStatusKiB(attestorPid, "VmHWM") / 1024;

    const floor = { name: "plain claim p50 (api fetches the provider itself)", value: plainClaims.p50 };
    const memoryFloor = { name: "api peak RSS", value: apiPeak };
    const figures = [
      figure("attestor", "claim p50, reveal (TLS 1.3 keys shown to the attestor)", "ms", revealClaims.p50, floor),
      figure("attestor", "claim p99, reveal", "ms", revealClaims.p99, floor),
      figure("attestor", "claim p50, zk (ChaCha20 records proven with Stwo)", "ms", zkClaims.p50, floor),
      figure("attestor", "claim p99, zk", "ms", zkClaims.p99, floor),
      figure("attestor", "prover peak RSS after reveal claims", "MiB", revealPeak, memoryFloor),
      figure("attestor", "prover peak RSS after zk claims", "MiB", zkPeak, memoryFloor),
      figure("attestor", "attestor peak RSS (it verifies the zk proofs)", "MiB", attestorPeak, memoryFloor),
    ];
    const notes = [
      `Attestor rows: ${options.claims} claims per mode, one at a time, one prover process (ATTESTOR_PROVERS=1), local HTTPS provider on TLS 1.3; plain claim p50 ${plainClaims.p50.toFixed(1)} ms, api peak RSS ${apiPeak.toFixed(0)} MiB.`,
    ];
    return { figures, notes };
  } finally {
    await stack.stop();
    await provider.close();
    pki.cleanup();
  }
}
