/**
 * The local stack's nullifier key (docs/nullifiers.md): with two attestors or more, `npm start` deals a key
 * 2 of n into DATA_DIR/nullifier-keys once, hands attestor k its share-k.json (NULLIFIER_SHARE_FILE), and
 * registers commitments.json in the rollup through the api, so a schema unique per account works out of
 * the box. The stack is its own dealer: one machine holds every share, which is what a local stack is.
 * A deployment deals with `npm run nullifier-keys` and hands each share to its attestor alone.
 */
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Address } from "viem";
import { keySetSchema, type NullifierKeySetJson } from "../../common/nullifier.ts";
import { localAdminToken, localAttestorAddress } from "./attestor-registration.ts";
import { runNullifierKeys } from "./nullifier-keys.ts";

/** t for the local stack: the smallest a key set may have, so any two of its attestors make a nullifier. */
export const LOCAL_NULLIFIER_THRESHOLD = 2;

export function localNullifierKeysDir(dataDir: string): string {
  return join(dataDir, "nullifier-keys");
}

/** Attestor k's share file, when the stack deals one (two attestors or more). */
export function localShareFile(dataDir: string, k: number): string {
  return join(localNullifierKeysDir(dataDir), `share-${k}.json`);
}

/**
 * The dealt key set, or undefined before the first deal. A file that is there but not a key set stops the
 * start with its name: dealing anew would erase the shares and change every nullifier already bound.
 */
function readKeySet(dir: string): NullifierKeySetJson | undefined {
  const path = join(dir, "commitments.json");
  if (!existsSync(path)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    value = undefined; // not JSON: refused below like any other shape
  }
  const parsed = keySetSchema.safeParse(value);
  if (!parsed.success) throw new Error(`${path} is not a nullifier key set (npm run nullifier-keys writes one); remove ${dir} to deal a new key, which changes every nullifier`);
  return parsed.data as NullifierKeySetJson;
}

/**
 * Deals the key for `attestors` attestors once; when their number changed since, re-shares it (the same
 * key, so every nullifier already bound keeps matching) and erases the old shares. Fewer than two
 * attestors: nothing (a threshold of one would let one attestor compute every nullifier).
 */
export function ensureLocalNullifierKeys(dataDir: string, attestors: number): "dealt" | "re-shared" | "kept" | "none" {
  if (attestors < LOCAL_NULLIFIER_THRESHOLD) return "none";
  const dir = localNullifierKeysDir(dataDir);
  const indices = Array.from({ length: attestors }, (_, i) => i + 1);
  const current = readKeySet(dir);
  if (current !== undefined && current.commitments.map((c) => c.index).join(",") === indices.join(",")) return "kept";
  if (current === undefined) {
    rmSync(dir, { recursive: true, force: true });
    runNullifierKeys({ command: "deal", threshold: LOCAL_NULLIFIER_THRESHOLD, indices, out: dir });
    return "dealt";
  }
  const next = `${dir}.next`;
  rmSync(next, { recursive: true, force: true });
  runNullifierKeys({ command: "reshare", from: dir, threshold: LOCAL_NULLIFIER_THRESHOLD, indices, out: next });
  rmSync(dir, { recursive: true, force: true });
  renameSync(next, dir);
  return "re-shared";
}

/**
 * Registers the local key set through the api (`POST /api/core/nullifier-keys`), attestor k holding share
 * k, unless the rollup already holds these very commitments. Call it once every attestor is registered.
 */
export async function registerLocalNullifierKeys(apiUrl: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const keySet = readKeySet(localNullifierKeysDir(dataDir));
  if (keySet === undefined) return "none dealt";
  const registered = (await (await fetch(`${apiUrl}/api/core/nullifier-keys`)).json()) as { data?: { commitments: { index: number; commitment: string }[] } };
  const same = (a: { index: number; commitment: string }[]): string => a.map((c) => `${c.index}:${c.commitment.toLowerCase()}`).join(",");
  if (registered.data !== undefined && same(registered.data.commitments) === same(keySet.commitments)) return `${keySet.threshold} of ${keySet.commitments.length}, already registered`;
  const attestors = keySet.commitments.map(({ index }) => ({ index, address: localAttestorAddress(dataDir, index).toLowerCase() as Address }));
  const token = await localAdminToken(dataDir, env);
  const response = await fetch(`${apiUrl}/api/core/nullifier-keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ keySet, attestors }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${await response.text()}`);
  return `${keySet.threshold} of ${keySet.commitments.length}, registered`;
}
