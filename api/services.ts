/**
 * The api's collaborators, built once from the configuration and passed to `createApi`: nothing in the
 * routes reaches for a global.
 */
import { indexQueries, type IndexQueries } from "./index/queries.ts";
import { readFileSync } from "node:fs";
import type { Hex } from "viem";
import type { InputKind, InputParams, SchemaDetail } from "../common/wire.ts";
import { keysOfWire } from "../common/claim-nullifier.ts";
import type { NullifierKeys } from "../common/nullifier.ts";
import type { ApiConfig } from "./config.ts";
import { NonceStore, type NonceKeeper } from "./auth/siwe.ts";
import type { DestinationStream } from "pino";
import { createApiLogger, type ApiLogger } from "./log.ts";
import { readStackStatus } from "./stack-status.ts";
import { createApiMetrics, type ApiMetrics } from "./metrics.ts";
import { ProverPool } from "./provider/attestor.ts";
import { RateLimiter, type RateLimitStore } from "./rate-limit.ts";
import { connectRedis, type SharedRedis } from "./redis/connection.ts";
import { RedisNonces } from "./redis/nonces.ts";
import { RedisRateLimiter } from "./redis/rate-limiter.ts";
import { RegistryCatalog } from "./rollup/catalog.ts";
import { NoticeFollower } from "./rollup/follower.ts";
import { AttestationContracts } from "./onchain.ts";
import { GraphqlReader } from "./rollup/graphql.ts";
import { JsonRpcReader } from "./rollup/jsonrpc.ts";
import type { NodeReader } from "./rollup/node-reader.ts";
import { RollupReader, type RollupQueries } from "./rollup/inspect.ts";
import { inputNeeded, noteWrite } from "./rollup/read-context.ts";
import { ReadPool } from "./rollup/read-pool.ts";
import { WriteMark } from "./rollup/write-mark.ts";
import { RedisWriteMark } from "./redis/write-mark.ts";
import { GroupCommit, type CommittedWrite } from "./rollup/group-commit.ts";
import { compactSchemaOfDetail, type CompactSchema } from "../common/compact-batch.ts";
import { ReceiptSigner } from "./receipts.ts";
import { InputSubmitter } from "./rollup/submitter.ts";
import { settleWrite, VerdictWatch } from "./rollup/verdict.ts";
import type { WsEvent } from "./ws.ts";

export interface ApiServices {
  config: ApiConfig;
  version: string;
  /** Unix seconds. */
  now: () => number;
  /** Where inspect reads go: the node, or the readers of READ_URLS (then `readPool` is that pool). */
  reader: RollupQueries;
  /** The readers (READ_URLS), started and stopped with the api; undefined when the node answers reads. */
  readPool: ReadPool | undefined;
  /** The node's reader: GraphQL on v1, JSON-RPC on v2 (`proofs` is the same object, typed by version). */
  node: NodeReader;
  /** EAS's GraphQL from the index of the rollup's notices (the indexer's, or a PostgreSQL index read here). */
  index: IndexQueries;
  proofs: { rollups: "v1"; reader: GraphqlReader } | { rollups: "v2"; reader: JsonRpcReader };
  submitter: InputSubmitter;
  catalog: RegistryCatalog;
  follower: NoticeFollower;
  /** Signs receipts of accepted attestations (docs/receipts.md). */
  receipts: ReceiptSigner;
  /** The registry and the gate (REGISTRY_ADDRESS, GATE_ADDRESS) as the chain holds them; undefined without them. */
  onchain: AttestationContracts | undefined;
  nonces: NonceKeeper;
  limiter: RateLimitStore | undefined;
  /** The Redis replicas share limits and nonces through (REDIS_URL), or undefined. */
  redis: SharedRedis | undefined;
  /** Writes that wait for the wallet go together into one `batch` input (group commit). */
  commits: GroupCommit;
  /**
   * Sends a write and returns once the rollup applied it (or throws the mapped rejection). `item` says where
   * it went: null alone, else its position in a batch (ids come from `writeIdOf`).
   */
  write<K extends InputKind>(kind: K, params: InputParams[K], context?: { schemaId?: Hex }): Promise<CommittedWrite>;
  /**
   * A schema as the rollup answers `provider_schema` (with its short index), read once: schemas and their
   * indexes never change, so what is read holds for good. Throws what the read throws (SCHEMA_NOT_FOUND...).
   */
  schemaDetail(schemaId: Hex): Promise<SchemaDetail>;
  /** provider_type of a schema (`schemaDetail`'s). */
  providerTypeOf(schemaId: Hex): Promise<string>;
  /**
   * Catches the notice follower up when the request must see an input it has not read yet (the client's
   * X-Min-Input-Index, a write answered before): before a read of what notices teach (bucket counts, who
   * granted whom). Otherwise nothing is asked of the node. A node that cannot be read leaves what is known.
   */
  catchUpNotices(): Promise<void>;
  /** Prover processes that make claims through the TLS attestor, started on first use. */
  attestor: ProverPool;
  /** The TLS attestors the rollup trusts (query `tls_attestors`, read at most once a second), lower-case. */
  registeredAttestors(): Promise<ReadonlySet<string>>;
  /**
   * The nullifier key set the rollup registered (query `nullifier_keys`, checked as the dapp checks it),
   * read at most once a second like the attestors; NOT_FOUND before set_nullifier_keys.
   */
  nullifierKeys(): Promise<NullifierKeys>;
  /** Where relayed notices go; `main.ts` points it at the WebSocket hub. */
  setEventSink(sink: (event: WsEvent) => void): void;
  /** The api's Prometheus registry and recorders (`GET /metrics`). */
  metrics: ApiMetrics;
  /** The structured log (JSON lines). */
  logger: ApiLogger;
  /** How many WebSocket clients are connected; `main.ts` points it at the hub. */
  setWsClientCount(count: () => number): void;
}

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** How long the api reuses the rollup's list of attestors (a registration shows within this). */
const ATTESTOR_SET_MAX_AGE_MS = 1_000;

export function createServices(config: ApiConfig, overrides: { now?: () => number; logDestination?: DestinationStream } = {}): ApiServices {
  const now = overrides.now ?? (() => Math.floor(Date.now() / 1000));
  const logger = createApiLogger(config.logLevel, { format: config.logFormat, replica: config.replica, ...(overrides.logDestination === undefined ? {} : { destination: overrides.logDestination }) });
  const v2Application = config.rollups === "v2" ? { v2Application: config.dappAddress } : {};
  const nodeInspect = new RollupReader({ rollupUrl: config.rollupUrl, timeoutMs: config.rollupReadTimeoutMs, ...v2Application });
  const proofs: ApiServices["proofs"] =
    config.rollups === "v2"
      ? { rollups: "v2", reader: new JsonRpcReader(config.rollupUrl, config.dappAddress) }
      : { rollups: "v1", reader: new GraphqlReader(config.graphqlUrl) };
  const node: NodeReader = proofs.reader;

  const catalog = new RegistryCatalog();
  let sink: (event: WsEvent) => void = () => undefined;
  let failing = false;
  const follower = new NoticeFollower(node, catalog, {
    intervalMs: config.noticePollMs,
    onEvent: (event) => sink(event as WsEvent),
    onPoll: (error) => {
      // The node may start after the api: say so once, and once more when it recovers, not every poll.
      if (error !== undefined && !failing) logger.warn({ url: node.url, error: String(error) }, "cannot read notices");
      if (error === undefined && failing) logger.warn({ url: node.url }, "reading notices again");
      failing = error !== undefined;
    },
  });
  const schemaDetails = new Map<string, SchemaDetail>();
  let wsClients = (): number => 0;
  let attestor: ProverPool | undefined;
  let redis: SharedRedis | undefined;
  const metrics = createApiMetrics({ wsClients: () => wsClients(), provers: () => attestor?.size ?? 0, redisUp: () => redis?.ready, stackPieces: () => readStackStatus(config.dataDir) });
  const submitter = new InputSubmitter({
    rpcUrl: config.rpcUrl,
    chainId: config.chainId,
    rollups: config.rollups,
    privateKey: config.privateKey,
    inputBoxAddress: config.inputBoxAddress,
    dappAddress: config.dappAddress,
    rpcTimeoutMs: config.rpcTimeoutMs,
    onReceipt: (gasUsed, succeeded) => metrics.observeTransaction(gasUsed, succeeded),
  });
  attestor = new ProverPool(config.attestor, undefined, metrics.observeProof);
  const commits = new GroupCommit((payload) => submitter.submitPayload(payload), config.writeBatch, metrics.observeGroup);
  const verdicts = new VerdictWatch(node, { timeoutMs: config.verdictTimeoutMs });
  const localNonces = new NonceStore(now);
  const localLimiter = config.rateLimits ? new RateLimiter(now) : undefined;
  let attestorSet: { at: number; set: ReadonlySet<string> } | undefined;
  let nullifierKeySet: { at: number; keys: NullifierKeys } | undefined;
  let nonces: NonceKeeper = localNonces;
  let limiter: RateLimitStore | undefined = localLimiter;
  if (config.redisUrl !== undefined) {
    const url = redactedUrl(config.redisUrl);
    redis = connectRedis(config.redisUrl, (up, error) => {
      if (up) logger.info({ redis: url }, "shared state in Redis");
      else logger.warn({ redis: url, error }, "Redis unreachable: login nonces fall back to this replica; rate-limited requests are refused for a minute, then this replica allows its share of each limit");
    });
    const fellBack = (): void => metrics.observeSharedStateFallback();
    nonces = new RedisNonces(redis.client, localNonces, now, fellBack);
    const shared = redis;
    if (localLimiter !== undefined) {
      limiter = new RedisRateLimiter(redis.client, localLimiter, now, fellBack, { replicas: config.replicaCount, connected: () => shared.ready });
    }
  }
  // Reads go to the readers when there are any; every write raises the mark reads must reach (read-your-writes).
  // Shared only when readers serve reads: the node itself has always processed every write it answered.
  const sharedMark = redis !== undefined && config.reads !== undefined ? new RedisWriteMark(redis.client, config.dappAddress) : undefined;
  const mark = new WriteMark(sharedMark, () => metrics.observeSharedStateFallback());
  const reads = config.reads;
  const readPool =
    reads === undefined
      ? undefined
      : new ReadPool(
          reads.urls.map((url) => new RollupReader({ rollupUrl: url, timeoutMs: reads.timeoutMs, ...v2Application })),
          nodeInspect,
          mark,
          { waitMs: reads.waitMs, pollMs: reads.pollMs, onRead: (target, outcome, reason) => metrics.observeRead(target, outcome, reason) },
        );
  const reader: RollupQueries = readPool ?? nodeInspect;
  const schemaDetail = async (schemaId: Hex): Promise<SchemaDetail> => {
    const key = schemaId.toLowerCase();
    const known = schemaDetails.get(key);
    if (known !== undefined) return known;
    const detail = await reader.query("provider_schema", { schema_id: key, include_index: true });
    schemaDetails.set(key, detail);
    return detail;
  };
  /** What a compact batch needs of a schema; undefined while the rollup cannot say (the write then goes as JSON). */
  const compactSchemaFor = async (schemaId: Hex): Promise<CompactSchema | undefined> => {
    try {
      const detail = await schemaDetail(schemaId);
      return detail.schema_index === undefined ? undefined : compactSchemaOfDetail(detail);
    } catch {
      return undefined;
    }
  };

  return {
    config,
    version: packageVersion(),
    now,
    reader,
    readPool,
    index: indexQueries(config.index),
    node,
    proofs,
    submitter,
    catalog,
    follower,
    onchain: config.contracts === undefined ? undefined : new AttestationContracts(submitter.publicClient, config.rollups, config.contracts),
    nonces,
    redis,
    attestor,
    metrics,
    logger,
    setWsClientCount(count) {
      wsClients = count;
    },
    async registeredAttestors() {
      // Read at most once a second: every proven claim checks against it, and the dapp checks again.
      if (attestorSet === undefined || Date.now() - attestorSet.at > ATTESTOR_SET_MAX_AGE_MS) {
        const attestors = await reader.query("tls_attestors", {});
        attestorSet = { at: Date.now(), set: new Set(attestors.map((a) => a.address.toLowerCase())) };
      }
      return attestorSet.set;
    },
    async nullifierKeys() {
      // A re-sharing replaces the commitments under the same K; a second's staleness costs at most one refused claim.
      if (nullifierKeySet === undefined || Date.now() - nullifierKeySet.at > ATTESTOR_SET_MAX_AGE_MS) {
        nullifierKeySet = { at: Date.now(), keys: keysOfWire(await reader.query("nullifier_keys", {})) };
      }
      return nullifierKeySet.keys;
    },
    limiter,
    commits,
    receipts: new ReceiptSigner(config.receiptSignerKey, config.contracts === undefined ? undefined : { chainId: config.chainId, registry: config.contracts.registry }),
    async write(kind, params, context = {}) {
      const schema = kind === "create_attestation" ? await compactSchemaFor((params as InputParams["create_attestation"]).schema_id) : undefined;
      const committed = await commits.write(kind, params, schema);
      // An attestor registered through this api counts for its next claim at once.
      if (kind === "set_tls_attestor") attestorSet = undefined;
      if (kind === "set_nullifier_keys") nullifierKeySet = undefined;
      settleWrite(await verdicts.verdictOf(committed.inputIndex, committed.txHash), committed.item, context);
      // Before the answer leaves: any read that starts after it must see this input.
      await mark.note(committed.inputIndex);
      noteWrite(committed.inputIndex);
      return committed;
    },
    schemaDetail,
    async providerTypeOf(schemaId) {
      return (await schemaDetail(schemaId)).provider_type;
    },
    async catchUpNotices() {
      await follower.syncTo(await inputNeeded(mark)).catch(() => undefined);
    },
    setEventSink(next) {
      sink = next;
    },
  };
}

/** A Redis URL without its password, for logs. */
function redactedUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
