/**
 * On chain without hand work (docs/eas.md), on Rollups v1 and v2: a stack started with `publish` deploys the
 * registry and the gate beside its application and runs the publisher. Attestations made through the api
 * (plain, proven by one TLS attestor, proven by a quorum of two) and then revoked through the api reach
 * the chain with no other call: EAS's own SDK (@ethereum-attestation-service/eas-sdk), pointed at the
 * stack's registry, reads them valid, with their schema and their attestors, then revoked; the gate (the
 * registry's other face) says how many attestors proved each. On v1, a publisher killed each time it has
 * just sent a transaction, and started again, records nothing twice and sends no batch notice in two.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeFunctionData, parseAbiItem, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPublisherConfig } from "../../api/publisher/config.ts";
import { openPublisher } from "../../api/publisher/open.ts";
import { decodeBatchNotice } from "../../common/attestation-batch.ts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { TEST_JWT_SECRET, tokenFor, USER_A } from "../support/api-fixtures.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { freePorts, processArgs, PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";
import { JsonRpcProvider, sdk } from "../support/eas-sdk.ts";
import { until } from "../support/until.ts";
import { attestorKeyIn, bucketDefinition, callApi, definition, field, quorumSchema, quorumSchemaId, recipient, schema, schemaId, type ApiAnswer } from "./attestor-e2e-support.ts";

/** A project script as a user runs it, its output kept. */
function runNode(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";
const plainSchema = { provider: "http", flowType: "plain-balance", domain: "127.0.0.1", bucketDefinitions: { [field]: definition }, dataKeys: ["data.currency"], freshnessHalfLife: 3600 };

describe.each(["v1", "v2"] as const)("attestations on chain without hand work (%s)", (rollups) => {
  let pki: TestPki;
  let tlsProvider: ProviderServer;
  let plainProvider: ProviderServer;
  let stack: TestStack;
  let userToken: string;
  const call = (method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer> => callApi(stack.urls.api, method, path, token, body);
  const claim = async (extra: Record<string, unknown>, url: string): Promise<Hex> => {
    const answer = await call("POST", "/api/core/claim", userToken, { provider: "http", params: { url, method: "GET", headers: {} }, bucketDefinition, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data?.claimId as Hex;
  };
  const closeEpoch = async (): Promise<void> => void (await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" }));

  /** `npm run publish` on the stack's node and chain, for `contracts`, batches of 3, polling every 100 ms. */
  const spawnPublisher = (contracts: { registry: Address; gate: Address }, env: Record<string, string>) =>
    spawn(process.execPath, processArgs("api/publisher/main.ts"), {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, ROLLUPS: rollups, ROLLUP_URL: stack.urls.node, RPC_URL: stack.urls.rpc, REGISTRY_ADDRESS: contracts.registry, GATE_ADDRESS: contracts.gate, PUBLISH_BATCH_MAX: "3", PUBLISH_POLL_MS: "100", ...env },
      stdio: "ignore",
    });

  beforeAll(async () => {
    pki = createTestPki();
    tlsProvider = await startProviderServer({ tls: pki.localhost });
    plainProvider = await startProviderServer();
    for (const p of [tlsProvider, plainProvider]) p.route("/balance", { kind: "json", value: { data: { balance: 4321.5, currency: "EUR" } } });
    stack = await startStack({
      api: true,
      index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
      attestor: true,
      attestors: 2,
      attestorCaFiles: pki.ca.certPath,
      publish: true,
      rollups,
      env: { PROVIDER_ALLOWED_HOSTS: "localhost,127.0.0.1", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", PUBLISH_POLL_MS: "100", PUBLISH_BATCH_MAX: "3" },
    });
    const admin = await tokenFor("admin", stack.addresses.admin);
    userToken = await tokenFor("user", USER_A);
    for (const s of [plainSchema, schema, quorumSchema]) expect((await call("POST", "/api/core/provider-schema", admin, s)).body.data).toEqual({ schema_id: schemaIdOf(s) });
    expect((await call("POST", "/api/core/encryption-key", admin, { publicKey: Buffer.from(recipient.publicKey).toString("base64"), algorithm: "nacl-box" })).status).toBe(200);
    // As npm start does: the stack's two attestors registered in the rollup.
    for (const k of [1, 2]) {
      const address = privateKeyToAccount(attestorKeyIn(stack.dataDir, k)).address;
      expect((await call("POST", "/api/core/attestors", admin, { address, name: `attestor ${k}` })).status).toBe(200);
    }
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await tlsProvider?.close();
    await plainProvider?.close();
  });

  it("deploys the registry and the gate at the stack's addresses, and the api says where they are", async () => {
    const contracts = stack.contracts as { registry: Address; gate: Address };
    for (const address of [contracts.registry, contracts.gate]) expect(await stack.client.publicClient.getCode({ address })).toMatch(/^0x[0-9a-f]{100,}/);
    const status = await call("GET", "/api/core/status");
    expect(status.body.data?.contracts).toEqual({ registry: contracts.registry.toLowerCase(), gate: contracts.gate.toLowerCase() });
    const registry = contractArtifact(stackContracts(rollups).registry);
    const bound = await stack.client.publicClient.readContract({ address: contracts.registry, abi: registry.abi, functionName: "application" });
    expect(String(bound).toLowerCase()).toBe(stack.addresses.dapp.toLowerCase());
  });

  it("plain, proven and quorum attestations made through the api read valid through EAS's SDK, then revoked", { timeout: 240_000 }, async () => {
    const contracts = stack.contracts as { registry: Address; gate: Address };
    const plain = await claim({ schemaId: schemaIdOf(plainSchema) }, plainProvider.url("/balance", "127.0.0.1"));
    const proven = await claim({ schemaId }, tlsProvider.url("/balance"));
    const quorum = await claim({ schemaId: quorumSchemaId }, tlsProvider.url("/balance"));
    const eas = new sdk.EAS(contracts.registry);
    eas.connect(new JsonRpcProvider(stack.urls.rpc));
    const registry = new sdk.SchemaRegistry(contracts.registry);
    registry.connect(new JsonRpcProvider(stack.urls.rpc));

    for (const uid of [plain, proven, quorum]) {
      const read = await until(
        async () => {
          await closeEpoch();
          return eas.getAttestation(uid);
        },
        (a) => a.uid.toLowerCase() === uid,
        `attestation ${uid} in the registry`,
        90_000,
      );
      expect(read.recipient.toLowerCase()).toBe(USER_A.toLowerCase());
      expect(read.revocationTime).toBe(0n);
      expect(await eas.isAttestationValid(uid)).toBe(true);
      // The SDK answers an ethers Result: its named members are what a consumer reads.
      const record = await registry.getSchema({ uid: read.schema });
      expect({ uid: record.uid, schema: record.schema, revocable: record.revocable }).toEqual({ uid: read.schema, schema: DATA_SCHEMA, revocable: true });
    }
    const attestorsOf = async (uid: Hex): Promise<string[]> => {
      const decoded = new sdk.SchemaEncoder(DATA_SCHEMA).decodeData((await eas.getAttestation(uid)).data);
      return (decoded.find((d) => d.name === "attestors")?.value.value as string[]).map((a) => a.toLowerCase());
    };
    expect(await attestorsOf(plain)).toEqual([]);
    expect(await attestorsOf(proven)).toHaveLength(1);
    const two = await attestorsOf(quorum);
    expect(new Set(two).size).toBe(2);
    const registryAbi = contractArtifact(stackContracts(rollups).registry).abi;
    const read = (functionName: string, args: readonly unknown[], address: Address = contracts.registry, abi = registryAbi) => stack.client.publicClient.readContract({ address, abi, functionName, args });
    expect(await read("isAttestationValidWith", [quorum, 2n])).toBe(true);
    expect(await read("isAttestationValidWith", [proven, 2n])).toBe(false);
    const gateAbi = contractArtifact(stackContracts(rollups).gate).abi;
    // The gate answers from the registry's records: nothing is brought to it.
    for (const [uid, sid] of [[proven, schemaId], [quorum, quorumSchemaId]] as const) {
      await until(() => read("attestationOf", [USER_A, sid], contracts.gate, gateAbi) as Promise<{ claimId: Hex }>, (r) => r.claimId.toLowerCase() === uid, `the gate holding ${uid}`, 60_000);
    }
    expect(await read("hasBucketByAttestors", [USER_A, quorumSchemaId, field, "high", 2n], contracts.gate, gateAbi)).toBe(true);
    expect(await read("hasBucketByAttestors", [USER_A, schemaId, field, "high", 2n], contracts.gate, gateAbi)).toBe(false);
    expect(await read("hasBucketByAttestors", [USER_A, schemaId, field, "high", 1n], contracts.gate, gateAbi)).toBe(true);

    for (const uid of [plain, proven, quorum]) {
      const revoked = await call("POST", `/api/core/attestation/${uid}/revoke`, userToken, { reason: "closed" });
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    }
    for (const uid of [plain, proven, quorum]) {
      const after = await until(
        async () => {
          await closeEpoch();
          return eas.getAttestation(uid);
        },
        (a) => a.revocationTime > 0n,
        `revocation of ${uid} in the registry`,
        90_000,
      );
      expect(after.uid.toLowerCase()).toBe(uid);
      expect(await eas.isAttestationValid(uid)).toBe(false);
    }
    expect(await read("revokedAt", [quorum], contracts.gate, gateAbi)).not.toBe(0n);
    expect(await read("hasBucketByAttestors", [USER_A, quorumSchemaId, field, "high", 1n], contracts.gate, gateAbi)).toBe(false);
    // The publisher counts a batch once it has read its receipt, a round after the chain holds it.
    const metrics = await until(async () => (await fetch(`${stack.publisherUrl}/metrics`)).text(), (text) => /^publisher_pending\{kind="revocation",stage="proof"\} 0$/m.test(text) && /^publisher_pending\{kind="revocation",stage="send"\} 0$/m.test(text), "the publisher settling the revocations", 30_000);
    expect(metrics).toMatch(/^publisher_published\{kind="attestation"\} [1-9]/m);
    expect(metrics).toMatch(/^publisher_published\{kind="revocation"\} [1-9]/m);
    expect(metrics).toMatch(/^publisher_transactions_total [1-9]/m);
    // The api says the same of each, as the explorer shows it.
    const onChain = await call("GET", `/api/core/attestation/${quorum}/onchain`);
    expect(onChain.body.data).toMatchObject({ registry: { recorded: true, valid: false, revokedAt: expect.any(Number) }, gate: { recorded: true, attestorCount: 2, revokedAt: expect.any(Number) } });
  });

  // Once, on v1: what a restart and a budget do does not depend on the Rollups version.
  if (rollups === "v1") {
  it("a publisher killed each time it has sent a transaction, and started again, records nothing twice", { timeout: 240_000 }, async () => {
    const contracts = stack.contracts as { registry: Address; gate: Address };
    // One after the other: each goes alone, an input and a batch notice of its own, three to a transaction.
    const sentCount = () => (stack.logs("publisher").match(/ sent \(transaction /g) ?? []).length;
    let sentAtKill = sentCount();
    const uids: Hex[] = [];
    for (let k = 0; k < 9; k++) uids.push(await claim({ schemaId: schemaIdOf(plainSchema) }, plainProvider.url("/balance", "127.0.0.1")));
    await closeEpoch();
    const registryAbi = contractArtifact(stackContracts(rollups).registry).abi;
    const recordedAll = async () => {
      for (const uid of uids) {
        const found = (await stack.client.publicClient.readContract({ address: contracts.registry, abi: registryAbi, functionName: "getAttestation", args: [uid] })) as { uid: Hex };
        if (found.uid.toLowerCase() !== uid) return false;
      }
      return true;
    };
    // Counted from the previous kill, not from the restart: a restarted publisher may send its next
    // transaction (or all that remain) before this loop looks again. Once everything is recorded there is
    // nothing left to send, and so nothing left to kill it after.
    let kills = 0;
    for (let kill = 0; kill < 3; kill++) {
      const state = await until(async () => (sentCount() > sentAtKill ? "sent" : (await recordedAll()) ? "done" : "waiting"), (s) => s !== "waiting", "the publisher sending a batch", 60_000);
      if (state === "done") break;
      sentAtKill = sentCount();
      await stack.kill("publisher", "SIGKILL");
      await stack.start("publisher");
      kills++;
    }
    expect(kills).toBeGreaterThan(0);
    for (const uid of uids) {
      await until(
        async () => ((await stack.client.publicClient.readContract({ address: contracts.registry, abi: registryAbi, functionName: "getAttestation", args: [uid] })) as { uid: Hex }).uid,
        (found) => found.toLowerCase() === uid,
        `attestation ${uid} in the registry`,
        90_000,
      );
    }
    // Recorded once each: one Attested event per uid.
    const attested = await stack.client.publicClient.getLogs({ address: contracts.registry, event: parseAbiItem("event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)"), fromBlock: 0n });
    const counts = new Map<string, number>();
    for (const log of attested) counts.set(String(log.args.uid), (counts.get(String(log.args.uid)) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (const uid of uids) expect(counts.get(uid)).toBe(1);
    // And sent once each: no batch notice in two of the publisher's transactions, and none to the gate.
    const wallet = "0xbDA5747bFD65F08deb54cb465eB87D40e51B197E".toLowerCase();
    const head = await stack.client.publicClient.getBlockNumber({ cacheTime: 0 });
    const carried = new Map<bigint, string[]>();
    for (let n = 0n; n <= head; n++) {
      const block = await stack.client.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        if (tx.from.toLowerCase() !== wallet || tx.to === null) continue;
        expect(tx.to.toLowerCase()).toBe(contracts.registry.toLowerCase());
        const { functionName, args } = decodeFunctionData({ abi: registryAbi, data: tx.input });
        expect(functionName).toBe("recordMany");
        for (const notice of (args?.[0] ?? []) as Hex[]) {
          const input = decodeBatchNotice(notice).inputIndex;
          carried.set(input, [...(carried.get(input) ?? []), tx.hash]);
        }
      }
    }
    const twice = [...carried].filter(([, hashes]) => hashes.length > 1);
    expect(twice).toEqual([]);
    expect(carried.size).toBeGreaterThan(0);
  });

  it("npm run deploy-contracts puts another registry and gate beside the application; a publisher on a small gas budget never passes it", { timeout: 240_000 }, async () => {
    const deployerKey = hardhatPrivateKey(14);
    const deployed = await runNode([...processArgs("scripts/deploy-contracts.ts"), "--rpc", stack.urls.rpc, "--application", stack.addresses.dapp, "--rollups", rollups, "--key", deployerKey], {});
    expect(deployed.status, deployed.stderr).toBe(0);
    const contracts = JSON.parse(deployed.stdout) as { registry: Address; gate: Address };
    expect(contracts.registry).not.toBe(stack.contracts?.registry);
    const [port] = await freePorts(1);
    const budget = 1_000_000;
    const dataDir = mkdtempSync(join(tmpdir(), "publisher-budget-"));
    const publisher = spawnPublisher(contracts, { PUBLISHER_PRIVATE_KEY: hardhatPrivateKey(15), PUBLISHER_PORT: String(port), PUBLISH_GAS_PER_HOUR: String(budget), DATA_DIR: dataDir });
    try {
      const metrics = await until(
        async () => {
          try {
            return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          } catch {
            return "";
          }
        },
        (text) => /^publisher_budget_waits_total [1-9]/m.test(text),
        "the publisher waiting for its budget",
        90_000,
      );
      const lastHour = Number(/^publisher_gas_last_hour (\d+)/m.exec(metrics)?.[1]);
      expect(lastHour).toBeGreaterThan(0);
      expect(lastHour).toBeLessThanOrEqual(budget);
      // Proven and held back by the budget: ready to send, not waiting for a proof.
      expect(Number(/^publisher_pending\{kind="attestation",stage="send"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);
      // What it already sent stays within the budget too, by the chain's own count of the gas.
      expect(Number(/^publisher_gas_spent (\d+)/m.exec(metrics)?.[1])).toBeLessThanOrEqual(budget);
    } finally {
      publisher.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("a transaction signed and kept but never broadcast (killed in between) is broadcast on restart: the same bytes, mined once", { timeout: 240_000 }, async () => {
    const deployed = await runNode([...processArgs("scripts/deploy-contracts.ts"), "--rpc", stack.urls.rpc, "--application", stack.addresses.dapp, "--rollups", rollups, "--key", hardhatPrivateKey(12)], {});
    expect(deployed.status, deployed.stderr).toBe(0);
    const contracts = JSON.parse(deployed.stdout) as { registry: Address; gate: Address };
    const dataDir = mkdtempSync(join(tmpdir(), "publisher-unsent-"));
    const config = loadPublisherConfig({
      ROLLUPS: rollups,
      ROLLUP_URL: stack.urls.node,
      RPC_URL: stack.urls.rpc,
      REGISTRY_ADDRESS: contracts.registry,
      GATE_ADDRESS: contracts.gate,
      PUBLISHER_PRIVATE_KEY: hardhatPrivateKey(11),
      DATA_DIR: dataDir,
    });
    const quiet = { log: () => undefined };
    try {
      // The first process dies between keeping its transaction and broadcasting it.
      const first = openPublisher(config, quiet);
      first.chain.broadcast = () => Promise.reject(new Error("killed before the broadcast"));
      await first.publisher.round();
      const [kept] = first.store.inFlight();
      first.store.close();
      if (kept === undefined) throw new Error("the first publisher kept no transaction");
      expect(await first.chain.known(kept.hash)).toBe(false);
      // The next one finds it unknown to the node and sends those very bytes: the same hash, mined.
      const second = openPublisher(config, quiet);
      try {
        await until(async () => (await second.publisher.round(), second.store.inFlight().length), (n) => n === 0, "the kept transaction settled", 60_000);
        const receipt = await stack.client.publicClient.getTransactionReceipt({ hash: kept.hash });
        expect(receipt.status).toBe("success");
        const tx = await stack.client.publicClient.getTransaction({ hash: kept.hash });
        expect(tx.nonce).toBe(kept.nonce);
      } finally {
        second.store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("a batch above the chain's per-transaction gas cap goes in halves, each under PUBLISH_TX_GAS_MAX", { timeout: 240_000 }, async () => {
    const deployed = await runNode([...processArgs("scripts/deploy-contracts.ts"), "--rpc", stack.urls.rpc, "--application", stack.addresses.dapp, "--rollups", rollups, "--key", hardhatPrivateKey(13)], {});
    expect(deployed.status, deployed.stderr).toBe(0);
    const contracts = JSON.parse(deployed.stdout) as { registry: Address; gate: Address };
    const cap = 1_300_000;
    const [port] = await freePorts(1);
    const dataDir = mkdtempSync(join(tmpdir(), "publisher-cap-"));
    const wallet = privateKeyToAccount(hardhatPrivateKey(16)).address.toLowerCase();
    const from = await stack.client.publicClient.getBlockNumber({ cacheTime: 0 });
    const publisher = spawnPublisher(contracts, { PUBLISHER_PRIVATE_KEY: hardhatPrivateKey(16), PUBLISHER_PORT: String(port), PUBLISH_TX_GAS_MAX: String(cap), DATA_DIR: dataDir });
    try {
      // Everything the stack's rollup has claimed so far, published: nothing pending, nothing failing.
      const health = await until(
        async () => {
          try {
            return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { pending: { attestation: number; revocation: number }; published: { attestation: number }; lastError: string | null };
          } catch {
            return undefined;
          }
        },
        (h) => h !== undefined && h.published.attestation >= 3 && h.pending.attestation === 0 && h.pending.revocation === 0,
        "the publisher recording every claimed notice",
        120_000,
      );
      expect(health?.lastError).toBeNull();
      const head = await stack.client.publicClient.getBlockNumber({ cacheTime: 0 });
      const sizes: number[] = [];
      for (let n = from; n <= head; n++) {
        const block = await stack.client.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
        for (const tx of block.transactions) {
          if (tx.from.toLowerCase() !== wallet || tx.to?.toLowerCase() !== contracts.registry.toLowerCase()) continue;
          expect(tx.gas).toBeLessThanOrEqual(BigInt(cap));
          const { functionName, args } = decodeFunctionData({ abi: contractArtifact(stackContracts(rollups).registry).abi, data: tx.input });
          if (functionName === "recordMany") sizes.push(((args?.[0] ?? []) as unknown[]).length);
        }
      }
      // Every batch notice the rollup holds needs more than the cap in one transaction: they went in several.
      expect(sizes.length).toBeGreaterThan(1);
    } finally {
      publisher.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  }
});
