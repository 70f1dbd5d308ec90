/**
 * `npm start`: the whole local stack with one command. Starts the chain (unless RPC_URL names one), the
 * devnode, the dapp and the api (when api/main.ts exists), each once the previous one is ready; restarts
 * every piece but the chain and the devnode when it dies (scripts/lib/stack-restarts.ts), and stops when
 * one of those two does; stops everything on Ctrl-C, SIGTERM or SIGHUP within STOP_TIMEOUT_MS, leaving no
 * process behind. Run as `node --import tsx` (package.json), not through the tsx command: its signal relay
 * SIGKILLs a child that is slow to acknowledge a signal, and a supervisor killed so cannot stop its pieces
 * (they would still stop on their lifelines: scripts/lib/stack-lifeline.ts).
 *
 *   npm start [-- --reset] [--bundle] [--no-api] [--no-attestor] [--demo-provider] [--api-replicas N] [--attestors N] [--readers N] [--quorum N] [--publish] [--validator]
 *   (configuration: docs/devnode.md; replicas: docs/operations.md)
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { wipeDataDir } from "./lib/data-dir.ts";
import { wantsHelp } from "./lib/cli.ts";
import { assertPortsFree, loadStartOptions, StartConfigError, stackPorts } from "./lib/stack-config.ts";
import { localAttestorAddress, registerLocalAttestor } from "./lib/attestor-registration.ts";
import { LOCAL_NULLIFIER_THRESHOLD, localNullifierKeysDir, registerLocalNullifierKeys } from "./lib/stack-nullifier-keys.ts";
import { V2_DEFAULTS } from "../devnode/config.ts";
import { apiEnabled, stackStatusPath, stackUrls, type StackSettings } from "./lib/stack-pieces.ts";
import { PieceStartError, Supervisor } from "./lib/stack-supervisor.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const say = (line: string): void => console.log(`[stack] ${line}`);

const USAGE =
  "npm start [-- --reset] [--bundle] [--no-api] [--no-attestor] [--demo-provider] [--api-replicas N] [--attestors N] [--readers N] [--quorum N] [--publish] [--validator]    (configuration by environment: docs/devnode.md)";

async function main(): Promise<number> {
  if (wantsHelp()) {
    console.log(`usage: ${USAGE}`);
    return 0;
  }
  const { settings, reset, stopBoundMs } = loadStartOptions(process.env, process.argv.slice(2), root);
  // Every port of every piece, checked once before anything is touched (clashes between pieces: loadStartOptions).
  await assertPortsFree(stackPorts(settings));
  if (reset) {
    wipeDataDir(settings.dataDir, root);
    say(`--reset: emptied ${settings.dataDir}`);
  }
  mkdirSync(settings.dataDir, { recursive: true });

  let exitCode = 0;
  let shuttingDown: Promise<void> | undefined;
  let stopped = (): void => {};
  const done = new Promise<void>((resolveDone) => (stopped = resolveDone));
  const shutdown = (code: number): Promise<void> => {
    exitCode = Math.max(exitCode, code);
    shuttingDown ??= (async () => {
      const from = Date.now();
      say(`stopping (at most ${stopBoundMs / 1000} s; Ctrl-C again to kill every piece now)...`);
      await supervisor.stopAll();
      say(`stopped in ${((Date.now() - from) / 1000).toFixed(1)} s`);
      stopped();
    })();
    return shuttingDown;
  };
  const supervisor = new Supervisor(settings, {
    restarts: true,
    readyTimeoutMs: 60_000,
    log: say,
    statusFile: stackStatusPath(settings),
    stopBoundMs,
    onStackDown: (reason) => {
      say(reason);
      void shutdown(1);
    },
  });
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts += 1;
    if (interrupts === 2) {
      // A second Ctrl-C does not wait for the grace periods: every piece is killed, and the stop ends when
      // their exits are seen (the "stopped" line still comes).
      say("killing every piece now");
      supervisor.killNow();
    } else if (interrupts > 2) {
      // The exit hook still kills every child; a piece left anyway stops on its lifeline.
      process.exit(130);
    }
    void shutdown(0);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // The terminal closed: the children, in process groups of their own, would not hear of it.
  process.on("SIGHUP", onSignal);

  const urls = stackUrls(settings);
  try {
    for (const piece of supervisor.pieces()) {
      say(`starting ${piece}...`);
      await supervisor.start(piece);
      if (shuttingDown !== undefined) break;
    }
  } catch (error) {
    // A failed start after Ctrl-C is just the interrupted start.
    if (shuttingDown === undefined) say(error instanceof Error ? error.message : String(error));
    // A piece that refused its configuration (exit 2: a bad variable, a refused DEVNODE_SNAPSHOT) is a configuration error of the stack too.
    await shutdown(error instanceof PieceStartError && error.exitCode === 2 ? 2 : 1);
  }
  const attestorNotes: string[] = [];
  for (let k = 1; shuttingDown === undefined && k <= (settings.attestor?.ports.length ?? 0); k++) {
    let note = `${urls.attestors[k - 1] ?? ""} (${localAttestorAddress(settings.dataDir, k)}`;
    if (apiEnabled(settings)) {
      try {
        note += `, ${await registerLocalAttestor(urls.api, settings.dataDir, process.env, k)} in the rollup`;
      } catch (error) {
        note += `, not registered: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    attestorNotes.push(`${note})`);
  }
  // Once its holders are registered: the key the attestors hold in shares, for schemas unique per account.
  let nullifierNote = "";
  if (shuttingDown === undefined && apiEnabled(settings) && (settings.attestor?.ports.length ?? 0) >= LOCAL_NULLIFIER_THRESHOLD) {
    const registered = await registerLocalNullifierKeys(urls.api, settings.dataDir, process.env).catch((error: unknown) => `not registered: ${error instanceof Error ? error.message : String(error)}`);
    nullifierNote = `  nullifier key ${registered}, shares in ${localNullifierKeysDir(settings.dataDir)} (docs/nullifiers.md)`;
  }
  if (shuttingDown === undefined) {
    const chainNote = settings.externalRpcUrl === undefined ? `hardhat, log ${supervisor.logPath("chain")}` : "external";
    console.log(
      [
        "",
        "Local stack is up:",
        `  chain     ${urls.rpc} (${chainNote})`,
        ...(settings.rollups === "v2"
          ? [`  rollups   v2 (JSON-RPC POST ${urls.node}/rpc)`, `  inspect   POST ${urls.node}/inspect/${V2_DEFAULTS.applicationName} (the JSON query as the body)`]
          : [`  inspect   ${urls.inspect}/<percent-encoded JSON query>`, `  graphql   ${urls.graphql}`]),
        apiEnabled(settings)
          ? `  api       ${urls.api}${replicaNote(settings)}`
          : settings.env.DEVNODE_ROLE === "validator"
            ? "  api       (none: a validator only checks the claimer's claims)"
            : "  api       (not started: api/main.ts not found or disabled)",
        apiEnabled(settings) ? `  ws        ${urls.ws}` : "",
        urls.index === undefined ? "" : `  index     ${urls.index}/graphql (EAS's GraphQL, also at the api's /graphql; ${process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "" ? `PGlite in ${settings.dataDir}/index` : "PostgreSQL at DATABASE_URL"}; docs/index.md)`,
        settings.env.DEVNODE_ROLE === "validator" ? `  validator ${urls.node}/validator (npm run validate -- --node ${urls.node})` : "",
        ...urls.readers.map((url, i) => `  reader ${i + 1}  ${url}/inspect/... (status ${url}/reader; the api's reads go to the readers${i < (settings.quorum?.members.length ?? 0) ? `; Quorum member ${i + 1}, ${settings.quorum?.members[i]}` : ""})`),
        settings.quorum === undefined ? "" : `  consensus Quorum ${V2_DEFAULTS.authorityAddress}: ${Math.floor(settings.quorum.members.length / 2) + 1} of ${settings.quorum.members.length} members accept a root (votes: ${urls.node}/consensus; docs/quorum.md)`,
        ...attestorNotes.map((note) => `  attestor  ${note}`),
        nullifierNote,
        urls.demoProvider !== undefined ? `  provider  ${urls.demoProvider}/balance.json (demo, CA ${settings.dataDir}/demo-provider/ca.pem)` : "",
        `  InputBox  ${settings.inputBoxAddress}`,
        ...(settings.contracts === undefined ? [] : [`  registry  ${settings.contracts.registry} (EAS's IEAS: getAttestation, isAttestationValid; docs/eas.md)`, `  gate      ${settings.contracts.gate}`]),
        settings.publisher === undefined ? "" : `  publisher brings every attestation and revocation with its proof to both (metrics http://127.0.0.1:${settings.publisher.port}/metrics)`,
        `  dapp      ${settings.dappAddress} (admins ${settings.dappAdmins})`,
        `  data      ${settings.dataDir}`,
        "Press Ctrl-C to stop.",
        "",
      ]
        .filter((line) => line !== "")
        .join("\n"),
    );
  }
  await done;
  return exitCode;
}

function replicaNote(settings: StackSettings): string {
  const replicas = settings.replicas;
  if (replicas === undefined) return "";
  const ports = replicas.ports;
  return ` (haproxy: ${ports.length} replicas on ${ports[0]}-${ports[ports.length - 1]}, limits shared in Redis on ${replicas.redisPort})`;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[stack] ${error instanceof StartConfigError ? `${error.message}\nusage: ${USAGE}` : String(error)}`);
    process.exit(error instanceof StartConfigError ? 2 : 1);
  },
);
