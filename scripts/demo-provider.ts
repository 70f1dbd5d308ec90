/**
 * The demo provider `npm start -- --demo-provider` runs: an HTTPS JSON server on localhost with a local
 * CA (DATA_DIR/demo-provider/), so the five-minute walk-through can make a claim proven by the TLS
 * attestor without any outside service. `GET /balance.json` answers a balance; `?balance=N` sets it.
 * The answer names an account (`data.accountId`), as a bank's does: the one the credentials open. Each
 * bearer token is its own account (none is the demo's first), so a schema unique per account can be
 * tried with two accounts (docs/nullifiers.md). The account is derived from the token, never taken from
 * the URL: a URL is published in the attestors' claims, the headers are not.
 *
 *   DEMO_PROVIDER_PORT=8443 DATA_DIR=.data npx tsx scripts/demo-provider.ts
 */
import { createServer } from "node:https";
import { join, resolve } from "node:path";
import { z } from "zod";
import { portSchema } from "../common/env.ts";
import { wantsHelp } from "./lib/cli.ts";
import { demoAccountOf } from "./lib/demo-account.ts";
import { ensureLocalCa, readPem } from "./lib/local-ca.ts";

const USAGE = "DEMO_PROVIDER_PORT=8443 DATA_DIR=.data npx tsx scripts/demo-provider.ts   (npm start -- --demo-provider runs it)";

if (wantsHelp()) {
  console.log(`usage: ${USAGE}`);
  process.exit(0);
}

const env = z
  .object({ DEMO_PROVIDER_PORT: portSchema.default(8443), DATA_DIR: z.string().min(1).default(".data") })
  .safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== "")));
if (!env.success) {
  console.error(`[provider] invalid configuration: ${env.error.issues[0]?.path.join(".")}: ${env.error.issues[0]?.message}`);
  process.exit(2);
}
const ca = ensureLocalCa(join(resolve(env.data.DATA_DIR), "demo-provider"));
let balance = 512.5;

const server = createServer({ key: readPem(ca.keyPath), cert: readPem(ca.certPath), minVersion: "TLSv1.2" }, (req, res) => {
  const url = new URL(req.url ?? "/", "https://localhost");
  const send = (status: number, body: unknown): void => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  if (url.pathname !== "/balance.json") return send(404, { error: "not found: try /balance.json" });
  if (req.headers.authorization === "Bearer wrong") return send(401, { error: "bad credentials" });
  const asked = url.searchParams.get("balance");
  if (asked !== null && Number.isFinite(Number(asked))) balance = Number(asked);
  send(200, { data: { balance, currency: "EUR", accountId: demoAccountOf(req.headers.authorization) } });
});
server.listen(env.data.DEMO_PROVIDER_PORT, "127.0.0.1", () => {
  console.log(`[provider] https://localhost:${env.data.DEMO_PROVIDER_PORT}/balance.json (CA ${ca.caPath})`);
});
const stop = (): void => {
  server.close(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
