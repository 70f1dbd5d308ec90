/**
 * The dapp the bench measures is the bundle the Cartesi machine runs (`npm run build`), not the tsx
 * sources: memory in particular depends on it. The bench builds its own copy with toolkit/dapp-build.ts
 * (the build `npm run build` and the image use), under the project (so `better-sqlite3` resolves from
 * node_modules), and never touches dist/, which other tools may be using.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildDapp, imageNodeFlags } from "../toolkit/dapp-build.ts";

export interface DappBundle {
  main: string;
  /** The node flags the image runs the dapp with (Dockerfile.cartesi's NODE_OPTIONS). */
  nodeFlags: string[];
  /** `[node, ...nodeFlags, main]`: the dapp as the machine starts it. */
  command: string[];
  dir: string;
  remove(): void;
}

export async function buildDappBundle(root: string, dir: string): Promise<DappBundle> {
  await buildDapp(dir);
  const main = join(dir, "dapp", "main.js");
  const nodeFlags = imageNodeFlags(root);
  return { main, nodeFlags, command: [process.execPath, ...nodeFlags, main], dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
