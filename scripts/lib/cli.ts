/**
 * Shared pieces of the command-line scripts (input, inspect, replay): where the stack is, validated once
 * with zod, and how a verdict or an inspect answer is printed for a person.
 */
import type { Address } from "viem";
import { z } from "zod";
import { configAddressSchema, portSchema } from "../../common/env.ts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { describeIssues, DEFAULTS, ROLLUPS_VERSIONS, V2_DEFAULTS } from "../../devnode/config.ts";
import { UsageError } from "../../toolkit/usage-error.ts";
import { decodePayload, type InputVerdict, type RollupEndpoints, type Sender } from "./rollup-client.ts";

const address = configAddressSchema;
const port = portSchema.min(1);
const envSchema = z.object({
  CHAIN_PORT: port.default(DEFAULTS.chainPort),
  NODE_PORT: port.default(DEFAULTS.nodePort),
  RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  ROLLUP_URL: z.url({ protocol: /^https?$/ }).optional(),
  ROLLUPS: z.enum(ROLLUPS_VERSIONS).default("v1"),
  INPUTBOX_ADDRESS: address.optional(),
  DAPP_ADDRESS: address.optional(),
});

/** Thrown for a bad argument (toolkit/usage-error.ts, where toolkit/riscv64.ts throws it too); every script takes it from here. */
export { UsageError };

/** The stack the scripts talk to: the same variables and defaults as `npm start`. */
export function loadEndpoints(env: NodeJS.ProcessEnv): RollupEndpoints {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw new UsageError(`invalid configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  return {
    rpcUrl: e.RPC_URL ?? `http://127.0.0.1:${e.CHAIN_PORT}`,
    nodeUrl: (e.ROLLUP_URL ?? `http://127.0.0.1:${e.NODE_PORT}`).replace(/\/+$/, ""),
    inputBoxAddress: (e.INPUTBOX_ADDRESS ?? (e.ROLLUPS === "v2" ? V2_DEFAULTS.inputBoxAddress : DEFAULTS.inputBoxAddress)) as Address,
    dappAddress: (e.DAPP_ADDRESS ?? (e.ROLLUPS === "v2" ? V2_DEFAULTS.applicationAddress : DEFAULTS.dappAddress)) as Address,
    rollups: e.ROLLUPS,
  };
}

/** `N` (a hardhat account number) or a 0x address. */
export function parseSender(value: unknown, where: string): Sender {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^[0-9]+$/.test(value)) return Number(value);
  if (typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value)) return value as Address;
  throw new UsageError(`${where}: a sender is a hardhat account number or a 0x address, not ${JSON.stringify(value)}`);
}

/** Splits `args` into positional values and `--name value` options (only the names in `valued`). */
export function parseArgs(
  args: readonly string[],
  valued: readonly string[],
  flags: readonly string[] = [],
): { positional: string[]; options: Map<string, string>; flags: Set<string> } {
  const positional: string[] = [];
  const options = new Map<string, string>();
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (valued.includes(arg)) {
      const value = args[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      options.set(arg, value);
    } else if (flags.includes(arg)) {
      seen.add(arg);
    } else if (arg.startsWith("--")) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  return { positional, options, flags: seen };
}

export function parseJsonArgument(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${what} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A verdict with its payloads decoded (JSON where they are JSON). */
export function describeVerdict(verdict: InputVerdict): Record<string, unknown> {
  return {
    index: verdict.index,
    status: verdict.status,
    msg_sender: verdict.msgSender,
    block_number: verdict.blockNumber,
    timestamp: verdict.timestamp,
    notices: verdict.notices.map(decodePayload),
    reports: verdict.reports.map(decodePayload),
    ...(verdict.vouchers.length > 0 ? { vouchers: verdict.vouchers } : {}),
  };
}

/** The inspect envelope as received, plus each payload decoded beside it. */
export function describeEnvelope(envelope: InspectEnvelope): Record<string, unknown> {
  return {
    status: envelope.status,
    exception_payload: envelope.exception_payload,
    ...(envelope.exception_payload !== null ? { exception: decodePayload(envelope.exception_payload) } : {}),
    reports: envelope.reports.map((r) => ({ payload: r.payload, decoded: decodePayload(r.payload) })),
    processed_input_count: envelope.processed_input_count,
  };
}

/** True when the command line asks for help (`--help` or `-h` anywhere). */
export function wantsHelp(argv: readonly string[] = process.argv.slice(2)): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/**
 * Runs a script's main: `--help` prints the usage (exit 0); a UsageError prints one line saying what is
 * wrong and the usage (exit 2); any other failure prints its message without a stack trace (exit 1).
 */
export function runScript(main: () => Promise<number>, usage: string): void {
  if (wantsHelp()) {
    console.log(`usage: ${usage}`);
    process.exit(0);
  }
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`${error.message}\nusage: ${usage}`);
        process.exit(2);
      }
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
