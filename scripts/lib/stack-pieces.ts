/**
 * The local stack's pieces (chain, devnode, dapp, demo provider, attestors, Redis, api or api replicas,
 * balancer): what a stack runs, the settings it runs from, the URLs it answers on, and each piece's
 * command line and environment, as data. Starting, watching and stopping them is
 * scripts/lib/stack-supervisor.ts; knowing when one is ready, scripts/lib/stack-readiness.ts; the settings
 * from the environment, scripts/lib/stack-config.ts. Used by `npm start` (scripts/start.ts) and the
 * end-to-end tests (test/support/stack.ts).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { balancerConfig, balancerConfigPath } from "./stack-balancer.ts";
import { join } from "node:path";
import type { Address } from "viem";
import type { RollupsVersion } from "../../devnode/config.ts";
import type { StackContracts } from "./deploy-contracts.ts";
import { compiledPath } from "../../toolkit/compiled-path.ts";
import { ensureLocalNullifierKeys, localShareFile } from "./stack-nullifier-keys.ts";

/**
 * The kinds of piece, in start order. With replicas, "api" is `api-1` ... `api-N` behind the balancer;
 * with several attestors, "attestor" is followed by `attestor-2` ... `attestor-N`; readers are `reader-k`
 * (a validator devnode) and `reader-dapp-k` (its dapp), k from 1.
 */
export const PIECES = ["chain", "devnode", "dapp", "reader", "reader-dapp", "provider", "attestor", "redis", "indexer", "api", "balancer", "publisher"] as const;
export type PieceKind = (typeof PIECES)[number];
export type PieceName = Exclude<PieceKind, "reader" | "reader-dapp"> | `api-${number}` | `attestor-${number}` | `reader-${number}` | `reader-dapp-${number}`;

/** The kind of a piece: `api-3` is an api, `attestor-2` an attestor, `reader-dapp-1` a reader's dapp. */
export function kindOf(piece: PieceName): PieceKind {
  if (piece.startsWith("api-")) return "api";
  if (piece.startsWith("reader-dapp-")) return "reader-dapp";
  if (piece.startsWith("reader-")) return "reader";
  return piece.startsWith("attestor-") ? "attestor" : (piece as PieceKind);
}

/** Which reader a `reader-k` or `reader-dapp-k` piece belongs to, 1-based. */
export function readerNumber(piece: PieceName): number {
  return Number(piece.slice(piece.lastIndexOf("-") + 1));
}

/** Readers (`npm start -- --readers N`): validators on the stack's chain that serve the api's reads. */
export interface ReaderSettings {
  /** Each reader's query interface (its NODE_PORT), on loopback. */
  nodePorts: readonly number[];
  /** Each reader's rollup HTTP server, for its own dapp. */
  rollupHttpPorts: readonly number[];
  /** Where each reader reads the chain, when not at the stack's own RPC (a test's proxy). */
  rpcUrls?: readonly string[] | undefined;
}

/**
 * A Quorum (`npm start -- --rollups v2 --quorum N`, docs/quorum.md): the devnode deploys the application
 * under Cartesi's Quorum of these members, and reader k (k <= N) is member k, voting with keys[k - 1].
 */
export interface QuorumSettings {
  members: readonly Address[];
  keys: readonly string[];
}

/** Where reader k keeps its record and its dapp's database. */
export function readerDataDir(s: Pick<StackSettings, "dataDir">, k: number): string {
  return join(s.dataDir, `reader-${k}`);
}

/** Which attestor a piece is, 1-based (`attestor` is the first). */
export function attestorNumber(piece: PieceName): number {
  return piece.startsWith("attestor-") ? Number(piece.slice("attestor-".length)) : 1;
}

/** The key file (in DATA_DIR) of attestor `k`: the first keeps the name it always had. */
export function attestorKeyName(k: number): string {
  return k === 1 ? "attestor-key" : `attestor-key-${k}`;
}

/** Api replicas behind a load balancer (`npm start -- --api-replicas N`, docs/operations.md). */
export interface ReplicaSettings {
  /** Each replica's own port on loopback; the balancer listens on `apiPort`. */
  ports: readonly number[];
  /** Each replica's own wallet (no nonce fights between replicas). */
  privateKeys: readonly string[];
  /** The Redis the replicas share rate limits and login nonces through. */
  redisPort: number;
  /**
   * The balancer itself sits behind a trusted proxy (TRUST_PROXY): it passes on the client address that
   * proxy sent. Otherwise it sets X-Forwarded-For to the address it sees, whatever the client sent.
   */
  trustForwarded: boolean;
}

/** Everything needed to run the stack; scripts/lib/stack-config.ts builds it from the environment. */
export interface StackSettings {
  /** Project root: the children's working directory. */
  root: string;
  dataDir: string;
  /** When set, no chain is started and the devnode treats this chain as external. */
  externalRpcUrl: string | undefined;
  chainPort: number;
  nodePort: number;
  nodeHost: string;
  rollupHttpPort: number;
  apiPort: number;
  /** The Cartesi Rollups the devnode stands in for, and the api talks to. */
  rollups: RollupsVersion;
  inputBoxAddress: Address;
  dappAddress: Address;
  privateKey: string;
  /** Initial admins handed to the dapp (the api's wallet by default). */
  dappAdmins: string;
  /** The dapp's command line: an argv, or a shell command string (DAPP_COMMAND). */
  dappCommand: readonly string[] | string;
  /**
   * Where the other Node processes were compiled (toolkit/process-build.ts), run from there instead of
   * through tsx; undefined runs the sources (npm start). The test suites' stacks set it.
   */
  compiledDir?: string | undefined;
  /** Start the api: `true`, `false`, or `"auto"` (when api/main.ts exists). */
  api: boolean | "auto";
  /** The TLS attestors (attestor/server.ts) on loopback, one per port (the first is "attestor"); undefined runs none. */
  attestor: { ports: readonly number[]; caFiles: string } | undefined;
  /** The demo HTTPS provider (scripts/demo-provider.ts), or undefined to run none. */
  demoProvider: { port: number } | undefined;
  /** Api replicas behind haproxy, with Redis; undefined runs one api on `apiPort`. */
  replicas?: ReplicaSettings | undefined;
  /** Readers the api reads from; undefined: the node answers the api's reads. */
  readers?: ReaderSettings | undefined;
  /** v2: a Quorum of the first readers instead of the devnode's Authority. */
  quorum?: QuorumSettings | undefined;
  /** Where the api reaches the node, when not at the node itself (a test's recording proxy in front of it). */
  apiNodeUrl?: string | undefined;
  /**
   * The attestation registry and gate the stack deploys beside its application once the devnode is ready
   * (scripts/lib/deploy-contracts.ts), at these fixed addresses; undefined deploys none (a chain not its own).
   */
  contracts?: StackContracts | undefined;
  /** The publisher (`--publish`): brings the notices with their proofs to those contracts; its metrics port. */
  publisher?: { port: number } | undefined;
  /** The indexer (docs/index.md): the node's notices into PostgreSQL (PGlite by default), EAS's GraphQL on `port`; undefined runs none. */
  index?: { port: number } | undefined;
  /** Extra environment for every child (after the stack's own variables, so it can override them). */
  env: Readonly<Record<string, string>>;
  /** Where the children's output goes: files under this directory, or (undefined) the console. */
  logDir: string | undefined;
}

export interface StackUrls {
  /** The first attestor's WebSocket. */
  attestor: string | undefined;
  /** Every attestor's WebSocket, in order (a schema that requires k uses the first k). */
  attestors: string[];
  demoProvider: string | undefined;
  rpc: string;
  node: string;
  inspect: string;
  graphql: string;
  rollupHttp: string;
  api: string;
  ws: string;
  /** Each reader's query interface, reader 1 first. */
  readers: string[];
  /** The indexer's `/graphql`, `/health`, `/ready`, `/metrics`, when it runs. */
  index: string | undefined;
}

function loopback(host: string): string {
  return host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
}

export function stackUrls(s: StackSettings): StackUrls {
  const node = `http://${loopback(s.nodeHost)}:${s.nodePort}`;
  return {
    attestor: s.attestor?.ports[0] === undefined ? undefined : `ws://127.0.0.1:${s.attestor.ports[0]}/ws`,
    attestors: (s.attestor?.ports ?? []).map((port) => `ws://127.0.0.1:${port}/ws`),
    demoProvider: s.demoProvider === undefined ? undefined : `https://localhost:${s.demoProvider.port}`,
    rpc: s.externalRpcUrl ?? `http://127.0.0.1:${s.chainPort}`,
    node,
    inspect: `${node}/inspect`,
    graphql: `${node}/graphql`,
    rollupHttp: `http://127.0.0.1:${s.rollupHttpPort}`,
    api: `http://127.0.0.1:${s.apiPort}`,
    ws: `ws://127.0.0.1:${s.apiPort}/ws`,
    readers: (s.readers?.nodePorts ?? []).map((port) => `http://127.0.0.1:${port}`),
    index: s.index === undefined ? undefined : `http://127.0.0.1:${s.index.port}`,
  };
}

/** The dapp command for `npm start`: the TypeScript source, or the bundle from `npm run build`. */
export function defaultDappCommand(bundle: boolean): readonly string[] {
  return bundle ? [process.execPath, "dist/dapp/main.js"] : [process.execPath, "--import", "tsx", "dapp/main.ts"];
}

export function apiEnabled(s: StackSettings): boolean {
  return s.api === "auto" ? existsSync(join(s.root, "api", "main.ts")) : s.api;
}

/** Where the supervisor keeps the pieces' status and restart counts (docs/operations.md, When a piece dies). */
export function stackStatusPath(s: Pick<StackSettings, "dataDir">): string {
  return join(s.dataDir, "stack-status.json");
}

/** Where the demo provider keeps its local CA (scripts/lib/local-ca.ts). */
export function demoProviderCa(s: Pick<StackSettings, "dataDir">): string {
  return join(s.dataDir, "demo-provider", "ca.pem");
}

/** Root certificates the attestor's TLS library needs beyond its own list: the operator's, and the demo CA. */
function attestorCaFiles(s: StackSettings): string {
  const files = (s.attestor?.caFiles ?? "").split(",").filter((f) => f.trim() !== "");
  if (s.demoProvider !== undefined) files.push(demoProviderCa(s));
  return files.join(",");
}

/** The api's environment for the attestor and the demo provider. */
function apiProviderEnv(s: StackSettings): Record<string, string> {
  const env: Record<string, string> = {};
  if (s.attestor !== undefined) {
    env.ATTESTOR_URL = stackUrls(s).attestors.join(",");
    env.ATTESTOR_CA_FILES = attestorCaFiles(s);
  }
  if (s.demoProvider !== undefined) {
    // The demo provider is on loopback with a local CA: the api's own fetch must allow and trust it too.
    const allowed = (process.env.PROVIDER_ALLOWED_HOSTS ?? "").split(",").filter((h) => h.trim() !== "");
    env.PROVIDER_ALLOWED_HOSTS = [...allowed, "localhost"].join(",");
    env.NODE_EXTRA_CA_CERTS = demoProviderCa(s);
  }
  return env;
}

interface Command {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
}

/** The pieces a stack runs, in start order. */
export function stackPieces(s: StackSettings): PieceName[] {
  const out: PieceName[] = [];
  for (const kind of PIECES) {
    if (kind === "api" && s.replicas !== undefined && apiEnabled(s)) {
      s.replicas.ports.forEach((_, i) => out.push(`api-${i + 1}`));
    } else if (kind === "reader" || kind === "reader-dapp") {
      (s.readers?.nodePorts ?? []).forEach((_, i) => out.push(`${kind}-${i + 1}`));
    } else if (pieceCommand(kind, s) !== undefined) {
      out.push(kind);
      if (kind === "attestor") for (let k = 2; k <= (s.attestor?.ports.length ?? 1); k++) out.push(`attestor-${k}`);
    }
  }
  return out;
}

/** The replica number of `api-k` (1-based), or undefined for the single api. */
export function replicaIndex(piece: PieceName): number | undefined {
  return piece.startsWith("api-") ? Number(piece.slice(4)) : undefined;
}

/** The dapp's command (DAPP_COMMAND's shell string or an argv) with `env`. */
function dappCommand(s: StackSettings, env: Record<string, string>): Command {
  if (typeof s.dappCommand === "string") return { file: "/bin/sh", args: ["-c", s.dappCommand], env };
  const [file, ...args] = s.dappCommand;
  if (file === undefined) throw new Error("the dapp command is empty");
  return { file, args, env };
}

/** The command line and environment of each piece; `undefined` when the piece is not part of this stack. */
export function pieceCommand(piece: PieceName, s: StackSettings): Command | undefined {
  const urls = stackUrls(s);
  const kind = kindOf(piece);
  const tsx = (file: string): Pick<Command, "file" | "args"> => ({
    file: process.execPath,
    args: s.compiledDir === undefined ? ["--import", "tsx", file] : [compiledPath(s.compiledDir, file)],
  });
  switch (kind) {
    case "chain":
      if (s.externalRpcUrl !== undefined) return undefined;
      return {
        file: join(s.root, "node_modules", ".bin", "hardhat"),
        args: ["node", "--hostname", "127.0.0.1", "--port", String(s.chainPort), "--config", "devnode/hardhat.config.cjs"],
        env: { HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" },
      };
    case "devnode":
      return {
        ...tsx("devnode/main.ts"),
        env: {
          RPC_URL: urls.rpc,
          DEVNODE_CHAIN: s.externalRpcUrl === undefined ? "managed" : "external",
          NODE_PORT: String(s.nodePort),
          NODE_HOST: s.nodeHost,
          ROLLUP_HTTP_PORT: String(s.rollupHttpPort),
          ROLLUPS: s.rollups,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          DATA_DIR: s.dataDir,
          ...(s.quorum === undefined ? {} : { QUORUM_MEMBERS: s.quorum.members.join(",") }),
          // A compiled devnode's epoch hasher is compiled too (no tsx in any process of the stack).
          ...(s.compiledDir === undefined ? {} : { EPOCH_HASHER_MODULE: compiledPath(s.compiledDir, "devnode/v1/epoch-hasher-worker.ts") }),
        },
      };
    case "dapp":
      return dappCommand(s, { ROLLUP_HTTP_SERVER_URL: urls.rollupHttp, DAPP_ADMINS: s.dappAdmins, DATA_DIR: s.dataDir, DAPP_ADDRESS: s.dappAddress });
    case "publisher": {
      if (s.publisher === undefined || s.contracts === undefined) return undefined;
      return {
        ...tsx("api/publisher/main.ts"),
        env: {
          ROLLUPS: s.rollups,
          ROLLUP_URL: urls.node,
          GRAPHQL_URL: urls.graphql,
          RPC_URL: urls.rpc,
          DAPP_ADDRESS: s.dappAddress,
          REGISTRY_ADDRESS: s.contracts.registry,
          GATE_ADDRESS: s.contracts.gate,
          PUBLISHER_PORT: String(s.publisher.port),
          DATA_DIR: s.dataDir,
        },
      };
    }
    case "indexer":
      if (s.index === undefined) return undefined;
      return {
        ...tsx("api/index/main.ts"),
        env: {
          ROLLUPS: s.rollups,
          ROLLUP_URL: urls.node,
          GRAPHQL_URL: urls.graphql,
          RPC_URL: urls.rpc,
          DAPP_ADDRESS: s.dappAddress,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          INDEX_PORT: String(s.index.port),
          DATA_DIR: s.dataDir,
        },
      };
    case "reader": {
      const k = readerNumber(piece);
      const readers = s.readers;
      if (readers === undefined || k > readers.nodePorts.length) return undefined;
      // A validator on the stack's chain (claims nothing, checks every claim), whose query interface the api
      // reads; under a Quorum the first N are its members, each voting with its own key.
      const key = s.quorum?.keys[k - 1];
      return {
        ...tsx("devnode/main.ts"),
        env: {
          RPC_URL: readers.rpcUrls?.[k - 1] ?? urls.rpc,
          DEVNODE_CHAIN: "external",
          ...(key === undefined ? { DEVNODE_ROLE: "validator" } : { DEVNODE_ROLE: "member", CLAIMER_PRIVATE_KEY: key }),
          // Its log lines name it: `[reader-k]`, or `[member-k]` for Quorum member k (the devnode is `[devnode]`).
          DEVNODE_LOG_LABEL: key === undefined ? piece : `member-${k}`,
          NODE_PORT: String(readers.nodePorts[k - 1]),
          NODE_HOST: "127.0.0.1",
          ROLLUP_HTTP_PORT: String(readers.rollupHttpPorts[k - 1]),
          ROLLUPS: s.rollups,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          DATA_DIR: readerDataDir(s, k),
        },
      };
    }
    case "reader-dapp": {
      const k = readerNumber(piece);
      const port = s.readers?.rollupHttpPorts[k - 1];
      if (port === undefined) return undefined;
      // Configured as the claimer's dapp is, so both compute the same state from the same inputs.
      return dappCommand(s, { ROLLUP_HTTP_SERVER_URL: `http://127.0.0.1:${port}`, DAPP_ADMINS: s.dappAdmins, DATA_DIR: readerDataDir(s, k), DAPP_ADDRESS: s.dappAddress });
    }
    case "provider":
      if (s.demoProvider === undefined) return undefined;
      return { ...tsx("scripts/demo-provider.ts"), env: { DEMO_PROVIDER_PORT: String(s.demoProvider.port), DATA_DIR: s.dataDir } };
    case "attestor": {
      if (s.attestor === undefined) return undefined;
      const k = attestorNumber(piece);
      // Two attestors or more hold the stack's nullifier key in shares, dealt on the first start.
      const shares = ensureLocalNullifierKeys(s.dataDir, s.attestor.ports.length) !== "none";
      return {
        ...tsx("attestor/server.ts"),
        env: {
          ATTESTOR_PORT: String(s.attestor.ports[k - 1]),
          ATTESTOR_HOST: "127.0.0.1",
          ATTESTOR_CA_FILES: attestorCaFiles(s),
          ATTESTOR_KEY_FILE: attestorKeyName(k),
          DATA_DIR: s.dataDir,
          ...(shares ? { NULLIFIER_SHARE_FILE: localShareFile(s.dataDir, k) } : {}),
        },
      };
    }
    case "redis": {
      if (s.replicas === undefined || !apiEnabled(s)) return undefined;
      const dir = join(s.dataDir, "redis");
      mkdirSync(dir, { recursive: true });
      return {
        file: "redis-server",
        // Limits and nonces live for minutes: nothing is worth writing to disk. Warnings only: its start-up
        // banner would fill the terminal npm start shares with every process.
        args: ["--port", String(s.replicas.redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning"],
        env: {},
      };
    }
    case "balancer": {
      if (s.replicas === undefined || !apiEnabled(s)) return undefined;
      writeFileSync(balancerConfigPath(s), balancerConfig(s));
      // -db: stay in the foreground, so the stack supervises it like any other piece.
      return { file: "haproxy", args: ["-db", "-f", balancerConfigPath(s)], env: {} };
    }
    case "api": {
      if (!apiEnabled(s)) return undefined;
      const replica = replicaIndex(piece);
      const replicaEnv: Record<string, string> =
        replica === undefined || s.replicas === undefined
          ? {}
          : {
              API_PORT: String(s.replicas.ports[replica - 1]),
              HOST: "127.0.0.1",
              PRIVATE_KEY: s.replicas.privateKeys[replica - 1] ?? s.privateKey,
              REDIS_URL: `redis://127.0.0.1:${s.replicas.redisPort}`,
              API_REPLICA: piece,
              API_REPLICA_COUNT: String(s.replicas.ports.length),
              TRUST_PROXY: "1",
            };
      return {
        ...tsx("api/main.ts"),
        env: {
          ...apiProviderEnv(s),
          API_PORT: String(s.apiPort),
          // GRAPHQL_URL follows (ROLLUP_URL/graphql).
          ROLLUP_URL: s.apiNodeUrl ?? urls.node,
          RPC_URL: urls.rpc,
          ROLLUPS: s.rollups,
          INPUTBOX_ADDRESS: s.inputBoxAddress,
          DAPP_ADDRESS: s.dappAddress,
          PRIVATE_KEY: s.privateKey,
          DATA_DIR: s.dataDir,
          ...(s.contracts === undefined ? {} : { REGISTRY_ADDRESS: s.contracts.registry, GATE_ADDRESS: s.contracts.gate }),
          ...(urls.index === undefined ? {} : { INDEX_URL: urls.index }),
          // With readers, the api sends the node no inspect: its reads go to them (docs/operations.md, Readers).
          ...(urls.readers.length === 0 ? {} : { READ_URLS: urls.readers.join(",") }),
          // Compiled pieces prove with the compiled prover too (no tsx in any process of the stack).
          ...(s.compiledDir === undefined ? {} : { PROVER_MODULE: compiledPath(s.compiledDir, "attestor/prover.ts") }),
          ...replicaEnv,
        },
      };
    }
  }
}
