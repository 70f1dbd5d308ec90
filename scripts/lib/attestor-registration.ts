/**
 * `npm start`'s last step when it runs TLS attestors: register each attestor's address in the rollup
 * through the api (an admin's `POST /api/core/attestors`), once, so a schema that requires proof works out
 * of the box. A stack pointed at a real deployment does this by hand: trusting an attestor is an admin's
 * decision (docs/provider.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { issueToken } from "../../api/auth/tokens.ts";
import { DEFAULT_PRIVATE_KEY, resolveJwtSecret } from "../../api/config.ts";
import { attestorKeyName } from "./stack-pieces.ts";

/** The address local attestor `k` (1-based) signs with (its key is made in DATA_DIR on its first start). */
export function localAttestorAddress(dataDir: string, k = 1): Address {
  const key = readFileSync(join(dataDir, attestorKeyName(k)), "utf8").trim() as `0x${string}`;
  return privateKeyToAccount(key).address;
}

/** A short-lived admin token for the local stack's own api: its wallet is the rollup's admin. */
export async function localAdminToken(dataDir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const admin = privateKeyToAccount((env.PRIVATE_KEY || DEFAULT_PRIVATE_KEY) as `0x${string}`).address;
  return (await issueToken(resolveJwtSecret(env.JWT_SECRET, dataDir), admin, "admin", 300)).token;
}

export async function registerLocalAttestor(apiUrl: string, dataDir: string, env: NodeJS.ProcessEnv, k = 1): Promise<"registered" | "already registered"> {
  const address = localAttestorAddress(dataDir, k);
  const listed = (await (await fetch(`${apiUrl}/api/core/attestors`)).json()) as { data?: { address: string }[] };
  if (listed.data?.some((a) => a.address.toLowerCase() === address.toLowerCase())) return "already registered";
  const token = await localAdminToken(dataDir, env);
  const response = await fetch(`${apiUrl}/api/core/attestors`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ address, name: k === 1 ? "local attestor (npm start)" : `local attestor ${k} (npm start)` }),
  });
  if (!response.ok) throw new Error(`registering the attestor ${address} failed: HTTP ${response.status} ${await response.text()}`);
  return "registered";
}
