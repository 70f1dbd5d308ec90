/**
 * `npm run nullifier-keys -- deal ...` or `-- reshare ...`: the dealer of the nullifiers' key
 * (docs/nullifiers.md, "The dealer"). Writes one share file per attestor (mode 0600) and the public key set
 * (commitments.json) into a new directory; the work is in scripts/lib/nullifier-keys.ts.
 */
import { runScript } from "./lib/cli.ts";
import { NULLIFIER_KEYS_USAGE, parseNullifierKeysArgs, runNullifierKeys } from "./lib/nullifier-keys.ts";

runScript(async () => {
  const { summary } = runNullifierKeys(parseNullifierKeysArgs(process.argv.slice(2)));
  console.log(summary);
  return 0;
}, NULLIFIER_KEYS_USAGE);
