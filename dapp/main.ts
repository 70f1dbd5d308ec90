/** The dapp process: configuration, database, migrations, then the rollup loop. The only file with side effects. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readConfig, type DappConfig } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { createLineLog } from "./log.ts";

const log = createLineLog("[dapp] ", (text) => process.stdout.write(text));
// "exit" runs on process.exit, on a normal end and after an uncaught exception.
process.on("exit", () => log.flush());

function loadConfig(): DappConfig {
  try {
    return readConfig(process.env);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}

const config = loadConfig();

if (config.dbPath !== ":memory:") mkdirSync(path.dirname(path.resolve(config.dbPath)), { recursive: true });
// Relative to this file, so the same line finds migrations/ from the sources (dapp/main.ts) and from
// the bundle (dist/dapp/main.js beside dist/migrations).
const migrationsFolder = config.migrationsDir ?? fileURLToPath(new URL("../migrations", import.meta.url));
const db = openDatabase({ path: config.dbPath, migrationsFolder });
if (config.admins.length === 0) log("warning: DAPP_ADMINS is empty, so no one can register schemas or grant roles");
const common = { db, admins: config.admins, log, ...(config.application === undefined ? {} : { application: config.application }) };
const { transport } = config;

if (transport.kind === "libcmt") {
  // Imported only here: the transport loads libcmt's addon, which a dapp on the rollup HTTP server never needs.
  const { createLibcmtDapp } = await import("./transports/libcmt.ts");
  const dapp = await createLibcmtDapp({ ...common, flushLog: () => log.flush(), ...(transport.outputsTreeFile === undefined ? {} : { outputsTreeFile: transport.outputsTreeFile }) });
  log(`node ${process.version} on ${process.arch}; database ${config.dbPath}; libcmt (${dapp.driver} driver); ${config.admins.length} admin(s)`);
  // The loop blocks in libcmt between requests (the machine stops there), so no signal handler could run.
  await dapp.run();
  dapp.close();
  db.$client.close();
} else {
  const { createDapp } = await import("./transports/http.ts");
  log(`node ${process.version} on ${process.arch}; database ${config.dbPath}; rollup server ${transport.rollupUrl}; ${config.admins.length} admin(s)`);
  log.flush();
  const dapp = createDapp({ ...common, rollupUrl: transport.rollupUrl });
  const stop = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stop.abort();
      db.$client.close();
      process.exit(0);
    });
  }
  await dapp.run({ signal: stop.signal });
}
