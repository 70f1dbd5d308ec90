/**
 * What test/api/attestor.e2e.test.ts shares with nothing else but keeps apart to stay readable: its
 * schemas and secrets, the api called as a client would, a forger's signature, and the project's scripts
 * run as a user runs them.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import { stringToHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { schemaIdOf } from "../../common/ids.ts";
import { claimIdentifier, claimSignText, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import { attestorKeyName } from "../../scripts/lib/stack-pieces.ts";
import { bearer, JSON_HEADERS } from "../support/api-fixtures.ts";
import { processArgs, proverModuleEnv } from "../support/stack.ts";

export const ROOT = join(import.meta.dirname, "..", "..");
export const field = "data.balance";
export const definition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
export const bucketDefinition = { field, ...definition };
export const schema = {
  provider: "http",
  flowType: "balance",
  domain: "localhost",
  bucketDefinitions: { [field]: definition },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
  proof: "attestor" as const,
};
export const quorumSchema = { ...schema, flowType: "balance-by-two", attestorQuorum: 2 };
export const schemaId = schemaIdOf(schema);
export const quorumSchemaId = schemaIdOf(quorumSchema);
export const recipient = nacl.box.keyPair();

/** The provider's value: private, so it must be found nowhere the public can read. */
export const VALUE = "4321.987";
export const VALUE_HEX = stringToHex(VALUE).slice(2);
/** The provider's credential: only the provider may see it. */
export const SENTINEL = "Bearer sentinel-5b1e9c0d";
/** Hardhat account #2: USER_B's wallet, which has no role in the rollup. */
export const USER_B_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";

export interface ApiAnswer {
  status: number;
  body: { success: boolean; data?: Record<string, unknown>; error?: { code: string; message: string; details?: Record<string, unknown> } };
}

export async function callApi(base: string, method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...JSON_HEADERS, ...(token === undefined ? {} : bearer(token)) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as ApiAnswer["body"] };
}

/** Signs `claim` as attestor `key` would: a forger holding an attestor's key. */
export async function signAs(claim: TlsClaim, key: Hex): Promise<TlsProof> {
  const identifier = claimIdentifier(claim);
  const signed = { ...claim, identifier };
  return { claim: signed, signature: await privateKeyToAccount(key).signMessage({ message: claimSignText(signed, identifier) }) };
}


export type ProjectScript = "prove" | "consent" | "open";

/** `npm run <name>` as a user runs it: a fresh environment holding only PATH, HOME and `env`. */
export function runProjectScript(name: ProjectScript, args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...processArgs(`scripts/${name}.ts`), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...(name === "prove" ? proverModuleEnv() : {}), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** The private key `npm start` made for attestor `k` in the stack's data directory. */
export function attestorKeyIn(dataDir: string, k: number): Hex {
  return readFileSync(join(dataDir, attestorKeyName(k)), "utf8").trim() as Hex;
}

/** Every file under `dir`, at any depth. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
