/**
 * A validator node (DEVNODE_ROLE=validator, devnode/validator.ts) beside a claimer: a second devnode and
 * dapp following the claimer's chain, which claims nothing and checks every claim in the History against
 * its own epochs. An honest claim matches; a claim made by a claimer that lies (the Authority's owner
 * submitting another epoch hash) is reported in the log, in `GET /validator`, in the metrics and by
 * `npm run validate` (exit 1), and the verdicts outlive a restart. A claim over inputs nobody sent is
 * refused as soon as it appears, not waited on. A validator that cannot read the chain says so, and its
 * check exits 3 rather than passing.
 */
import { spawn } from "node:child_process";
import { createWalletClient, http, keccak256, toHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS } from "../../devnode/config.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import type { ValidatorStatus } from "../../devnode/validator.ts";
import { AUTHORITY_ABI } from "../../devnode/v1/contracts.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { encodeClaim } from "../../devnode/v1/proofs.ts";
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

function validateCommand(): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...processArgs("scripts/validate.ts"), "--node", validator.urls.node], { cwd: PROJECT_ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Claims inputs first..last with `epochHash` as the Authority's owner (the claimer's wallet) would. */
async function claimAsTheClaimer(first: number, last: number, epochHash: Hex): Promise<void> {
  const epochs = (await (await fetch(`${claimer.urls.node}/epochs`)).json()) as { dapp: Address; authority: Address };
  const wallet = createWalletClient({ account: privateKeyToAccount(hardhatPrivateKey(DEFAULTS.claimerAccountIndex)), chain: hardhat, transport: http(claimer.urls.rpc) });
  const hash = await wallet.writeContract({ address: epochs.authority, abi: AUTHORITY_ABI(), functionName: "submitClaim", args: [encodeClaim(epochs.dapp, epochHash, first, last)] });
  expect((await claimer.client.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
}

async function mismatchGauge(): Promise<number> {
  return seriesValue(await (await fetch(`${validator.urls.node}/metrics`)).text(), "devnode_validator_mismatch");
}

beforeAll(async () => {
  claimer = await startStack({ env: { EPOCH_INTERVAL_MS: "0" } });
  validator = await startStack({ externalRpcUrl: claimer.urls.rpc, env: { DEVNODE_ROLE: "validator", VALIDATOR_INTERVAL_MS: "200" } });
}, 180_000);

afterAll(async () => {
  await validator?.stop();
  await claimer?.stop();
});

describe("a validator beside an honest claimer", () => {
  it("follows the claimer's chain without a chain, an api or epochs of its own", async () => {
    expect(validator.pieces).toEqual(["devnode", "dapp"]);
    const log = validator.logs("devnode");
    expect(log).toContain("validator: checks every claim in History");
    // Someone else's chain: nothing placed on it, nothing re-submitted.
    expect(log).toContain("(chain id 31337, external)");
    expect(log).not.toMatch(/placed|re-submitting/);
    // It closes nothing: the claimer's epoch endpoints are not there.
    expect((await fetch(`${validator.urls.node}/epoch/close`, { method: "POST" })).status).toBe(404);
    expect(await validatorStatus()).toMatchObject({ role: "validator", checked: 0, mismatched: 0, lastError: null });
  });

  it("checks each claim once its own dapp has processed the claim's inputs: they match", async () => {
    for (const input of [schemaInput("a.example"), { type: "health_probe", params: {} }, schemaInput("b.example")]) await claimer.send(input);
    const closed = (await (await fetch(`${claimer.urls.node}/epoch/close`, { method: "POST" })).json()) as { closed: { epochHash: Hex; lastInput: number } };
    const status = await until(validatorStatus, (s) => s.checked === 1, "claim 0 checked");
    expect(status).toMatchObject({ matched: 1, mismatched: 0, mismatches: [], waitingFor: null, latest: { problem: null } });
    expect(status.latest).toMatchObject({ claimIndex: 0, firstInput: 0, lastInput: closed.closed.lastInput, matches: true, claimedHash: closed.closed.epochHash, computedHash: closed.closed.epochHash });
    expect(await mismatchGauge()).toBe(0);
    expect(validator.logs("devnode")).toContain(`claim 0 (inputs 0..${closed.closed.lastInput}) matches`);
    const check = await validateCommand();
    expect([check.status, check.stdout.trim()]).toEqual([0, "1 claim(s) checked: 1 match, 0 mismatch"]);
  });
});

describe("a validator that cannot read the chain", () => {
  it("says so in its status and metrics, npm run validate exits 3 (no verdict is not a good one), and it recovers", async () => {
    const gauge = async (): Promise<number> => seriesValue(await (await fetch(`${validator.urls.node}/metrics`)).text(), "devnode_validator_chain_unreadable");
    expect(await gauge()).toBe(0);
    // A hung chain (not a dead one: a restarted hardhat chain would be another chain to this validator).
    await claimer.kill("chain", "SIGSTOP");
    try {
      const status = await until(validatorStatus, (s) => s.lastError !== null, "a failed read of the claims");
      expect(status).toMatchObject({ checked: 1, mismatched: 0 });
      expect(await gauge()).toBe(1);
      const check = await validateCommand();
      expect(check.status).toBe(3);
      expect(check.stdout).toContain("1 claim(s) checked: 1 match, 0 mismatch; reading the chain fails: ");
    } finally {
      await claimer.kill("chain", "SIGCONT");
    }
    await until(validatorStatus, (s) => s.lastError === null, "reads of the claims working again");
    expect(await gauge()).toBe(0);
    expect((await validateCommand()).status).toBe(0);
    expect(validator.logs("devnode")).toMatch(/reading claims failed: [^\n]+ \(retrying\)[\s\S]*reading claims works again/);
  });
});

describe("a claimer that lies", () => {
  it("is caught: a log line, the status, the metric, and npm run validate exits 1; a restart keeps the verdict", async () => {
    const first = (await validatorStatus()).latest?.lastInput ?? -1;
    const sent = [await claimer.send(schemaInput("c.example")), await claimer.send({ type: "health_probe", params: {} })];
    const last = sent[sent.length - 1]?.index ?? 0;
    // The Authority's owner (the claimer's wallet) claims the next inputs with an epoch hash of its own making.
    const lie = keccak256(toHex("not what the dapp computed"));
    await claimAsTheClaimer(first + 1, last, lie);

    const status = await until(validatorStatus, (s) => s.checked === 2, "claim 1 checked");
    expect(status).toMatchObject({ matched: 1, mismatched: 1 });
    expect(status.mismatches).toEqual([
      expect.objectContaining({ claimIndex: 1, firstInput: first + 1, lastInput: last, claimedHash: lie, matches: false, problem: "EPOCH_HASH_DIFFERS", computedHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }),
    ]);
    expect(status.mismatches[0]?.computedHash).not.toBe(lie);
    expect(validator.logs("devnode")).toMatch(new RegExp(`VALIDATOR MISMATCH: claim 1 \\(inputs ${first + 1}\\.\\.${last}\\) has epoch hash ${lie} on chain; this node computes 0x[0-9a-f]{64}`));
    expect(await mismatchGauge()).toBe(1);
    const metrics = await (await fetch(`${validator.urls.node}/metrics`)).text();
    expect(seriesValue(metrics, 'devnode_validator_claims{verdict="mismatch"}')).toBe(1);
    expect(seriesValue(metrics, 'devnode_validator_claims{verdict="match"}')).toBe(1);

    const check = await validateCommand();
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(`MISMATCH claim 1 (inputs ${first + 1}..${last}): on chain ${lie}, computed 0x`);
    expect(check.stdout).toContain("2 claim(s) checked: 1 match, 1 mismatch");

    // The verdicts are in the validator's record: a restart neither forgets nor checks again.
    await validator.restart("devnode");
    expect(await validatorStatus()).toMatchObject({ checked: 2, matched: 1, mismatched: 1 });
    expect(await mismatchGauge()).toBe(1);
  });

  it("claims inputs the InputBox does not hold: refused at once instead of waited on", async () => {
    const before = await validatorStatus();
    const first = (before.latest?.lastInput ?? -1) + 1;
    const onChain = Number(await claimer.client.publicClient.readContract({ address: claimer.addresses.inputBox, abi: inputBoxAbi, functionName: "getNumberOfInputs", args: [claimer.addresses.dapp] }));
    expect(onChain).toBe(first);
    // Nothing sent: inputs first..first+9 do not exist, yet the History takes the claim.
    const lie = keccak256(toHex("inputs nobody sent"));
    await claimAsTheClaimer(first, first + 9, lie);

    const status = await until(validatorStatus, (s) => s.checked === 3, "claim 2 checked");
    expect(status).toMatchObject({ matched: 1, mismatched: 2, waitingFor: null });
    expect(status.latest).toEqual(
      expect.objectContaining({ claimIndex: 2, firstInput: first, lastInput: first + 9, claimedHash: lie, computedHash: null, inputsOnChain: onChain, matches: false, problem: "INPUTS_NOT_ON_CHAIN" }),
    );
    expect(validator.logs("devnode")).toContain(
      `VALIDATOR MISMATCH: claim 2 (inputs ${first}..${first + 9}) has epoch hash ${lie} on chain over inputs the InputBox does not hold (it holds ${onChain} for the dapp)`,
    );
    const metrics = await (await fetch(`${validator.urls.node}/metrics`)).text();
    expect(seriesValue(metrics, 'devnode_validator_claims{verdict="mismatch"}')).toBe(2);
    expect(seriesValue(metrics, "devnode_validator_mismatch")).toBe(1);
    const check = await validateCommand();
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(`MISMATCH claim 2 (inputs ${first}..${first + 9}): on chain ${lie}, over inputs not on chain (the InputBox holds ${onChain})`);
    expect(check.stdout).toContain("3 claim(s) checked: 1 match, 2 mismatch");
  });
});

describe("the devnode's JSON log (LOG_FORMAT=json)", () => {
  it("writes pino lines: its start, and a validator's mismatch at level error", async () => {
    const json = await startStack({ externalRpcUrl: claimer.urls.rpc, env: { DEVNODE_ROLE: "validator", VALIDATOR_INTERVAL_MS: "200", LOG_FORMAT: "json" } });
    try {
      const lines = () =>
        json
          .logs("devnode")
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as { level: number; service: string; msg: string; time: string });
      const mismatch = await until(async () => lines().find((l) => l.msg.startsWith("VALIDATOR MISMATCH")), (l) => l !== undefined, "the mismatch line");
      expect(mismatch).toMatchObject({ level: 50, service: "devnode", msg: expect.stringContaining("claim 1 (inputs") });
      expect(lines()).toContainEqual(expect.objectContaining({ level: 30, service: "devnode", msg: "ready", time: expect.any(String) }));
      // Every line the devnode wrote is JSON.
      expect(json.logs("devnode").split("\n").filter((line) => line.trim() !== "" && !line.startsWith("{"))).toEqual([]);
    } finally {
      await json.stop();
    }
  });
});
