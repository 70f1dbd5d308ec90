/**
 * What it costs to bring attestations on chain (issue 36), on a stack of its own (chain, devnode, dapp
 * bundle, api, the registry and the gate it deploys): claims made through the api, their epoch closed, and
 * the publisher (api/publisher/, opened in this process as `npm run publish` opens it) recording them with
 * batches of at most 1, 8 and 32. Gas per attestation of the registry's and the gate's `recordMany`, each
 * beside EAS's `attest` / `multiAttest` of as many attestations carrying the same data (the registry's
 * DATA_SCHEMA), deployed from EAS's bytecode on the same chain in the same run; and the publisher's delay
 * from the moment an epoch's proofs are readable to both contracts holding its notices, at the shipped poll
 * interval beside the same publisher polling every 50 ms. Every claim has an owner of its own, as a
 * rollup's attestations mostly do, so the gate's record of each owner and schema is a new one.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { createPublicClient, createWalletClient, encodeAbiParameters, http, parseAbiParameters, type Address, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { issueToken } from "../../api/auth/tokens.ts";
import { DEFAULT_PUBLISH_POLL_MS, loadPublisherConfig } from "../../api/publisher/config.ts";
import { openPublisher, type OpenPublisher } from "../../api/publisher/open.ts";
import type { Target } from "../../api/publisher/store.ts";
import { INPUT_INDEX_HEADER } from "../../api/rollup/read-context.ts";
import { GraphqlReader } from "../../api/rollup/graphql.ts";
import { JsonRpcReader } from "../../api/rollup/jsonrpc.ts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { startProviderServer, type ProviderServer } from "../../test/support/provider-server.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { until } from "../../test/support/until.ts";
import { deployEas, ZERO_UID } from "../eas.ts";
import { ownerAddress } from "../inputs.ts";
import { figure } from "../report.ts";
import { percentile } from "../stats.ts";
import type { BenchContext, SectionRows } from "./context.ts";
import { JWT_SECRET } from "./whole-stack.ts";

export const PUBLISH_BATCHES = [1, 8, 32] as const;
type PublishBatch = (typeof PUBLISH_BATCHES)[number];
/** Rounds of the delay figure, per poll interval: a few claims, their epoch closed, timed until recorded. */
const DELAY_ROUNDS = 4;
const CLAIMS_PER_DELAY_ROUND = 4;
/** The shortest poll the publisher's configuration allows. */
const FAST_POLL_MS = 50;

export function publisherGasFigure(target: Target, batch: PublishBatch): string {
  return `publisher gas per attestation, ${target} recordMany, batches of at most ${batch}`;
}
export const PUBLISHER_DELAY_FIGURE = "publisher delay, proofs readable to recorded p50";

export function publisherFigureNames(): string[] {
  return [...PUBLISH_BATCHES.flatMap((n) => [publisherGasFigure("registry", n), publisherGasFigure("gate", n)]), PUBLISHER_DELAY_FIGURE];
}

const FIELD = "data.balance";
const BUCKETS = { field: FIELD, boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };

interface Made {
  claimId: Hex;
  inputIndex: number;
}

/** Owners of the claims so far: each claim has one of its own. */
let nextOwner = 0;

/** The api's claims, 8 at a time (the api's group commit puts them in a few inputs), each by an owner of its own. */
async function makeClaims(stack: TestStack, url: string, count: number): Promise<Made[]> {
  const made: Made[] = [];
  const secret = new TextEncoder().encode(JWT_SECRET);
  const one = async (): Promise<void> => {
    const owner = ownerAddress(nextOwner++, 0x9b);
    const token = (await issueToken(secret, owner, "user")).token;
    const response = await fetch(`${stack.urls.api}/api/core/claim`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ provider: "http", params: { url, method: "GET", headers: {} }, bucketDefinition: BUCKETS }),
    });
    const body = (await response.json()) as { data?: { claimId?: Hex } };
    const index = Number(response.headers.get(INPUT_INDEX_HEADER));
    if (response.status !== 200 || body.data?.claimId === undefined || !Number.isInteger(index)) throw new Error(`publisher bench: claim failed: HTTP ${response.status} ${JSON.stringify(body)}`);
    made.push({ claimId: body.data.claimId, inputIndex: index });
  };
  for (let done = 0; done < count; done += 8) await Promise.all(Array.from({ length: Math.min(8, count - done) }, one));
  // The last input's claim last: the rounds wait for it.
  return made.sort((a, b) => a.inputIndex - b.inputIndex);
}

async function closeEpoch(stack: TestStack): Promise<void> {
  const response = await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
  if (!response.ok) throw new Error(`publisher bench: closing the epoch: HTTP ${response.status}`);
}

export async function publisherRows(ctx: BenchContext, rollups: "v1" | "v2"): Promise<SectionRows> {
  const { log } = ctx;
  let stack: TestStack | undefined;
  let provider: ProviderServer | undefined;
  let open: OpenPublisher | undefined;
  try {
    stack = await startStack({
      api: true,
      rollups,
      dataDir: mkdtempSync(join(ctx.work, "publisher-")),
      dappCommand: ctx.bundle.command,
      env: { RATE_LIMITS: "off", PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET },
      readyTimeoutMs: 120_000,
    });
    const s = stack;
    const contracts = s.contracts;
    if (contracts === undefined) throw new Error("publisher bench: the stack deployed no registry and gate");
    provider = await startProviderServer();
    provider.route("/balance", { kind: "json", value: { data: { balance: "4321.5", currency: "EUR" } } });
    const secret = new TextEncoder().encode(JWT_SECRET);
    const admin = (await issueToken(secret, s.addresses.admin, "admin")).token;
    const post = async (path: string, body: unknown): Promise<void> => {
      const response = await fetch(`${s.urls.api}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${admin}` }, body: JSON.stringify(body) });
      if (response.status !== 200) throw new Error(`publisher bench: ${path}: HTTP ${response.status} ${await response.text()}`);
    };
    await post("/api/core/provider-schema", {
      provider: "http",
      flowType: "publish",
      domain: "127.0.0.1",
      bucketDefinitions: { [FIELD]: { boundaries: BUCKETS.boundaries, labels: BUCKETS.labels } },
      dataKeys: ["data.currency"],
      freshnessHalfLife: 86400,
    });
    await post("/api/core/encryption-key", { publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
    const providerUrl = provider.url("/balance", "127.0.0.1");

    // Each publisher opens a state of its own, as a new process on a new DATA_DIR would.
    let opened = 0;
    const mined: { target: Target; count: number; gasUsed: number }[] = [];
    const startPublisher = (batchMax: number, pollMs: number): OpenPublisher => {
      const config = loadPublisherConfig({
        ROLLUPS: rollups,
        ROLLUP_URL: s.urls.node,
        RPC_URL: s.urls.rpc,
        DAPP_ADDRESS: s.addresses.dapp,
        REGISTRY_ADDRESS: contracts.registry,
        GATE_ADDRESS: contracts.gate,
        PUBLISH_BATCH_MAX: String(batchMax),
        PUBLISH_POLL_MS: String(pollMs),
        DATA_DIR: join(ctx.work, `publisher-state-${++opened}`),
      });
      const started = openPublisher(config, {
        log: (line) => log(`publisher: ${line}`),
        onPublished: (target, kind, count, gasUsed) => {
          if (kind === "attestation") mined.push({ target, count, gasUsed });
        },
      });
      started.publisher.start();
      return started;
    };
    const stopPublisher = async (): Promise<void> => {
      await open?.publisher.stop();
      open?.store.close();
      open = undefined;
    };
    const reader = createPublicClient({ chain: { ...hardhat, rpcUrls: { default: { http: [s.urls.rpc] } } }, transport: http(s.urls.rpc) });
    const registryAbi = contractArtifact(stackContracts(rollups).registry).abi;
    const gateAbi = contractArtifact(stackContracts(rollups).gate).abi;
    const bothHold = async (uid: Hex): Promise<boolean> => {
      const inRegistry = await reader.readContract({ address: contracts.registry, abi: registryAbi, functionName: "isAttestationValid", args: [uid] });
      if (inRegistry !== true) return false;
      const attestation = (await reader.readContract({ address: contracts.registry, abi: registryAbi, functionName: "getAttestation", args: [uid] })) as { schema: Hex; recipient: Address };
      const inGate = (await reader.readContract({ address: contracts.gate, abi: gateAbi, functionName: "attestationOf", args: [attestation.recipient, attestation.schema] })) as { claimId: Hex };
      return inGate.claimId.toLowerCase() === uid.toLowerCase();
    };

    // ---- gas: two full batches of each size, recorded by a publisher that takes at most that many at once ----
    const gas = {} as Record<Target, Record<PublishBatch, number>>;
    gas.registry = {} as Record<PublishBatch, number>;
    gas.gate = {} as Record<PublishBatch, number>;
    const transactions = { registry: {} as Record<PublishBatch, number>, gate: {} as Record<PublishBatch, number> };
    for (const batch of PUBLISH_BATCHES) {
      const made = await makeClaims(s, providerUrl, 2 * batch);
      await closeEpoch(s);
      mined.length = 0;
      open = startPublisher(batch, 100);
      const last = made[made.length - 1] as Made;
      await until(() => bothHold(last.claimId), Boolean, `recording ${made.length} attestations in batches of ${batch}`, 120_000, 100);
      await until(() => mined.filter((m) => m.target === "gate").reduce((n, m) => n + m.count, 0), (n) => n >= made.length, "every batch mined", 120_000, 50);
      await stopPublisher();
      for (const target of ["registry", "gate"] as const) {
        // Every transaction of the round: a batch above the chain's per-transaction cap went in halves.
        const sent = mined.filter((m) => m.target === target);
        const items = sent.reduce((sum, m) => sum + m.count, 0);
        gas[target][batch] = sent.reduce((sum, m) => sum + m.gasUsed, 0) / items;
        transactions[target][batch] = sent.length;
      }
      log(`publisher: batches of at most ${batch}: registry ${Math.round(gas.registry[batch])} gas per attestation (${transactions.registry[batch]} transactions), gate ${Math.round(gas.gate[batch])} (${transactions.gate[batch]})`);
    }

    // ---- delay: from the proofs being readable to both contracts holding the last notice ----
    const node = rollups === "v2" ? new JsonRpcReader(s.urls.node, s.addresses.dapp) : new GraphqlReader(`${s.urls.node}/graphql`);
    const proofsReadable = async (inputIndex: number): Promise<boolean> => {
      const notices: readonly object[] = await node.noticesWithProofs(inputIndex);
      return notices.some((n) => ("proof" in n && n.proof !== null) || ("siblings" in n && n.siblings !== null));
    };
    const delays = new Map<number, number[]>();
    for (const pollMs of [DEFAULT_PUBLISH_POLL_MS, FAST_POLL_MS]) {
      open = startPublisher(32, pollMs);
      // What earlier rounds brought is found held and dropped before the timed rounds start.
      const current = open;
      await until(() => current.store.counts().pending.attestation, (n) => n === 0, "the new publisher catching up", 120_000, 100);
      const samples: number[] = [];
      for (let round = 0; round < DELAY_ROUNDS; round++) {
        const made = await makeClaims(s, providerUrl, CLAIMS_PER_DELAY_ROUND);
        const last = made[made.length - 1] as Made;
        await closeEpoch(s);
        await until(() => proofsReadable(last.inputIndex), Boolean, "the epoch's proofs", 120_000, 10);
        const readable = performance.now();
        await until(() => bothHold(last.claimId), Boolean, "both contracts holding the epoch's notices", 120_000, 10);
        samples.push(performance.now() - readable);
      }
      await stopPublisher();
      delays.set(pollMs, samples.sort((a, b) => a - b));
      log(`publisher: delay at a ${pollMs} ms poll: ${samples.map((d) => d.toFixed(0)).join(", ")} ms`);
    }

    // ---- EAS on the same chain, the same data ----
    const chain = { ...hardhat, rpcUrls: { default: { http: [s.urls.rpc] } } };
    const wallet = createWalletClient({ chain, transport: http(s.urls.rpc), account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 2 }) });
    // EAS carries the same data: the registry's own DATA_SCHEMA, read from it.
    const dataSchema = String(await reader.readContract({ address: contracts.registry, abi: registryAbi, functionName: "DATA_SCHEMA" }));
    const eas = await deployEas(reader, wallet, dataSchema);
    const request = (i: number) => ({
      recipient: ownerAddress(1_000_000 + i, 0x9b),
      expirationTime: 0n,
      revocable: true,
      refUID: ZERO_UID,
      data: encodeAbiParameters(parseAbiParameters(dataSchema), ["http", FIELD, BUCKETS.labels[i % 3] as string, "0x0000000000000000000000000000000000000000", 86400n, []]),
      value: 0n,
    });
    const easGas = {} as Record<PublishBatch, number>;
    let first = 0;
    for (const batch of PUBLISH_BATCHES) {
      easGas[batch] = (await eas.gasPerAttestation(batch, request, first)).gas;
      first += batch;
    }

    const figures: SectionRows["figures"] = [];
    for (const batch of PUBLISH_BATCHES) {
      const floor = { name: `EAS ${batch === 1 ? "attest" : `multiAttest of ${batch}`}, same chain, same data`, value: easGas[batch] };
      for (const target of ["registry", "gate"] as const) figures.push(figure("writes", publisherGasFigure(target, batch), "gas", gas[target][batch], floor));
    }
    const shipped = delays.get(DEFAULT_PUBLISH_POLL_MS) ?? [];
    const fast = delays.get(FAST_POLL_MS) ?? [];
    figures.push(figure("writes", PUBLISHER_DELAY_FIGURE, "ms", percentile(shipped, 50), { name: `the same publisher polling every ${FAST_POLL_MS} ms`, value: percentile(fast, 50) }));
    const notes = [
      `publisher: a stack of its own (Rollups ${rollups}); claims through the api (plain, one attestation each, group-committed), their epoch closed; ` +
        `the publisher (api/publisher/, as npm run publish runs it) records two full batches of each size (at most that many a transaction) in the registry (recordMany: the proof checked by the application, ` +
        `the attestation stored as EAS stores one, its Attested event) and in the gate (recordMany: the same proofs, the newest bucket per owner and schema). ` +
        `Transactions per ${2 * PUBLISH_BATCHES[2]} attestations at most 32 a batch: registry ${transactions.registry[32]}, gate ${transactions.gate[32]} (a batch above the chain's ` +
        `per-transaction cap of 2^24 gas, EIP-7825, goes in halves). ` +
        `EAS: attest and multiAttest of the registry's DATA_SCHEMA with the same values, from its published bytecode on the same chain. ` +
        `Delay: ${DELAY_ROUNDS} rounds of ${CLAIMS_PER_DELAY_ROUND} claims per poll interval, timed from the epoch's proofs being readable at the node (polled every 10 ms) ` +
        `to both contracts holding the last claim (polled every 10 ms); every claim by an owner of its own; max at the shipped ${DEFAULT_PUBLISH_POLL_MS} ms poll ${Math.round(shipped[shipped.length - 1] ?? Number.NaN)} ms.`,
    ];
    return { figures, notes };
  } finally {
    await open?.publisher.stop();
    open?.store.close();
    await provider?.close();
    await stack?.stop();
  }
}
