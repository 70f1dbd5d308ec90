/**
 * A v2 validator (ROLLUPS=v2, DEVNODE_ROLE=validator, devnode/v2/validator.ts) beside a v2 claimer: a
 * second devnode and dapp on the claimer's chain that claim nothing and check every ClaimSubmitted of the
 * application's Authority against the outputs root their own dapp produced. Honest claims match; the
 * Authority's owner claiming an epoch with a root of its own making (one with inputs, one without) is
 * caught in the log, `GET /validator`, the metrics and `npm run validate`.
 */
import { spawn } from "node:child_process";
import { createWalletClient, http, keccak256, parseEventLogs, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import type { ValidatorStatus } from "../../devnode/validator.ts";
import { seriesValue } from "../support/prometheus.ts";
import { processArgs, PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";

let claimer: TestStack;
let validator: TestStack;

async function validatorStatus(): Promise<ValidatorStatus> {
  const response = await fetch(`${validator.urls.node}/validator`);
  expect(response.status).toBe(200);
  return (await response.json()) as ValidatorStatus;
}

function validateCommand(): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...processArgs("scripts/validate.ts"), "--node", validator.urls.node], { cwd: PROJECT_ROOT });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.on("close", (status) => resolve({ status, stdout }));
  });
}

/** Every claim the Authority took for the application, oldest first. */
async function claimsOnChain(): Promise<{ lastBlock: bigint; root: Hex }[]> {
  const logs = await claimer.client.publicClient.getLogs({ address: V2_DEFAULTS.authorityAddress, fromBlock: 0n, toBlock: "latest" });
  return parseEventLogs({ abi: v2Abi("Authority"), logs, eventName: "ClaimSubmitted" }).map((log) => {
    const args = log.args as unknown as { lastProcessedBlockNumber: bigint; outputsMerkleRoot: Hex };
    return { lastBlock: args.lastProcessedBlockNumber, root: args.outputsMerkleRoot };
  });
}

/** Claims the epoch ending at `lastBlock` with `root`, from the Authority owner's wallet (the claimer's). */
async function claimAsTheClaimer(lastBlock: bigint, root: Hex): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(hardhatPrivateKey(DEFAULTS.claimerAccountIndex)), chain: hardhat, transport: http(claimer.urls.rpc) });
  const hash = await wallet.writeContract({ address: V2_DEFAULTS.authorityAddress, abi: v2Abi("Authority"), functionName: "submitClaim", args: [V2_DEFAULTS.applicationAddress, lastBlock, root] });
  expect((await claimer.client.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
}

async function blockOf(txHash: Hex): Promise<bigint> {
  return (await claimer.client.publicClient.getTransactionReceipt({ hash: txHash })).blockNumber;
}

beforeAll(async () => {
  claimer = await startStack({ rollups: "v2", env: { EPOCH_INTERVAL_MS: "0" } });
  validator = await startStack({ rollups: "v2", externalRpcUrl: claimer.urls.rpc, env: { DEVNODE_ROLE: "validator", VALIDATOR_INTERVAL_MS: "200" } });
}, 180_000);

afterAll(async () => {
  await validator?.stop();
  await claimer?.stop();
});

describe("a v2 validator beside an honest claimer", () => {
  it("follows the claimer's chain, closes nothing and claims nothing", async () => {
    expect(validator.pieces).toEqual(["devnode", "dapp"]);
    const log = validator.logs("devnode");
    expect(log).toContain(`validator: checks every claim the Authority ${V2_DEFAULTS.authorityAddress} took for the application`);
    expect(log).toContain("(chain id 31337, external)");
    expect((await fetch(`${validator.urls.node}/epoch/close`, { method: "POST" })).status).toBe(404);
    expect(await validatorStatus()).toMatchObject({ role: "validator", rollups: "v2", checked: 0, mismatched: 0, lastError: null });
  });

  it("checks each claim once it has read the epoch's blocks and processed its inputs: they match", async () => {
    for (const input of [schemaInput("v2-a.example"), { type: "health_probe", params: {} }, schemaInput("v2-b.example")]) await claimer.send(input);
    const closed = await fetch(`${claimer.urls.node}/epoch/close`, { method: "POST" });
    expect(closed.status).toBe(200);
    const onChain = await claimsOnChain();
    expect(onChain.length).toBeGreaterThan(0);
    const status = await until(validatorStatus, (s) => s.checked === onChain.length, "every claim checked");
    expect(status).toMatchObject({ matched: onChain.length, mismatched: 0, waitingFor: null, lastError: null });
    expect(status.latest).toMatchObject({ lastBlock: Number(onChain[onChain.length - 1]?.lastBlock), claimedHash: onChain[onChain.length - 1]?.root, matches: true, problem: null });
    expect(validator.logs("devnode")).toMatch(/claim 0 \(blocks \d+\.\.\d+, inputs 0\.\.0\) matches: outputs root 0x[0-9a-f]{64}/);
    // Every claim came from the claimer: the validator's own attempts would have been refused, and there are none.
    expect(validator.logs("devnode")).not.toMatch(/claimed: outputs root|claiming epoch/);
    const check = await validateCommand();
    expect([check.status, check.stdout.trim()]).toEqual([0, `${onChain.length} claim(s) checked: ${onChain.length} match, 0 mismatch`]);
  });
});

describe("a v2 claimer that lies", () => {
  it("claims an epoch's inputs with another root: caught in the log, the status, the metrics and npm run validate", async () => {
    const before = (await validatorStatus()).checked;
    const sent = await claimer.send(schemaInput("v2-c.example"));
    const block = await blockOf(sent.txHash);
    const lie = keccak256(toHex("not the outputs root the dapp produced"));
    // Before the claimer's own devnode claims it: the Authority takes the first claim for an epoch only.
    await claimAsTheClaimer(block, lie);

    const status = await until(validatorStatus, (s) => s.checked === before + 1, "the lie checked");
    expect(status.mismatches).toEqual([
      expect.objectContaining({ claimIndex: before, lastBlock: Number(block), firstInput: sent.index, lastInput: sent.index, claimedHash: lie, matches: false, problem: "EPOCH_HASH_DIFFERS", computedHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }),
    ]);
    // What the validator computed is what the honest node holds for that input.
    const rpc = (await (await fetch(`${claimer.urls.node}/rpc`, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "cartesi_getInput", params: { application: "attestation", input_index: toHex(sent.index) } }),
    })).json()) as { result: { data: { outputs_hash: Hex } } };
    expect(status.mismatches[0]?.computedHash).toBe(rpc.result.data.outputs_hash);
    expect(validator.logs("devnode")).toContain(
      `VALIDATOR MISMATCH: claim ${before} (blocks ${block}..${block}, inputs ${sent.index}..${sent.index}) has outputs root ${lie} on chain; this node computes ${rpc.result.data.outputs_hash}`,
    );
    const metrics = await (await fetch(`${validator.urls.node}/metrics`)).text();
    expect(seriesValue(metrics, "devnode_validator_mismatch")).toBe(1);
    expect(seriesValue(metrics, 'devnode_validator_claims{verdict="mismatch"}')).toBe(1);
    const check = await validateCommand();
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(`MISMATCH claim ${before} (epoch ending at block ${block}, inputs ${sent.index}..${sent.index}): on chain ${lie}, computed ${rpc.result.data.outputs_hash}`);
  });

  it("claims an epoch without inputs with a root of its own: the right one is the root after the inputs before it", async () => {
    const before = await validatorStatus();
    const rootSoFar = before.latest?.computedHash;
    expect(rootSoFar).toMatch(/^0x[0-9a-f]{64}$/);
    // The newest block holds the last claim's transaction, no input; the claim below is mined after it.
    const empty = await claimer.client.publicClient.getBlockNumber();
    const lie = keccak256(toHex("an empty epoch with outputs"));
    await claimAsTheClaimer(empty, lie);
    const status = await until(validatorStatus, (s) => s.checked === before.checked + 1, "the empty epoch's claim checked");
    expect(status).toMatchObject({ mismatched: 2 });
    expect(status.latest).toMatchObject({ lastBlock: Number(empty), claimedHash: lie, computedHash: rootSoFar, matches: false, problem: "EPOCH_HASH_DIFFERS" });
    expect(status.latest?.lastInput).toBe((status.latest?.firstInput ?? 0) - 1);
    expect(validator.logs("devnode")).toContain(`(blocks ${empty}..${empty}, no inputs) has outputs root ${lie} on chain; this node computes ${rootSoFar}`);
  });
});
