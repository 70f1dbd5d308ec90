/**
 * `npm run validate`: asks a validator node (a devnode with DEVNODE_ROLE=validator) for its verdicts on
 * the claims on chain (v1 or v2) and prints one line per mismatch and a summary. Exits 0 when every
 * claim it checked matches its own epoch hash (v1) or outputs root (v2), 1 when any does not (a claimer
 * that lied, or a dapp that is not the one claimed), and 3 when it cannot tell (no node answers, the node
 * is not a validator, or the node cannot read the chain now). For cron jobs and alerting.
 */
import { loadEndpoints, parseArgs, runScript, UsageError } from "./lib/cli.ts";
import type { ValidatorStatus } from "../devnode/validator.ts";

const USAGE = "npm run validate [-- --node http://127.0.0.1:10001] [--json]    (default: the devnode at NODE_PORT / ROLLUP_URL)";

runScript(async () => {
  const { positional, options, flags } = parseArgs(process.argv.slice(2), ["--node"], ["--json"]);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional.join(" ")}`);
  const given = options.get("--node");
  if (given !== undefined && !/^https?:\/\/\S+$/.test(given)) throw new UsageError(`--node: expected an http(s) URL, not ${given}`);
  const nodeUrl = (given ?? loadEndpoints(process.env).nodeUrl).replace(/\/+$/, "");
  let response: Response;
  try {
    response = await fetch(`${nodeUrl}/validator`, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    console.error(`no devnode answers at ${nodeUrl}: ${error instanceof Error ? error.message : String(error)}`);
    return 3;
  }
  if (response.status === 404) {
    console.error(`the devnode at ${nodeUrl} is not a validator (start one with DEVNODE_ROLE=validator; docs/operations.md)`);
    return 3;
  }
  if (!response.ok) {
    console.error(`the devnode at ${nodeUrl} answered ${response.status}: ${await response.text()}`);
    return 3;
  }
  const status = (await response.json()) as ValidatorStatus;
  if (flags.has("--json")) console.log(JSON.stringify(status, null, 2));
  else {
    for (const m of status.mismatches) {
      const why = m.computedHash === null ? `over inputs not on chain (the InputBox holds ${m.inputsOnChain ?? "?"})` : `computed ${m.computedHash}`;
      // A v2 claim names its epoch by its last block; its inputs are the ones mined in the epoch's blocks.
      const inputs = m.lastInput < m.firstInput ? "no inputs" : `inputs ${m.firstInput}..${m.lastInput}`;
      const where = m.lastBlock === null ? inputs : `epoch ending at block ${m.lastBlock}, ${inputs}`;
      console.log(`MISMATCH claim ${m.claimIndex} (${where}): on chain ${m.claimedHash}, ${why}`);
    }
    const w = status.waitingFor;
    const waiting =
      w === null
        ? ""
        : w.lastBlock !== undefined && (w.readThroughBlock ?? -1) < w.lastBlock
          ? `; claim ${w.claimIndex} waits for this node to read block ${w.lastBlock} (read through ${w.readThroughBlock ?? "none"})`
          : `; claim ${w.claimIndex} waits for its inputs (${w.processedInputs} of ${w.lastInput + 1} processed)`;
    const error = status.lastError === null ? "" : `; reading the chain fails: ${status.lastError}`;
    console.log(`${status.checked} claim(s) checked: ${status.matched} match, ${status.mismatched} mismatch${waiting}${error}`);
  }
  if (status.mismatched > 0) return 1;
  // Claims it cannot read are claims it cannot check: no verdict is not a good one.
  return status.lastError === null ? 0 : 3;
}, USAGE);
