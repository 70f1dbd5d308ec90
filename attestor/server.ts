// SPDX-License-Identifier: AGPL-3.0-only
/**
 * The TLS attestor: Reclaim's attestor-core server, run as its own process (it is AGPL-3.0; nothing of
 * ours imports it in-process). It tunnels a client's TLS connection to the provider, checks the
 * transcript (and the zero-knowledge proofs of what was redacted), and signs a claim about what the
 * provider answered. Started by `npm start`; the address it signs with is printed on its ready line.
 */
import { createRequire } from "node:module";
import { Server } from "node:http";
import { privateKeyToAddress } from "viem/accounts";
import { loadAttestorConfig } from "./config.ts";
import { trustExtraRoots } from "./roots.ts";
import { stwoOperators, useStwoAsDefaultEngine } from "./zk-operators.ts";

const require = createRequire(import.meta.url);

async function main(): Promise<void> {
  const config = loadAttestorConfig();
  // attestor-core reads these once, when its modules load.
  process.env.PRIVATE_KEY = config.privateKey;
  process.env.DISABLE_BGP_CHECKS = "1";
  process.env.LOG_LEVEL = config.logLevel;
  process.env.NODE_ENV ??= "production";
  const roots = trustExtraRoots(config.caFiles);
  useStwoAsDefaultEngine(stwoOperators());

  // attestor-core listens on every interface (`listen(port)`); the local attestor belongs on loopback.
  const listen = Server.prototype.listen as (this: Server, ...args: unknown[]) => Server;
  Server.prototype.listen = function listenOnHost(this: Server, ...args: unknown[]): Server {
    Server.prototype.listen = listen as typeof Server.prototype.listen;
    return args.length === 1 && typeof args[0] === "number" ? listen.call(this, args[0], config.host) : listen.apply(this, args);
  } as typeof Server.prototype.listen;

  const { createServer } = require("@reclaimprotocol/attestor-core/lib/server/create-server") as {
    createServer(port: number): Promise<unknown>;
  };
  await createServer(config.port);
  const address = privateKeyToAddress(config.privateKey);
  console.log(`[attestor] listening on ws://${config.host}:${config.port}/ws as ${address} (extra roots: ${roots})`);
}

main().catch((error: unknown) => {
  console.error(`[attestor] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
