/**
 * `npm run inspect -- '<json>' [--post]`: runs one inspect query through the node's query interface
 * (GET with the percent-encoded JSON in the path, or POST with the raw body) and prints the envelope
 * with each report payload decoded. Exits 0 when the query is accepted, 1 otherwise.
 */
import { describeEnvelope, loadEndpoints, parseArgs, parseJsonArgument, runScript, UsageError } from "./lib/cli.ts";
import { RollupClient } from "./lib/rollup-client.ts";

const USAGE = `npm run inspect -- '{"type":"health","params":{}}' [--post]`;

runScript(async () => {
  const { positional, flags } = parseArgs(process.argv.slice(2), [], ["--post"]);
  if (positional.length !== 1) throw new UsageError("expected exactly one query (JSON text)");
  const text = positional[0] as string;
  // Validated for a friendly error, but sent as typed: the node and the dapp judge the query.
  parseJsonArgument(text, "the query");
  const client = new RollupClient(loadEndpoints(process.env));
  const envelope = await client.inspect(text, flags.has("--post") ? "POST" : "GET");
  console.log(JSON.stringify(describeEnvelope(envelope), null, 2));
  return envelope.status === "Accepted" ? 0 : 1;
}, USAGE);
