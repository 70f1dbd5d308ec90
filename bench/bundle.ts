/**
 * The dapp the bench measures is the bundle the Cartesi machine runs (`npm run build`), not the tsx
 * sources: memory in particular depends on it. The bench builds its own copy with scripts/build.ts, under
 * the project (so `better-sqlite3` resolves from node_modules), and never touches dist/, which other tools
 * may be using.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildDapp } from "../scripts/build.ts";

export interface DappBundle {
  main: string;
  /** The node flags the image runs the dapp with (Dockerfile.cartesi's NODE_OPTIONS). */
  nodeFlags: string[];
  /** `[node, ...nodeFlags, main]`: the dapp as the machine starts it. */
  command: string[];
  dir: string;
  remove(): void;
}

/**
 * The NODE_OPTIONS the image sets for the dapp (the last `ENV NODE_OPTIONS=` of Dockerfile.cartesi, the
 * runtime stage's), as separate flags. Read from the Dockerfile so the bench measures the dapp exactly
 * as the machine runs it, memory included, with one place to change.
 */
export function imageNodeFlags(root: string): string[] {
  const text = readFileSync(join(root, "Dockerfile.cartesi"), "utf8");
  const matches = [...text.matchAll(/^ENV\s+NODE_OPTIONS=(?:"([^"]*)"|(\S+))\s*$/gm)];
  const last = matches[matches.length - 1];
  const value = last?.[1] ?? last?.[2] ?? "";
  return value.split(/\s+/).filter((flag) => flag.length > 0);
}

/** The node major the image runs (Dockerfile.cartesi's `ARG NODE_VERSION`): the riscv64 recipe must match it. */
export function imageNodeMajor(root: string): number {
  const text = readFileSync(join(root, "Dockerfile.cartesi"), "utf8");
  const version = /^ARG\s+NODE_VERSION=(\d+)\./m.exec(text)?.[1];
  if (version === undefined) throw new Error("Dockerfile.cartesi has no ARG NODE_VERSION=<major>.<minor>.<patch>");
  return Number(version);
}

export async function buildDappBundle(root: string, dir: string): Promise<DappBundle> {
  await buildDapp(dir);
  const main = join(dir, "dapp", "main.js");
  const nodeFlags = imageNodeFlags(root);
  return { main, nodeFlags, command: [process.execPath, ...nodeFlags, main], dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
