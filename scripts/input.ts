/**
 * `npm run input -- '<json>' [--sender N|0xaddress] [--timeout MS]`: sends one advance input to the InputBox
 * from a hardhat account (default #0, the admin), prints its index, waits for the node's verdict and
 * prints the status with the decoded notices and reports. Exits 0 when the input is accepted, 1 otherwise.
 *
 * `npm run input -- decode <0x hex>`: prints the JSON a payload means (a compact batch as the JSON batch of
 * its items, its schemas read from the node by their short index); exits 1 when part of it cannot be read.
 */
import type { Hex } from "viem";
import { compactSchemaOf, type CompactSchema } from "../common/compact-batch.ts";
import { hexToUtf8 } from "../common/hex.ts";
import type { SchemaDetail } from "../common/wire.ts";
import { describeVerdict, loadEndpoints, parseArgs, parseJsonArgument, parseSender, runScript, UsageError } from "./lib/cli.ts";
import { decodeInputPayload } from "./lib/decode-input.ts";
import { RollupClient } from "./lib/rollup-client.ts";

const USAGE = `npm run input -- '{"type":"set_role","params":{...}}' [--sender N|0xaddress] [--timeout MS]  |  npm run input -- decode <0x hex payload>`;

/** The schema holding a short index, as the node answers `provider_schema` by `schema_index`. */
async function schemaByIndex(client: RollupClient, index: number): Promise<CompactSchema | undefined> {
  const envelope = await client.inspect({ type: "provider_schema", params: { schema_index: index, include_index: true } });
  const report = envelope.reports[0]?.payload;
  if (envelope.status !== "Accepted" || report === undefined) return undefined;
  const s = JSON.parse(hexToUtf8(report as Hex)) as SchemaDetail;
  return compactSchemaOf(index, s.schema_id, s.provider_type, s.domain, s.bucket_definitions);
}

async function decode(argv: readonly string[]): Promise<number> {
  if (argv.length !== 1 || !/^0x(?:[0-9a-fA-F]{2})*$/.test(argv[0] as string)) throw new UsageError("decode takes one payload: 0x and an even number of hex digits");
  const client = new RollupClient(loadEndpoints(process.env));
  const decoded = await decodeInputPayload(argv[0] as string, (index) => schemaByIndex(client, index));
  if (decoded.json !== null) console.log(JSON.stringify(decoded.json, null, 2));
  for (const problem of decoded.problems) console.error(problem);
  return decoded.problems.length === 0 ? 0 : 1;
}

runScript(async () => {
  if (process.argv[2] === "decode") return decode(process.argv.slice(3));
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
