/**
 * `npm run token -- admin [--ttl SECONDS]` or `npm run token -- user <address> [--ttl SECONDS]`: prints a
 * bearer token signed with the api's secret, resolved exactly as the api does (JWT_SECRET, else the
 * development secret in DATA_DIR/jwt-secret, created if missing). An admin token's subject is the api's
 * wallet (PRIVATE_KEY) unless `--sub <address>` names another.
 */
import { privateKeyToAccount } from "viem/accounts";
import { isAddress } from "../common/address.ts";
import { DEFAULT_TOKEN_TTL_SECONDS, issueToken, type TokenRole } from "../api/auth/tokens.ts";
import { DEFAULT_PRIVATE_KEY, resolveJwtSecret } from "../api/config.ts";
import { runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run token -- admin [--sub ADDRESS] [--ttl SECONDS] | npm run token -- user <address> [--ttl SECONDS]";

interface TokenRequest {
  role: TokenRole;
  subject: string;
  ttl: number;
}

export function parseTokenArgs(argv: string[], env: NodeJS.ProcessEnv): TokenRequest {
  const positional: string[] = [];
  let ttl = DEFAULT_TOKEN_TTL_SECONDS;
  let sub: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--ttl" || arg === "--sub") {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === "--ttl") {
        ttl = Number(value);
        if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError(`--ttl must be a positive integer of seconds`);
      } else {
        sub = value;
      }
    } else if (arg.startsWith("--")) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  const [role, address] = positional;
  if (role === "admin") {
    const key = (env.PRIVATE_KEY || DEFAULT_PRIVATE_KEY) as `0x${string}`;
    const subject = sub ?? privateKeyToAccount(key).address;
    if (!isAddress(subject)) throw new UsageError(`--sub must be an address`);
    return { role, subject, ttl };
  }
  if (role === "user") {
    if (address === undefined || !isAddress(address)) throw new UsageError(`user needs an address`);
    return { role, subject: address, ttl };
  }
  throw new UsageError(role === undefined ? "expected a role: admin or user" : `unknown role ${role}: admin or user`);
}

runScript(async () => {
  const request = parseTokenArgs(process.argv.slice(2), process.env);
  const secret = resolveJwtSecret(process.env.JWT_SECRET || undefined, process.env.DATA_DIR || ".data");
  const { token } = await issueToken(secret, request.subject, request.role, request.ttl);
  console.log(token);
  return 0;
}, USAGE);
