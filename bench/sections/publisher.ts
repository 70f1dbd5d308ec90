/**
 * How soon the publisher brings attestations on chain (issue 36), on a stack of its own (chain, devnode,
 * dapp bundle, api, the registry and the gate it deploys): claims made through the api, their epoch
 * closed, and the publisher (api/publisher/, opened in this process as `npm run publish` opens it)
 * recording their batch notices; the delay from the moment an epoch's proofs are readable to the registry
 * holding them (and so the gate, its other face), at the shipped poll interval beside the same publisher
 * polling every 50 ms. What recording costs is the on-chain section's (bench/sections/onchain.ts).
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { createPublicClient, http, type Address, type Hex } from "viem";
import { hardhat } from "viem/chains";
import { issueToken } from "../../api/auth/tokens.ts";
import { DEFAULT_PUBLISH_POLL_MS, loadPublisherConfig } from "../../api/publisher/config.ts";
import { openPublisher, type OpenPublisher } from "../../api/publisher/open.ts";
import { INPUT_INDEX_HEADER } from "../../api/rollup/read-context.ts";
import { GraphqlReader } from "../../api/rollup/graphql.ts";
import { JsonRpcReader } from "../../api/rollup/jsonrpc.ts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { startProviderServer, type ProviderServer } from "../../test/support/provider-server.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { until } from "../../test/support/until.ts";
import { ownerAddress } from "../inputs.ts";
import { figure } from "../report.ts";
import { percentile } from "../stats.ts";
import type { BenchContext, SectionRows } from "./context.ts";
import { JWT_SECRET } from "./whole-stack.ts";

const CLAIMS_PER_DELAY_ROUND = 4;
/** The shortest poll the publisher's configuration allows. */
const FAST_POLL_MS = 50;

export const PUBLISHER_DELAY_FIGURE = "publisher delay, proofs readable to recorded p50";

export function publisherFigureNames(): string[] {
  return [PUBLISHER_DELAY_FIGURE];
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

/** The publisher section's stack (chain, devnode, dapp bundle, api, the registry and the gate), fresh. */
export function startPublisherStack(ctx: BenchContext, rollups: "v1" | "v2"): Promise<TestStack> {
  return startStack({
    api: true,
    index: ctx.profile.indexer,
    rollups,
    dataDir: mkdtempSync(join(ctx.work, "publisher-")),
    dappCommand: ctx.bundle.command,
    env: { RATE_LIMITS: "off", PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET },
    readyTimeoutMs: 120_000,
  });
}

/**
 * The delay rows, on `shared` (a stack from startPublisherStack that the caller stops, left with no
 * publisher running) or else on a stack of its own.
 */
export async function publisherRows(ctx: BenchContext, rollups: "v1" | "v2", shared?: TestStack): Promise<SectionRows> {
  const { log } = ctx;
  /** Rounds of the delay figure, per poll interval: a few claims, their epoch closed, timed until recorded. */
  const rounds = ctx.profile.publisherRounds;
  let stack: TestStack | undefined;
  let provider: ProviderServer | undefined;
  let open: OpenPublisher | undefined;
  try {
    stack = shared ?? (await startPublisherStack(ctx, rollups));
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
      const started = openPublisher(config, { log: (line) => log(`publisher: ${line}`) });
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
      for (let round = 0; round < rounds; round++) {
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

    const figures: SectionRows["figures"] = [];
    const shipped = delays.get(DEFAULT_PUBLISH_POLL_MS) ?? [];
    const fast = delays.get(FAST_POLL_MS) ?? [];
    figures.push(figure("writes", PUBLISHER_DELAY_FIGURE, "ms", percentile(shipped, 50), { name: `the same publisher polling every ${FAST_POLL_MS} ms`, value: percentile(fast, 50) }));
    const notes = [
      `publisher: a stack of its own (Rollups ${rollups}); claims through the api (plain, one attestation each, group-committed), their epoch closed; ` +
        `the publisher (api/publisher/, as npm run publish runs it) records their inputs' batch notices in the registry (recordMany: one proof a notice). ` +
        `Delay: ${rounds} rounds of ${CLAIMS_PER_DELAY_ROUND} claims per poll interval, timed from the epoch's proofs being readable at the node (polled every 10 ms) ` +
        `to the registry and the gate holding the last claim (polled every 10 ms); every claim by an owner of its own; max at the shipped ${DEFAULT_PUBLISH_POLL_MS} ms poll ${Math.round(shipped[shipped.length - 1] ?? Number.NaN)} ms.`,
    ];
    return { figures, notes };
  } finally {
    await open?.publisher.stop();
    open?.store.close();
    await provider?.close();
    if (shared === undefined) await stack?.stop();
  }
}
