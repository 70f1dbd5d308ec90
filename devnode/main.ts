/**
 * devnode: a local stand-in for the Cartesi Rollups Node, v1 or v2 (ROLLUPS). Follows the InputBox on a
 * chain, feeds the dapp through the rollup HTTP server, and serves the node's query interface (v1:
 * `/inspect` and `/graphql`; v2: JSON-RPC and inspect). The one file with side effects, and the
 * composition root: the only file of the core that imports a version (v1/, v2/), to hand each part of
 * the core what its version decides (docs/devnode.md, Layout).
 *
 *   tsx devnode/main.ts [--reset]     (configuration: docs/devnode.md)
 */
import { mkdirSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import { join } from "node:path";
import { messageOf } from "../common/errors.ts";
import { InputFollower, waitForChain } from "./chain.ts";
import { ConfigError, loadDevnodeConfig, loadLogSettings, type DevnodeConfig } from "./config.ts";
import { createDevnodeLog } from "./log.ts";
import { createDevnodeMetrics } from "./metrics.ts";
import { RollupModel, type ModelOptions } from "./model.ts";
import { Reader } from "./reader.ts";
import { createRollupServer } from "./rollup-server.ts";
import { SnapshotTaker } from "./snapshot.ts";
import { installSnapshot } from "./snapshot-install.ts";
import { DevnodeStore, recordOwner } from "./store.ts";
import { EpochValidator } from "./validator.ts";
import { V1Application } from "./v1/application.ts";
import { EpochHasher } from "./v1/epoch-hasher.ts";
import { EpochManager } from "./v1/epochs.ts";
import { createGraphqlApi } from "./v1/graphql.ts";
import { v1InputBox } from "./v1/inputs.ts";
import { createQueryServer } from "./v1/node-server.ts";
import { historyClaims } from "./v1/validator.ts";
import { V2Application, type V2ApplicationState } from "./v2/application.ts";
import { V2EpochManager } from "./v2/epochs.ts";
import { QuorumVotes } from "./v2/quorum-votes.ts";
import { v2InputBox } from "./v2/inputs.ts";
import { V3InputBoxWatch } from "./v2/v3-inputbox.ts";
import { createV2NodeServer } from "./v2/node-server.ts";
import { V2Store } from "./v2/record.ts";
import { V2Rpc } from "./v2/rpc.ts";
import { ConsensusClaims } from "./v2/validator.ts";

// LOG_FORMAT and DEVNODE_LOG_LABEL are read here, before the rest of the configuration, so even a bad
// configuration is reported in the format the operator's collector expects, by the node it concerns.
const logSettings = loadLogSettings(process.env);
const logger = createDevnodeLog(logSettings.format, logSettings.label);
const logError = (message: string): void => logger.error(message);
const log = (message: string): void => logger.info(message);

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function close(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The record belongs to one dapp on one InputBox (of one Rollups version); another needs another DATA_DIR. */
function checkRecordOwner(store: DevnodeStore, config: DevnodeConfig): void {
  const owner = recordOwner(config.rollups, config.inputBoxAddress, config.dappAddress);
  const recorded = store.getMeta("owner");
  if (recorded === undefined) store.setMeta("owner", owner);
  else if (recorded !== owner) {
    throw new ConfigError(
      `${config.databasePath} records inputs of InputBox/dapp ${recorded}, not ${owner}: use another DATA_DIR or --reset`,
    );
  }
}

/** A validator's reads and snapshots (devnode/reader.ts), alike on v1 and v2. */
function readerOf(config: DevnodeConfig, store: DevnodeStore, model: RollupModel, follower: InputFollower, validator: EpochValidator, chainId: number): Reader {
  const identity = { rollups: config.rollups, chainId, inputBox: config.inputBoxAddress, application: config.dappAddress };
  const snapshots = new SnapshotTaker({ model, record: store, dappDbPath: config.dappDbPath, folder: join(config.dataDir, "snapshots"), identity, log });
  return new Reader({ model, record: store, chain: follower, validator, staleMs: config.readerStaleMs, snapshots });
}

/** What a reader says at start: where to ask how current it is, and whether it waits for a claim first. */
function logReader(reader: Reader, node: string): void {
  const status = reader.status();
  log(`reader: GET ${node}/reader; snapshots: POST ${node}/snapshot${status.snapshot === null ? "" : `; started from a snapshot at input ${status.snapshot.inputCount}${status.snapshot.verified ? "" : ", serving no reads until a claim over a later input matches"}`}`);
}

function modelOptions(config: DevnodeConfig, store: DevnodeStore): ModelOptions {
  const { finishTimeoutMs, dappWaitMs, inspectTimeoutMs } = config;
  return { finishTimeoutMs, dappWaitMs, inspectTimeoutMs, processedInputCount: store.processedCount() };
}

async function main(): Promise<void> {
  const config = loadDevnodeConfig(process.env, process.argv.slice(2));
  mkdirSync(config.dataDir, { recursive: true });
  if (config.reset) {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(config.databasePath + suffix, { force: true });
    log(`--reset: removed ${config.databasePath}`);
  }
  // Before the record opens: a validator started from a snapshot goes on from its input N.
  if (config.snapshotPath !== undefined) await installSnapshot(config, await waitForChain(config.rpcUrl, 30_000), log);
  const store = config.rollups === "v2" ? new V2Store(config.databasePath) : new DevnodeStore(config.databasePath);
  checkRecordOwner(store, config);
  if (store instanceof V2Store) return runV2(config, store);

  const model = new RollupModel(store, modelOptions(config, store));
  let stopping = false;
  const follower = new InputFollower(config, store, model, v1InputBox, log, (error) => {
    logger.error(error.message);
    void shutdown(1);
  });

  const chainId = await follower.waitForChain(30_000);
  await follower.sync();
  // The v1 application (CartesiDApp, Authority, History) and the claims the record holds: placed again on a
  // fresh chain, after the inputs, and again whenever the follower finds the chain restarted.
  const application = await V1Application.connect(config, log);
  const addresses = await application.ensure();
  const processed = (): number => model.processedInputCount;
  // A claimer closes and claims epochs; a validator claims nothing and checks the claims on chain.
  const hasher = config.role === "claimer" ? new EpochHasher(config.databasePath, config.epochHasherModule) : undefined;
  const epochs = config.role === "claimer" ? new EpochManager(store, application, addresses, processed, config.epochIntervalMs, log, hasher) : undefined;
  const validator =
    config.role === "validator"
      ? new EpochValidator(store, historyClaims(store, application, addresses, processed), config.validatorIntervalMs, log, logError)
      : undefined;
  if (epochs !== undefined) {
    await epochs.restore(epochs.addresses);
    follower.afterSync = async () => epochs.restore(await application.ensure());
  }
  // Inputs recorded but not finished before the last stop go first, in order.
  const pending = store.unprocessedInputs();
  for (const input of pending) model.enqueueAdvance(input);

  const reader = validator === undefined ? undefined : readerOf(config, store, model, follower, validator, chainId);
  const rollupServer = createRollupServer(model, logError);
  const metrics = createDevnodeMetrics({
    inputCountsByStatus: () => store.inputCountsByStatus(),
    epochs: () => epochs?.status(),
    ...(validator === undefined || reader === undefined ? {} : { validator: () => validator.status(), reader: () => reader.status() }),
  });
  const queryServer = createQueryServer(model, createGraphqlApi(store, epochs), epochs, metrics, validator, reader, logError);
  await listen(rollupServer, config.rollupHttpPort, config.rollupHttpHost);
  await listen(queryServer, config.nodePort, config.nodeHost);
  follower.start();
  epochs?.start();
  validator?.start();

  const shown = config.nodeHost === "0.0.0.0" ? "127.0.0.1" : config.nodeHost;
  log(`chain ${config.rpcUrl} (chain id ${chainId}, ${config.chainMode})`);
  log(`InputBox ${config.inputBoxAddress}  dapp ${config.dappAddress}`);
  if (epochs !== undefined) {
    log(`Authority ${addresses.authority}  History ${addresses.history}  claimer ${application.account.address}${addresses.canClaim ? "" : " (not the Authority's owner: no claims)"}`);
    log(`epochs: ${config.epochIntervalMs > 0 ? `every ${config.epochIntervalMs} ms` : "on demand only"}; close one now: POST http://${shown}:${config.nodePort}/epoch/close (npm run epoch)`);
  } else {
    log(`validator: checks every claim in History ${addresses.history} (Authority ${addresses.authority}) against this node's own epochs; claims nothing`);
    log(`verdicts: GET http://${shown}:${config.nodePort}/validator (npm run validate -- --node http://${shown}:${config.nodePort})`);
  }
  if (reader !== undefined) logReader(reader, `http://${shown}:${config.nodePort}`);
  log(`rollup HTTP server for the dapp: http://${config.rollupHttpHost}:${config.rollupHttpPort}`);
  log(`inspect: http://${shown}:${config.nodePort}/inspect/<payload>  graphql: http://${shown}:${config.nodePort}/graphql  metrics: http://${shown}:${config.nodePort}/metrics`);
  log(`record ${config.databasePath}: ${store.inputCount()} input(s), ${pending.length} waiting for the dapp`);
  log("ready");

  async function shutdown(code: number): Promise<void> {
    if (stopping) return;
    stopping = true;
    follower.stop();
    epochs?.stop();
    await hasher?.close();
    await validator?.stop();
    model.close();
    await Promise.all([close(queryServer), close(rollupServer)]);
    store.close();
    process.exit(code);
  }
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
}

/** How often, under a Quorum, a node looks for acceptances (and a member for epochs to vote in). */
const QUORUM_ROUND_MS = 200;

/** A member must be one of the Quorum's; a Quorum asked for must be what the chain has. */
function checkConsensus(config: DevnodeConfig, state: V2ApplicationState): void {
  if (config.role === "member" && (state.consensus !== "quorum" || state.memberId === 0)) {
    const has = state.consensus === "quorum" ? `the Quorum ${state.authority} of ${state.members.join(", ")}` : `an Authority (${state.authority})`;
    throw new ConfigError(`DEVNODE_ROLE=member: the application ${state.application} is validated by ${has}, and CLAIMER_PRIVATE_KEY's address is not a member of it`);
  }
  if (config.quorumMembers !== undefined && state.consensus !== "quorum") {
    throw new ConfigError(`QUORUM_MEMBERS: the application ${state.application} on this chain is already validated by an Authority (${state.authority}): start a fresh chain, or leave QUORUM_MEMBERS out`);
  }
}

/** A Rollups v2 node: the v2 contracts, v2 metadata and outputs, block epochs, JSON-RPC and v2 inspect. */
async function runV2(config: DevnodeConfig, store: V2Store): Promise<void> {
  const chainId = await waitForChain(config.rpcUrl, 30_000);
  const model = new RollupModel(store, { ...modelOptions(config, store), v2: { chainId, appContract: config.dappAddress, outputCount: store.outputCount } });
  let stopping = false;
  // On a chain it manages, the devnode refuses the v3 InputBox address and says so for what is sent there.
  const watch = config.chainMode === "managed" ? new V3InputBoxWatch(config.rpcUrl, config.inputBoxAddress, log) : undefined;
  const follower = new InputFollower(config, store, model, v2InputBox(store, watch), log, (error) => {
    logger.error(error.message);
    void shutdown(1);
  });
  await follower.sync();
  const application = await V2Application.connect(config, log);
  const state = await application.ensure();
  const processed = (): number => model.processedInputCount;
  checkConsensus(config, state);
  // A claimer claims epochs (under a Quorum it only follows what the members accepted); a validator claims
  // nothing (even with the Authority owner's key) and checks the claims on chain; a member is a validator
  // that votes. All keep the epoch record the JSON-RPC reads.
  const validating = config.role !== "claimer";
  const quorum = state.consensus === "quorum";
  const alarm = logError;
  const votes = new QuorumVotes(store, application, state, processed, alarm, quorum || !validating);
  const claims = validating && config.role !== "member" ? { ...state, canClaim: false } : state;
  // Under a Quorum every node follows the acceptances (and a member votes) in short rounds: the members,
  // not a timer of this node's, decide when an epoch is claimed.
  const interval = quorum ? QUORUM_ROUND_MS : config.epochIntervalMs;
  const epochs = new V2EpochManager(store, application, claims, config.chainMode === "managed", interval, log, quorum ? votes : undefined, alarm);
  await epochs.restore(epochs.applicationState);
  if (!validating) follower.afterSync = async () => epochs.restore(await application.ensure());
  const validator = validating
    ? new EpochValidator(store, new ConsensusClaims(store, application, state, processed), config.validatorIntervalMs, log, alarm)
    : undefined;
  const pending = store.unprocessedInputs();
  for (const input of pending) model.enqueueAdvance(input);

  const reader = validator === undefined ? undefined : readerOf(config, store, model, follower, validator, chainId);
  const rollupServer = createRollupServer(model, logError);
  const metrics = createDevnodeMetrics({
    inputCountsByStatus: () => store.inputCountsByStatus(),
    epochs: () => epochs.status(),
    consensus: () => votes.status(),
    ...(validator === undefined || reader === undefined ? {} : { validator: () => validator.status(), reader: () => reader.status() }),
  });
  const rpc = new V2Rpc({ store, epochs, model, applicationName: config.applicationName, chainId });
  const nodeServer = createV2NodeServer(model, rpc, epochs, metrics, votes, validator, reader, logError);
  await listen(rollupServer, config.rollupHttpPort, config.rollupHttpHost);
  await listen(nodeServer, config.nodePort, config.nodeHost);
  follower.start();
  if (validator === undefined || quorum) epochs.start();
  validator?.start();

  const shown = config.nodeHost === "0.0.0.0" ? "127.0.0.1" : config.nodeHost;
  const node = `http://${shown}:${config.nodePort}`;
  log(`Cartesi Rollups v2 node; chain ${config.rpcUrl} (chain id ${chainId}, ${config.chainMode})`);
  log(`InputBox ${state.inputBox}  Application "${config.applicationName}" ${state.application}`);
  if (quorum) {
    log(`Quorum ${state.authority} (epochs of ${state.epochLength} block(s)): a root is accepted once ${Math.floor(state.members.length / 2) + 1} of its ${state.members.length} members voted for it; ${config.role === "member" ? `this node is member ${state.memberId} (${application.account.address}) and votes for the roots its dapp computes` : "this node votes in none"}`);
    log(`votes and acceptances: GET ${node}/consensus`);
  }
  if (validator === undefined && !quorum) {
    log(`Authority ${state.authority} (epochs of ${state.epochLength} block(s))  claimer ${application.account.address}${state.canClaim ? "" : " (not the Authority's owner: no claims)"}`);
    log(`claims: ${config.epochIntervalMs > 0 ? `every ${config.epochIntervalMs} ms` : "on demand only"}; close the open epoch now: POST ${node}/epoch/close (npm run epoch)`);
  } else if (validator !== undefined) {
    log(`validator: checks every claim the ${quorum ? "Quorum accepted" : `Authority ${state.authority} took`} for the application (epochs of ${state.epochLength} block(s)) against this node's own outputs roots; claims nothing`);
    log(`verdicts: GET ${node}/validator (npm run validate -- --node ${node})`);
  }
  if (reader !== undefined) logReader(reader, node);
  log(`rollup HTTP server for the dapp: http://${config.rollupHttpHost}:${config.rollupHttpPort}`);
  log(`JSON-RPC: POST ${node}/rpc  inspect: POST ${node}/inspect/${config.applicationName}  metrics: ${node}/metrics`);
  log(`record ${config.databasePath}: ${store.inputCount()} input(s), ${pending.length} waiting for the dapp`);
  log("ready");

  async function shutdown(code: number): Promise<void> {
    if (stopping) return;
    stopping = true;
    follower.stop();
    epochs.stop();
    await validator?.stop();
    model.close();
    await Promise.all([close(nodeServer), close(rollupServer)]);
    store.close();
    process.exit(code);
  }
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
}

main().catch((error: unknown) => {
  logger.error(error instanceof ConfigError ? error.message : `failed to start: ${messageOf(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
