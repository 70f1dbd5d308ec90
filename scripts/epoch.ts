/**
 * `npm run epoch`: closes an epoch now on the devnode (`POST /epoch/close`): every input it has read from
 * the chain is processed first, then an epoch over the inputs processed since the last one is closed and
 * claimed through the Authority. Prints the epoch and the claim; exits 0 when an epoch closed, 3 when
 * there was nothing new to close. `npm run epoch -- --status` only prints the epochs so far.
 */
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run epoch [-- --status]    (the devnode from NODE_PORT / ROLLUP_URL, as npm start runs it)";

runScript(async () => {
  const { positional, flags } = parseArgs(process.argv.slice(2), [], ["--status"]);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const { nodeUrl } = loadEndpoints(process.env);
  const status = flags.has("--status");
  let response: Response;
  try {
    response = await fetch(`${nodeUrl}${status ? "/epochs" : "/epoch/close"}`, { method: status ? "GET" : "POST" });
  } catch (error) {
    throw new Error(`no devnode answers at ${nodeUrl} (is the stack running? npm start): ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`the devnode answered ${response.status}: ${text}`);
  const body = JSON.parse(text) as { closed?: unknown };
  console.log(JSON.stringify(body, null, 2));
  return status || body.closed !== null ? 0 : 3;
}, USAGE);
