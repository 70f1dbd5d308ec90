/**
 * `npm run snapshot [-- --node URL] [--path DIR]`: asks a reader (a validator devnode, docs/operations.md
 * Readers) for a snapshot of its state between two inputs, and prints where it is and how to start a new
 * reader from it. Exit 0 with a snapshot, 1 when the reader refused (its reason printed), 3 when no reader
 * answers at the URL.
 */
import { resolve } from "node:path";
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";
import { messageOf } from "../common/errors.ts";

const USAGE = "npm run snapshot [-- --node http://127.0.0.1:10101] [--path DIR]    (default: the devnode at NODE_PORT / ROLLUP_URL; DIR new or empty)";

interface SnapshotAnswer {
  folder?: string;
  inputCount?: number;
  error?: { code: string; message: string };
}

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--node", "--path"]);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const given = options.get("--node");
  if (given !== undefined && !/^https?:\/\/\S+$/.test(given)) throw new UsageError(`--node: expected an http(s) URL, not ${given}`);
  const nodeUrl = (given ?? loadEndpoints(process.env).nodeUrl).replace(/\/+$/, "");
  const path = options.get("--path");
  let response: Response;
  try {
    response = await fetch(`${nodeUrl}/snapshot`, {
      method: "POST",
      ...(path === undefined ? {} : { body: JSON.stringify({ path: resolve(path) }), headers: { "content-type": "application/json" } }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    console.error(`no devnode answers at ${nodeUrl}: ${messageOf(error)}`);
    return 3;
  }
  if (response.status === 404) {
    console.error(`the devnode at ${nodeUrl} is not a reader (a validator: npm start -- --readers N, or --validator)`);
    return 3;
  }
  const answer = (await response.json()) as SnapshotAnswer;
  if (!response.ok || answer.folder === undefined) {
    console.error(`${nodeUrl} took no snapshot: ${answer.error?.code ?? `HTTP ${response.status}`}${answer.error === undefined ? "" : `: ${answer.error.message}`}`);
    return 1;
  }
  console.log(`snapshot of ${nodeUrl} at input ${answer.inputCount ?? "?"}: ${answer.folder}`);
  console.log(`a new reader from it: DEVNODE_SNAPSHOT=${answer.folder} DATA_DIR=<an empty folder> npm start -- --validator`);
  return 0;
}, USAGE);
