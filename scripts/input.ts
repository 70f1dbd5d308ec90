/**
 * `npm run input -- '<json>' [--sender N|0xaddress] [--timeout MS]`: sends one advance input to the InputBox
 * from a hardhat account (default #0, the admin), prints its index, waits for the node's verdict and
 * prints the status with the decoded notices and reports. Exits 0 when the input is accepted, 1 otherwise.
 */
import { describeVerdict, loadEndpoints, parseArgs, parseJsonArgument, parseSender, runScript, UsageError } from "./lib/cli.ts";
import { RollupClient } from "./lib/rollup-client.ts";

const USAGE = `npm run input -- '{"type":"set_role","params":{...}}' [--sender N|0xaddress] [--timeout MS]`;

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--sender", "--timeout"]);
  if (positional.length !== 1) throw new UsageError("expected exactly one input (JSON text, or 0x hex)");
  const text = positional[0] as string;
  const input = text.startsWith("0x") ? text : parseJsonArgument(text, "the input");
  const sender = parseSender(options.get("--sender") ?? 0, "--sender");
  const timeout = Number(options.get("--timeout") ?? 30_000);
  if (!Number.isInteger(timeout) || timeout <= 0) throw new UsageError("--timeout must be a positive number of ms");

  const client = new RollupClient(loadEndpoints(process.env));
  const sent = await client.addInput(input, sender);
  console.log(`input ${sent.index} sent by ${sent.sender} in ${sent.txHash} (block ${sent.blockNumber})`);
  const verdict = await client.waitForVerdict(sent.index, timeout);
  console.log(JSON.stringify(describeVerdict(verdict), null, 2));
  return verdict.status === "ACCEPTED" ? 0 : 1;
}, USAGE);
