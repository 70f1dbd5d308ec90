/**
 * `npm start`'s configuration: the environment and flags, validated once with zod (a bad value names
 * its variable), turned into the stack's settings. Every value has an embedded default.
 */
import { resolve } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { configAddressSchema, flagSchema, portSchema } from "../../common/env.ts";
import { describeIssues, DEFAULTS } from "../../devnode/config.ts";
import { defaultDappCommand, type StackSettings } from "./stack.ts";

const port = portSchema.min(1);
const address = configAddressSchema;
const flag = flagSchema;

const envSchema = z.object({
  RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  CHAIN_PORT: port.default(DEFAULTS.chainPort),
  NODE_PORT: port.default(DEFAULTS.nodePort),
  NODE_HOST: z.string().min(1).default("127.0.0.1"),
  ROLLUP_HTTP_PORT: port.default(DEFAULTS.rollupHttpPort),
  API_PORT: port.default(DEFAULTS.apiPort),
  INPUTBOX_ADDRESS: address.default(DEFAULTS.inputBoxAddress),
  DAPP_ADDRESS: address.default(DEFAULTS.dappAddress),
  PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key")
    .default(DEFAULTS.privateKey),
  DAPP_ADMINS: z.string().optional(),
  DATA_DIR: z.string().min(1).default(DEFAULTS.dataDir),
  DAPP_COMMAND: z.string().min(1).optional(),
  DAPP_BUNDLE: flag.default(false),
  START_API: z.enum(["auto", "on", "off"]).default("auto"),
  ATTESTOR_PORT: port.default(8003),
  ATTESTOR_CA_FILES: z.string().default(""),
  START_ATTESTOR: z.enum(["on", "off"]).default("on"),
  DEMO_PROVIDER_PORT: port.default(8443),
});

export const START_FLAGS = ["--reset", "--bundle", "--no-api", "--no-attestor", "--demo-provider"] as const;

export interface StartOptions {
  settings: StackSettings;
  reset: boolean;
}

export class StartConfigError extends Error {
  override readonly name = "StartConfigError";
}

export function loadStartOptions(env: NodeJS.ProcessEnv, argv: readonly string[], root: string): StartOptions {
  const unknown = argv.filter((arg) => !(START_FLAGS as readonly string[]).includes(arg));
  if (unknown.length > 0) {
    throw new StartConfigError(`unknown argument: ${unknown.join(" ")} (known: ${START_FLAGS.join(", ")})`);
  }
  // An empty variable means "unset", as shells and compose files commonly produce.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw new StartConfigError(`invalid configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  const bundle = argv.includes("--bundle") || e.DAPP_BUNDLE;
  return {
    reset: argv.includes("--reset"),
    settings: {
      root,
      dataDir: resolve(root, e.DATA_DIR),
      externalRpcUrl: e.RPC_URL,
      chainPort: e.CHAIN_PORT,
      nodePort: e.NODE_PORT,
      nodeHost: e.NODE_HOST,
      rollupHttpPort: e.ROLLUP_HTTP_PORT,
      apiPort: e.API_PORT,
      inputBoxAddress: e.INPUTBOX_ADDRESS as StackSettings["inputBoxAddress"],
      dappAddress: e.DAPP_ADDRESS as StackSettings["dappAddress"],
      privateKey: e.PRIVATE_KEY,
      // The api's wallet is the dapp's first admin, so the api can register schemas from the start.
      dappAdmins: e.DAPP_ADMINS ?? privateKeyToAccount(e.PRIVATE_KEY as `0x${string}`).address,
      dappCommand: e.DAPP_COMMAND ?? defaultDappCommand(bundle),
      api: argv.includes("--no-api") || e.START_API === "off" ? false : e.START_API === "on" ? true : "auto",
      attestor: argv.includes("--no-attestor") || e.START_ATTESTOR === "off" ? undefined : { port: e.ATTESTOR_PORT, caFiles: e.ATTESTOR_CA_FILES },
      demoProvider: argv.includes("--demo-provider") ? { port: e.DEMO_PROVIDER_PORT } : undefined,
      env: {},
      logDir: undefined,
    },
  };
}
