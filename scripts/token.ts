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

const USAGE = "usage: npm run token -- admin [--sub ADDRESS] [--ttl SECONDS] | npm run token -- user <address> [--ttl SECONDS]";

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
      if (value === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      if (arg === "--ttl") {
        ttl = Number(value);
        if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`--ttl must be a positive integer of seconds\n${USAGE}`);
      } else {
        sub = value;
      }
    } else {
      positional.push(arg);
    }
  }
  const [role, address] = positional;
  if (role === "admin") {
    const key = (env.PRIVATE_KEY || DEFAULT_PRIVATE_KEY) as `0x${string}`;
    const subject = sub ?? privateKeyToAccount(key).address;
    if (!isAddress(subject)) throw new Error(`--sub must be an address\n${USAGE}`);
    return { role, subject, ttl };
  }
  if (role === "user") {
    if (address === undefined || !isAddress(address)) throw new Error(`user needs an address\n${USAGE}`);
    return { role, subject: address, ttl };
  }
  throw new Error(USAGE);
}

async function main(): Promise<void> {
  try {
    const request = parseTokenArgs(process.argv.slice(2), process.env);
    const secret = resolveJwtSecret(process.env.JWT_SECRET || undefined, process.env.DATA_DIR || ".data");
    const { token } = await issueToken(secret, request.subject, request.role, request.ttl);
    console.log(token);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}

await main();
