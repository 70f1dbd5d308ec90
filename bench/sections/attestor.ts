/**
 * `npm run bench -- --attestor`: what a claim proven by TLS attestors costs, against a plain claim measured
 * in the same run. The whole stack runs (chain, devnode, dapp, api) with three real attestor processes,
 * against a local HTTPS provider with a throwaway CA. Rows:
 * - the api proves (`POST /api/core/claim`), both modes, one claim at a time, one prover process;
 * - the user proves (client/prove.ts, as `npm run prove`), both modes, with a quorum of 1 and of 3: the
 *   user's time and prover memory, and the attestors' CPU per claim (the server's share of proving);
 * - the api relays user-proven claims (`POST /api/core/claim/proven`) from 64 clients, against plain claims
 *   from 64 clients in the same run.
 * Memory is each process's peak RSS (VmHWM); CPU is utime + stime from /proc.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { privateKeyToAccount } from "viem/accounts";
import { issueToken } from "../../api/auth/tokens.ts";
import { proveOnUserSide, userSideProvers, type ProvingSchema, type UserProvenClaim } from "../../client/prove.ts";
import type { ProverPool } from "../../common/prover-pool.ts";
import { startProviderServer } from "../../test/support/provider-server.ts";
import { startStack } from "../../test/support/stack.ts";
import { createTestPki } from "../../test/support/tls.ts";
import { runLoad } from "../load.ts";
import { procStatusKiB } from "../procs.ts";
import { figure, type Figure } from "../report.ts";
import { summarize, type LatencySummary } from "../stats.ts";

const JWT_SECRET = "bench-secret-bench-secret-bench-secret-0123";
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const field = "data.balance";
const buckets = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };

export interface AttestorBenchOptions {
  /** Timed claims per mode. */
  claims: number;
  /** Untimed claims per mode before the timed ones (the api's prover, the user's provers warm). */
  warmup: number;
  /** Claims sent by the 64 clients, relayed and plain each. */
  loadClaims: number;
  /** Run the indexer beside the api, as npm start does (no figure reads it). */
  indexer: boolean;
  log: (line: string) => void;
}

/** CPU time a process has used so far (utime + stime), in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

export async function attestorRows(options: AttestorBenchOptions): Promise<{ figures: Figure[]; notes: string[] }> {
  const pki = createTestPki();
  const provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
  // Plain claims under load read a plain HTTP provider, as the main bench's throughput rows do.
  const plainProvider = await startProviderServer();
  plainProvider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
  const stack = await startStack({
    api: true,
    index: options.indexer,
    attestor: true,
    attestors: 3,
    attestorCaFiles: pki.ca.certPath,
    // One prover: the api's figures are one claim's, not a pool's.
    env: { PROVIDER_ALLOWED_HOSTS: "localhost,127.0.0.1", NODE_EXTRA_CA_CERTS: pki.ca.certPath, JWT_SECRET, RATE_LIMITS: "off", ATTESTOR_PROVERS: "1" },
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
    const plainHttp = (await post("/api/core/provider-schema", admin, { ...base, domain: "127.0.0.1", flowType: "plain-http" })).data as { schema_id: string };
    const proven = (await post("/api/core/provider-schema", admin, { ...base, flowType: "proven", proof: "attestor" })).data as { schema_id: string };
    const provenByThree = (await post("/api/core/provider-schema", admin, { ...base, flowType: "proven-by-3", proof: "attestor", attestorQuorum: 3 })).data as { schema_id: string };
    const publicKey = Buffer.from(nacl.box.keyPair().publicKey).toString("base64");
    await post("/api/core/encryption-key", admin, { publicKey, algorithm: "nacl-box" });
    for (const name of ["attestor-key", "attestor-key-2", "attestor-key-3"]) {
      const attestorKey = readFileSync(join(stack.dataDir, name), "utf8").trim() as `0x${string}`;
      await post("/api/core/attestors", admin, { address: privateKeyToAccount(attestorKey).address, name: `bench ${name}` });
    }

    const claims = async (schemaId: string, mode: "reveal" | "zk" | undefined, label: string): Promise<LatencySummary> => {
      const body = {
        provider: "http",
        params: { url: provider.url("/balance"), method: "GET", headers: {} },
        bucketDefinition: { field, ...buckets },
        schemaId,
        ...(mode === undefined ? {} : { proofMode: mode }),
      };
      for (let i = 0; i < options.warmup; i++) await post("/api/core/claim", user, body);
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

    // The user proves: as `npm run prove` does, the user's own prover processes, the data sealed here.
    const attestorPids = ["attestor", "attestor-2", "attestor-3"].map((piece) => stack.pid(piece as "attestor"));
    const attestorsCpu = (): number => attestorPids.reduce<number>((sum, pid) => sum + (pid === undefined ? 0 : cpuMs(pid)), 0);
    const provingSchema = (schemaId: string, quorum: number): ProvingSchema => ({
      schemaId: schemaId as `0x${string}`,
      domain: "localhost",
      field,
      definition: buckets,
      quorum,
      dataKeys: ["data.currency"],
      bucketFields: [field],
    });
    const proveHere = (schema: ProvingSchema, mode: "reveal" | "zk", provers?: ProverPool): Promise<UserProvenClaim> =>
      proveOnUserSide({
        request: { url: provider.url("/balance") },
        schema,
        sealTo: { kind: "admin", publicKey },
        owner: USER.toLowerCase() as `0x${string}`,
        attestorUrls: stack.urls.attestors,
        mode,
        caFiles: pki.ca.certPath,
        ...(provers === undefined ? {} : { provers }),
      });
    const floor = { name: "plain claim p50 (api fetches the provider itself)", value: plainClaims.p50 };
    // One `npm run prove` starts its prover processes, then proves: the start is paid once per run.
    const coldStarted = performance.now();
    await proveHere(provingSchema(proven.schema_id, 1), "reveal");
    const cold = performance.now() - coldStarted;
    options.log(`user-side reveal, quorum 1, cold (the prover process starts first): ${cold.toFixed(0)} ms`);
    const userSide: Figure[] = [figure("attestor", "user-side claim with the prover process's start (one npm run prove), reveal, quorum 1", "ms", cold, floor)];
    for (const [schemaId, quorum] of [
      [proven.schema_id, 1],
      [provenByThree.schema_id, 3],
    ] as const) {
      const provers = userSideProvers(quorum, { caFiles: pki.ca.certPath });
      try {
        for (const mode of ["reveal", "zk"] as const) {
          const schema = provingSchema(schemaId, quorum);
          for (let i = 0; i < options.warmup; i++) await proveHere(schema, mode, provers);
          const samples: number[] = [];
          let peak = 0;
          const cpuBefore = attestorsCpu();
          for (let i = 0; i < options.claims; i++) {
            const t = performance.now();
            const claim = await proveHere(schema, mode, provers);
            samples.push(performance.now() - t);
            peak = Math.max(peak, claim.stats.proverPeakRssBytes / 1048576);
          }
          const cpuPerClaim = (attestorsCpu() - cpuBefore) / options.claims;
          const summary = summarize(samples, 0);
          options.log(`user-side ${mode}, quorum ${quorum}: p50 ${summary.p50.toFixed(0)} ms, prover peak ${peak.toFixed(0)} MiB, attestors' CPU ${cpuPerClaim.toFixed(0)} ms a claim`);
          userSide.push(
            figure("attestor", `user-side claim p50, ${mode}, quorum ${quorum} (provers running; wall time on the user's machine)`, "ms", summary.p50, floor),
            figure("attestor", `user-side prover peak RSS, ${mode}, quorum ${quorum} (largest of the user's provers)`, "MiB", peak, { name: "api peak RSS", value: procStatusKiB(apiPid, "VmHWM") / 1024 }),
            figure("attestor", `attestors' CPU per user-side claim, ${mode}, quorum ${quorum}`, "ms", cpuPerClaim, floor),
          );
        }
      } finally {
        await provers.close();
      }
    }

    // The api relays user-proven claims from 64 clients, against plain claims from 64 clients: made first
    // (each signed claim is good for one attestation), then sent as fast as the api takes them.
    options.log(`proving ${options.loadClaims} claims on the user's side for the relay load...`);
    const relayBodies: Buffer[] = [];
    const schema1 = provingSchema(proven.schema_id, 1);
    const pairProvers = userSideProvers(2, { caFiles: pki.ca.certPath });
    try {
      for (let i = 0; i < options.loadClaims; i += 2) {
        const pair = await Promise.all([proveHere(schema1, "reveal", pairProvers), proveHere(schema1, "reveal", pairProvers)]);
        for (const claim of pair) {
          relayBodies.push(Buffer.from(JSON.stringify({ schemaId: claim.schemaId, field, bucket: claim.bucket, encryptedData: claim.encryptedData, proofs: claim.proofs })));
        }
      }
    } finally {
      await pairProvers.close();
    }
    const authHeaders = { authorization: `Bearer ${user}`, "content-type": "application/json" };
    const plainBody = Buffer.from(
      JSON.stringify({ provider: "http", params: { url: plainProvider.url("/balance", "127.0.0.1"), method: "GET", headers: {} }, bucketDefinition: { field, ...buckets }, schemaId: plainHttp.schema_id }),
    );
    const apiCpuBefore = cpuMs(apiPid);
    const relayed = await runLoad({
      baseUrl: stack.urls.api,
      concurrency: 64,
      count: relayBodies.length,
      warmup: 0,
      next: (i) => ({ method: "POST", path: "/api/core/claim/proven", body: relayBodies[i] as Buffer, headers: authHeaders }),
    });
    const apiCpuPerRelay = (cpuMs(apiPid) - apiCpuBefore) / relayBodies.length;
    const plainLoad = await runLoad({
      baseUrl: stack.urls.api,
      concurrency: 64,
      count: relayBodies.length,
      warmup: 0,
      next: () => ({ method: "POST", path: "/api/core/claim", body: plainBody, headers: authHeaders }),
    });
    options.log(`64 clients: relayed ${relayed.rps.toFixed(0)}/s (p99 ${relayed.p99.toFixed(0)} ms), plain ${plainLoad.rps.toFixed(0)}/s (p99 ${plainLoad.p99.toFixed(0)} ms)`);
    const plainRate = { name: "plain claims per second, 64 clients, same run", value: plainLoad.rps };

    const memoryFloor = { name: "api peak RSS", value: apiPeak };
    const figures = [
      figure("attestor", "claim p50, reveal (TLS 1.3 keys shown to the attestor)", "ms", revealClaims.p50, floor),
      figure("attestor", "claim p99, reveal", "ms", revealClaims.p99, floor),
      figure("attestor", "claim p50, zk (ChaCha20 records proven with Stwo)", "ms", zkClaims.p50, floor),
      figure("attestor", "claim p99, zk", "ms", zkClaims.p99, floor),
      figure("attestor", "prover peak RSS after reveal claims", "MiB", revealPeak, memoryFloor),
      figure("attestor", "prover peak RSS after zk claims", "MiB", zkPeak, memoryFloor),
      figure("attestor", "attestor peak RSS (it verifies the zk proofs)", "MiB", attestorPeak, memoryFloor),
      ...userSide,
      figure("attestor", "relayed user-proven claims per second, 64 clients", "claims/s", relayed.rps, plainRate),
      figure("attestor", "relayed user-proven claim p99, 64 clients", "ms", relayed.p99, { name: "plain claim p99, 64 clients", value: plainLoad.p99 }),
      figure("attestor", "api CPU per relayed claim (checks the signed claims, sends the input)", "ms", apiCpuPerRelay, floor),
    ];
    const notes = [
      `Attestor rows: ${options.claims} claims per mode, one at a time; the api's claims through one prover process (ATTESTOR_PROVERS=1), local HTTPS provider on TLS 1.3; plain claim p50 ${plainClaims.p50.toFixed(1)} ms, api peak RSS ${apiPeak.toFixed(0)} MiB.`,
      `User-side rows: client/prove.ts as npm run prove runs it (one prover process per attestor, at once); a quorum of 3 proves through three attestor processes on this same 2-core machine, so its time includes their contention.`,
      `Relay rows: ${relayBodies.length} claims proven beforehand (reveal, quorum 1), then sent by 64 clients to POST /api/core/claim/proven; the same number of plain claims (a plain HTTP provider on loopback, as in the main bench) from 64 clients right after, same stack (group commit on).`,
    ];
    return { figures, notes };
  } finally {
    await stack.stop();
    await provider.close();
    await plainProvider.close();
    pki.cleanup();
  }
}
