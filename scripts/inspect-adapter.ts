/**
 * `npm run inspect-adapter`: the specification's rollup query interface (`GET /inspect/<percent-encoded
 * JSON>` and `POST /inspect`, the Accepted/Rejected envelope) in front of a Cartesi Rollups v2 node, which
 * answers only `POST /inspect/<application>` in its own shape (devnode/v2/spec-inspect.ts). The v2 devnode
 * serves the same on its own port; this is for a real v2 node (docs/rollups-v2.md).
 */
import { createServer } from "node:http";
import { specInspectRoute, v2InspectOverHttp } from "../devnode/v2/spec-inspect.ts";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run inspect-adapter -- --node <v2 node URL> [--application <name or address>] [--port 10010] [--host 127.0.0.1]";

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--node", "--application", "--port", "--host"]);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const node = options.get("--node");
  if (node === undefined || !/^https?:\/\/[^\s]+$/.test(node)) throw new UsageError("--node: expected the v2 node's http(s) URL, e.g. http://127.0.0.1:10000");
  const port = Number(options.get("--port") ?? 10010);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError("--port: expected a TCP port");
  const host = options.get("--host") ?? "127.0.0.1";
  const application = options.get("--application") ?? "attestation";
  const server = createServer((req, res) => {
    specInspectRoute(v2InspectOverHttp(node, application))(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end(error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  console.log(`[inspect-adapter] http://${host}:${port}/inspect/<query> -> ${node}/inspect/${application}`);
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => server.close(() => resolve()));
  });
  return 0;
}, USAGE);
