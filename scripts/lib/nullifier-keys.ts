/**
 * `npm run nullifier-keys` (docs/nullifiers.md, "The dealer"): its arguments, and the files it reads and
 * writes. A directory of keys holds `commitments.json` (public: the key set to register) and one
 * `share-<index>.json` per attestor (secret: mode 0600, to hand to that attestor alone). Kept apart from
 * the script so a test runs it without a process exit.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkKeySet, type NullifierKeys } from "../../common/nullifier.ts";
import { dealKey, reshare, shareFileOf, shareFromFile, type DealtKey } from "../../common/nullifier-dealer.ts";
import { parseArgs, UsageError } from "./cli.ts";

export const NULLIFIER_KEYS_USAGE = [
  "npm run nullifier-keys -- deal --threshold T (--attestors N | --indices 1,2,3) --out DIR",
  "npm run nullifier-keys -- reshare --from DIR --threshold T --indices 1,2,3,4 --out DIR",
  "  deal: a fresh key in shares, any T of the attestors recombine it (2 <= T <= attestors <= 255)",
  "  reshare: the same key for a new set of attestors (one added or removed), from T of the old shares in --from;",
  "           the nullifiers stay the same. --out must be a new or empty directory.",
].join("\n");

export type NullifierKeysRequest =
  | { command: "deal"; threshold: number; indices: number[]; out: string }
  | { command: "reshare"; from: string; threshold: number; indices: number[]; out: string };

const MAX_ATTESTORS = 255;

function integerOption(value: string | undefined, name: string): number {
  if (value === undefined) throw new UsageError(`${name} is required`);
  if (!/^[0-9]+$/.test(value)) throw new UsageError(`${name}: expected a positive integer, not ${value}`);
  return Number(value);
}

function indicesOption(value: string, name: string): number[] {
  const parts = value.split(",");
  if (parts.some((p) => !/^[0-9]+$/.test(p))) throw new UsageError(`${name}: expected comma-separated attestor indices (1, 2, ...), not ${value}`);
  const indices = parts.map(Number);
  if (indices.some((i) => i < 1 || i > 65535)) throw new UsageError(`${name}: an attestor index is from 1 to 65535`);
  if (new Set(indices).size !== indices.length) throw new UsageError(`${name}: an index is named twice`);
  return indices;
}

/** The threshold against the attestors: one attestor alone must never compute a nullifier (issue 52). */
function checkThreshold(threshold: number, attestors: number): void {
  if (threshold < 2) throw new UsageError(`--threshold: at least 2 (with ${threshold} one attestor alone computes every nullifier)`);
  if (attestors > MAX_ATTESTORS) throw new UsageError(`at most ${MAX_ATTESTORS} attestors, not ${attestors}`);
  if (threshold > attestors) throw new UsageError(`--threshold ${threshold} is more than the ${attestors} attestors`);
}

/** An output directory must be new or empty: a share is never overwritten, nor mixed with another dealing's. */
function checkOut(out: string | undefined): string {
  if (out === undefined) throw new UsageError("--out DIR is required");
  if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${out} is not empty: shares are never overwritten`);
  return out;
}

export function parseNullifierKeysArgs(argv: readonly string[]): NullifierKeysRequest {
  const { positional, options } = parseArgs(argv, ["--threshold", "--attestors", "--indices", "--out", "--from"]);
  const [command, extra] = positional;
  if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`);
  if (command !== "deal" && command !== "reshare") {
    throw new UsageError(command === undefined ? "expected a command: deal or reshare" : `unknown command ${command}: deal or reshare`);
  }
  const threshold = integerOption(options.get("--threshold"), "--threshold");
  const attestors = options.get("--attestors");
  const indicesText = options.get("--indices");
  if (command === "deal") {
    if ((attestors === undefined) === (indicesText === undefined)) throw new UsageError("deal takes one of --attestors N or --indices LIST");
    const indices = indicesText !== undefined ? indicesOption(indicesText, "--indices") : range(integerOption(attestors, "--attestors"));
    checkThreshold(threshold, indices.length);
    return { command, threshold, indices, out: checkOut(options.get("--out")) };
  }
  if (attestors !== undefined) throw new UsageError("reshare names the new attestors with --indices, not --attestors");
  if (indicesText === undefined) throw new UsageError("reshare needs --indices: the new set of attestors");
  const from = options.get("--from");
  if (from === undefined) throw new UsageError("reshare needs --from DIR: the old commitments.json and at least T old shares");
  const indices = indicesOption(indicesText, "--indices");
  checkThreshold(threshold, indices.length);
  return { command, from, threshold, indices, out: checkOut(options.get("--out")) };
}

function range(n: number): number[] {
  if (n < 1 || n > MAX_ATTESTORS) throw new UsageError(`--attestors: from 1 to ${MAX_ATTESTORS}, not ${n}`);
  return Array.from({ length: n }, (_, i) => i + 1);
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new UsageError(`cannot read ${path}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`${path} is not JSON`);
  }
}

/** The old key set and every share file beside it, each checked against it. */
function readOldKeys(dir: string): { keys: NullifierKeys; shares: ReturnType<typeof shareFromFile>[] } {
  const verdict = checkKeySet(readJson(join(dir, "commitments.json")));
  if (!verdict.ok) throw new UsageError(`${join(dir, "commitments.json")}: ${verdict.message}`);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /^share-[0-9]+\.json$/.test(f)) : [];
  const shares = files.map((f) => {
    try {
      return shareFromFile(readJson(join(dir, f)));
    } catch (error) {
      throw new UsageError(`${join(dir, f)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  if (shares.length < verdict.keys.threshold) {
    throw new UsageError(`--from ${dir} holds ${shares.length} shares; re-sharing needs ${verdict.keys.threshold} of them`);
  }
  return { keys: verdict.keys, shares };
}

/** Writes the shares (0600, never over an existing file) and the public key set; answers the paths written. */
function writeKeys(out: string, dealt: DealtKey): string[] {
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const written = dealt.shares.map((share) => {
    const path = join(out, `share-${share.index}.json`);
    writeFileSync(path, `${JSON.stringify(shareFileOf(share, dealt.keys), null, 2)}\n`, { flag: "wx", mode: 0o600 });
    // The mode given to open() is masked by the umask: set it outright, so it is 0600 whatever the umask.
    chmodSync(path, 0o600);
    return path;
  });
  const commitments = join(out, "commitments.json");
  writeFileSync(commitments, `${JSON.stringify(dealt.keySet, null, 2)}\n`, { flag: "wx", mode: 0o644 });
  return [...written, commitments];
}

/** Runs a parsed request: deals or re-shares, writes the files, answers what to tell the operator. */
export function runNullifierKeys(request: NullifierKeysRequest): { written: string[]; groupKey: string; summary: string } {
  let dealt: DealtKey;
  if (request.command === "deal") {
    dealt = dealKey({ threshold: request.threshold, indices: request.indices });
  } else {
    const old = readOldKeys(request.from);
    try {
      dealt = reshare({ shares: old.shares, oldKeys: old.keys, newIndices: request.indices, newThreshold: request.threshold });
    } catch (error) {
      throw new UsageError(`cannot re-share: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const written = writeKeys(request.out, dealt);
  const summary = [
    `${request.command === "deal" ? "dealt" : "re-shared"} a nullifier key: any ${request.threshold} of attestors ${request.indices.join(", ")}; group key ${dealt.keySet.groupKey}`,
    ...written.map((path) => `  wrote ${path}`),
    "Hand each share-<index>.json to that attestor alone and erase it here; register commitments.json in the rollup.",
    ...(request.command === "reshare" ? ["Every old share must be erased by its holder once the new key set is registered."] : []),
  ].join("\n");
  return { written, groupKey: dealt.keySet.groupKey, summary };
}
