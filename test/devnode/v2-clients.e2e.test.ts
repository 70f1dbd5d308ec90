/**
 * The v2 node read by both generations of Cartesi's clients on the real stack (hardhat, devnode, dapp):
 * the pinned ones (@cartesi/rpc 2.0.0-alpha.20, @cartesi/viem 2.0.0-alpha.29, for the 2.2.0 contracts)
 * and the newest on npm (@cartesi/rpc 2.0.0-alpha.25, @cartesi/viem 2.0.0-alpha.31, installed as
 * `-next`). Each decodes the application, epochs and inputs and finds its own fields in them; the
 * discovery document lists exactly the methods served; the node's inspect route refuses every method
 * but POST; and the newest @cartesi/viem's addInput, which goes to the v3 InputBox a devnode cannot
 * have, fails with the reason instead of succeeding with no input.
 */
import { createClient as createRpcClient } from "@cartesi/rpc";
import { createClient as createNextRpcClient } from "@cartesi/rpc-next";
import { createCartesiPublicClient, getInputsAdded, walletActionsL1 } from "@cartesi/viem";
import { inputBoxAddress as pinnedInputBoxAddress } from "@cartesi/viem/abi";
import { createCartesiPublicClient as createNextCartesiPublicClient, walletActionsL1 as nextWalletActionsL1 } from "@cartesi/viem-next";
import { inputBoxAddress as nextInputBoxAddress } from "@cartesi/viem-next/abi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createTestClient, createWalletClient, http, numberToHex, stringToHex, zeroAddress, zeroHash, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import { SERVED_METHODS } from "../../devnode/v2/rpc.ts";
import { V3_INPUT_BOX_ADDRESS } from "../../devnode/v2/v3-inputbox.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";

const APP = V2_DEFAULTS.applicationAddress;
const account = privateKeyToAccount(DEFAULTS.privateKey);
const ZERO_QUANTITY = "0x0";

/**
 * The newest node's dispatch table (cartesi/rollups-node internal/jsonrpc/jsonrpc.go): the methods a
 * devnode must serve, no more, no less.
 */
const NODE_METHODS = [
  "rpc.discover",
  "cartesi_listApplications",
  "cartesi_getApplication",
  "cartesi_listEpochs",
  "cartesi_getEpoch",
  "cartesi_getEpochByVirtualIndex",
  "cartesi_getLastAcceptedEpochIndex",
  "cartesi_listInputs",
  "cartesi_getInput",
  "cartesi_getProcessedInputCount",
  "cartesi_getExecutedOutputCount",
  "cartesi_getPendingExecutableOutputCount",
  "cartesi_listOutputs",
  "cartesi_getOutput",
  "cartesi_listReports",
  "cartesi_getReport",
  "cartesi_listWithdrawals",
  "cartesi_getWithdrawal",
  "cartesi_listTournaments",
  "cartesi_getTournament",
  "cartesi_listCommitments",
  "cartesi_getCommitment",
  "cartesi_listMatches",
  "cartesi_getMatch",
  "cartesi_listMatchAdvances",
  "cartesi_getMatchAdvance",
  "cartesi_getNodeInfo",
  "cartesi_getChainId",
  "cartesi_getNodeVersion",
];

interface Discovered {
  methods: { name: string }[];
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

describe("the v2 node read by both client generations", () => {
  let stack: TestStack;
  let rpcUrl: string;
  const l1 = () => createPublicClient({ chain: hardhat, transport: http(stack.urls.rpc) });
  const wallet = () => createWalletClient({ account, chain: hardhat, transport: http(stack.urls.rpc) });
  const chainTest = () => createTestClient({ mode: "hardhat", chain: hardhat, transport: http(stack.urls.rpc) });
  const pinned = () => createCartesiPublicClient({ transport: http(rpcUrl) });
  const next = () => createNextCartesiPublicClient({ transport: http(rpcUrl) });
  const pinnedRpc = () => createRpcClient({ uri: rpcUrl });
  const nextRpc = () => createNextRpcClient({ uri: rpcUrl });
  const call = async (method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number; message: string } }> =>
    (await (await fetch(rpcUrl, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }) })).json()) as never;

  /** Both inputs are sent before one block is mined, so the second InputAdded log is not the block's first. */
  const sent: { hash: Hex; index: bigint; logIndex: number; blockNumber: bigint }[] = [];

  beforeAll(async () => {
    stack = await startStack({ rollups: "v2", env: { EPOCH_INTERVAL_MS: "0" } });
    rpcUrl = `${stack.urls.node}/rpc`;
    const inputs = wallet().extend(walletActionsL1());
    await chainTest().setAutomine(false);
    let hashes: Hex[];
    try {
      hashes = [
        await inputs.addInput({ account, chain: hardhat, application: APP, payload: stringToHex(JSON.stringify(schemaInput("clients-one.example"))) }),
        await inputs.addInput({ account, chain: hardhat, application: APP, payload: stringToHex(JSON.stringify(schemaInput("clients-two.example"))) }),
      ];
      await chainTest().mine({ blocks: 1 });
    } finally {
      await chainTest().setAutomine(true);
    }
    for (const hash of hashes) {
      const receipt = await l1().waitForTransactionReceipt({ hash });
      const [added] = getInputsAdded(receipt);
      const log = receipt.logs.find((l) => l.address.toLowerCase() === V2_DEFAULTS.inputBoxAddress.toLowerCase());
      if (added === undefined || log === undefined) throw new Error(`no InputAdded in ${hash}`);
      sent.push({ hash, index: added.index, logIndex: log.logIndex, blockNumber: receipt.blockNumber });
    }
    const last = sent[sent.length - 1];
    await pinned().waitForInput({ application: APP, inputIndex: last?.index ?? 0n, pollingInterval: 50, retryCount: 600 });
    await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("sends the pinned client's inputs to the 2.2.0 InputBox, and the newest client's to the v3 one", () => {
    expect(pinnedInputBoxAddress).toBe(V2_DEFAULTS.inputBoxAddress);
    expect(nextInputBoxAddress).toBe(V3_INPUT_BOX_ADDRESS);
    // The two inputs share a block, the second log after the first.
    expect(sent.map((s) => s.logIndex)).toEqual([0, 1]);
    expect(sent[0]?.blockNumber).toBe(sent[1]?.blockNumber);
  });

  it("describes the application to both generations, each finding its own fields", async () => {
    const old = await pinned().getApplication({ application: "attestation" });
    expect(old).toMatchObject({ applicationAddress: APP, consensusAddress: V2_DEFAULTS.authorityAddress, inputBoxAddress: V2_DEFAULTS.inputBoxAddress, state: "ENABLED", consensusType: "AUTHORITY" });
    expect(old.dataAvailability).toEqual({ type: "InputBox", inputBoxAddress: V2_DEFAULTS.inputBoxAddress });
    const app = await next().getApplication({ application: "attestation" });
    expect(app).toMatchObject({
      applicationAddress: APP,
      consensusAddress: V2_DEFAULTS.authorityAddress,
      inputBoxAddress: V2_DEFAULTS.inputBoxAddress,
      enabled: true,
      status: "OK",
      claimStagingPeriod: 0n,
      withdrawalConfig: { guardian: zeroAddress, log2LeavesPerAccount: 0n, log2MaxNumOfAccounts: 0n, accountsDriveStartIndex: 0n, withdrawalOutputBuilder: zeroAddress },
      forecloseBlock: 0n,
      forecloseTransaction: zeroHash,
      accountsDriveProvedBlock: 0n,
      accountsDriveProvedTransaction: zeroHash,
      accountsDriveMerkleRoot: zeroHash,
      lastAccountsDriveProvedCheckBlock: 0n,
      lastWithdrawalCheckBlock: 0n,
      processedInputs: old.processedInputs,
    });
    // Every block the devnode has read is known to hold no foreclosure.
    expect(app.lastForecloseCheckBlock).toBe(app.lastInputCheckBlock);
    expect(app.lastForecloseCheckBlock).toBeGreaterThanOrEqual(sent[1]?.blockNumber ?? 1n);
    for (const list of [await pinned().listApplications(), await next().listApplications()]) {
      expect(list.pagination.totalCount).toBe(1);
      expect(list.data.map((a) => a.applicationAddress)).toEqual([APP]);
    }
    const raw = (await nextRpc().request("cartesi_getApplication", { application: APP })).data;
    expect(raw).toMatchObject({ enabled: true, status: "OK", claim_staging_period: ZERO_QUANTITY, foreclose_block: ZERO_QUANTITY, state: "ENABLED" });
    expect((await pinnedRpc().request("cartesi_listApplications", {})).data[0]?.state).toBe("ENABLED");
  });

  it("hands both generations each input with its transaction, and the newest its log index in the block", async () => {
    for (const { hash, index, logIndex } of sent) {
      const old = await pinned().getInput({ application: APP, inputIndex: index });
      const input = await next().getInput({ application: APP, inputIndex: index });
      for (const decoded of [old, input]) {
        expect(decoded).toMatchObject({ index, status: "ACCEPTED", transactionReference: hash });
        expect(decoded.decodedData?.sender).toBe(account.address);
      }
      const raw = (await nextRpc().request("cartesi_getInput", { application: APP, input_index: numberToHex(index) })).data;
      expect(raw).toMatchObject({ transaction_hash: hash, log_index: numberToHex(logIndex), transaction_reference: hash });
      expect((await pinnedRpc().request("cartesi_getInput", { application: "attestation", input_index: numberToHex(index) })).data.transaction_reference).toBe(hash);
    }
    const listed = (await nextRpc().request("cartesi_listInputs", { application: APP })).data;
    expect(listed.slice(-2).map((i) => [i.transaction_hash, i.log_index])).toEqual(sent.map((s) => [s.hash, numberToHex(s.logIndex)]));
    for (const list of [await pinned().listInputs({ application: APP }), await next().listInputs({ application: APP })]) {
      expect(list.data.slice(-2).map((i) => i.transactionReference)).toEqual(sent.map((s) => s.hash));
    }
  });

  it("lists and gets epochs for both generations: claimed at once, never staged", async () => {
    const epochIndex = (await next().getInput({ application: APP, inputIndex: sent[0]?.index ?? 0n })).epochIndex;
    const old = await pinned().getEpoch({ application: APP, epochIndex });
    const epoch = await next().getEpoch({ application: APP, epochIndex });
    for (const decoded of [old, epoch]) {
      expect(decoded).toMatchObject({ index: epochIndex, status: "CLAIM_ACCEPTED", inputIndexLowerBound: sent[0]?.index, inputIndexUpperBound: (sent[1]?.index ?? 0n) + 1n });
      expect(decoded.outputsMerkleRoot).toMatch(/^0x[0-9a-f]{64}$/);
    }
    expect(epoch.stagedAtBlock).toBeNull();
    const raw = (await nextRpc().request("cartesi_getEpoch", { application: APP, epoch_index: numberToHex(epochIndex) })).data;
    expect(raw.staged_at_block).toBeNull();
    for (const list of [await pinned().listEpochs({ application: APP }), await next().listEpochs({ application: APP })]) {
      expect(list.data.map((e) => e.index)).toContain(epochIndex);
    }
    // The newest statuses are known filters; a devnode's epochs are never in them.
    expect((await nextRpc().request("cartesi_listEpochs", { application: APP, status: "CLAIM_STAGED" })).data).toEqual([]);
    expect(((await call("cartesi_listEpochs", { application: APP, status: ["CLAIM_FORECLOSED", "CLAIM_ACCEPTED"] })).result as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });

  it("discovers exactly the newest node's methods, with objects whose schemas name every field served", async () => {
    const doc = (await call("rpc.discover", [])).result as Discovered;
    const listed = doc.methods.map((m) => m.name);
    expect(["rpc.discover", ...listed].sort()).toEqual([...NODE_METHODS].sort());
    expect([...SERVED_METHODS].sort()).toEqual([...NODE_METHODS].sort());
    for (const name of listed) expect((await call(name, { application: APP })).error?.code, name).not.toBe(-32601);
    // Names the newest node does not have (the 2.2.0 clients' getMatchAdvanced among them) are not methods.
    for (const gone of ["cartesi_getMatchAdvanced", "cartesi_listBondEvents", "cartesi_getBondEvent"]) {
      expect((await call(gone, { application: APP })).error, gone).toEqual({ code: -32601, message: "Method not found" });
    }
    const first = <T>(result: unknown): T => ((result as { data: T[] }).data[0] as T);
    const served: Record<string, Record<string, unknown>> = {
      Application: first((await call("cartesi_listApplications", {})).result),
      Epoch: first((await call("cartesi_listEpochs", { application: APP })).result),
      Input: first((await call("cartesi_listInputs", { application: APP })).result),
    };
    for (const [name, object] of Object.entries(served)) {
      expect(Object.keys(object).sort(), name).toEqual(Object.keys(doc.components.schemas[name]?.properties ?? {}).sort());
    }
  });

  it("refuses every method but POST on the node's inspect route, 405 with Allow: POST, as the node does", async () => {
    for (const path of ["/inspect/attestation", `/inspect/${APP}`, `/inspect/${APP.toLowerCase()}`, "/inspect/someone-else"]) {
      for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
        const answer = await fetch(`${stack.urls.node}${path}`, { method });
        expect([answer.status, answer.headers.get("allow"), answer.headers.get("x-content-type-options"), await answer.text()], `${method} ${path}`).toEqual([
          405,
          "POST",
          "nosniff",
          "Method not allowed\n",
        ]);
      }
      const head = await fetch(`${stack.urls.node}${path}`, { method: "HEAD" });
      expect([head.status, head.headers.get("allow")]).toEqual([405, "POST"]);
    }
    // A GET whose segment is a query is still the specification's interface.
    const query = encodeURIComponent(JSON.stringify({ type: "all_provider_schemas", params: {} }));
    expect((await fetch(`${stack.urls.node}/inspect/${query}`)).status).toBe(200);
    expect((await fetch(`${stack.urls.node}/inspect/attestation`, { method: "POST", body: "{}" })).status).toBe(200);
  });

  it("makes the newest client's addInput (the v3 InputBox) fail with the reason, and logs a transaction sent there anyway", async () => {
    const before = await next().getProcessedInputCount({ application: APP });
    const onChain = () => l1().readContract({ address: V2_DEFAULTS.inputBoxAddress, abi: v2Abi("InputBox"), functionName: "getNumberOfInputs", args: [APP] });
    const countBefore = await onChain();
    const reason = new RegExp(`the v3 InputBox \\(${V3_INPUT_BOX_ADDRESS}\\) is not deployed on this devnode: .*InputBox is at ${V2_DEFAULTS.inputBoxAddress}`);
    const payload = stringToHex(JSON.stringify(schemaInput("v3.example")));
    await expect(wallet().extend(nextWalletActionsL1()).addInput({ account, chain: hardhat, application: APP, payload })).rejects.toThrow(reason);
    await expect(wallet().writeContract({ address: V3_INPUT_BOX_ADDRESS, abi: v2Abi("InputBox"), functionName: "addInput", args: [APP, payload] })).rejects.toThrow(reason);
    // With its own gas limit nothing is estimated: the transaction is mined, reverts, and the devnode says why.
    await chainTest().setAutomine(false);
    let hash: Hex;
    try {
      hash = await wallet().writeContract({ address: V3_INPUT_BOX_ADDRESS, abi: v2Abi("InputBox"), functionName: "addInput", args: [APP, payload], gas: 300_000n });
      await chainTest().mine({ blocks: 1 });
    } finally {
      await chainTest().setAutomine(true);
    }
    expect((await l1().waitForTransactionReceipt({ hash })).status).toBe("reverted");
    const line = await until(
      () => stack.logs("devnode").split("\n").find((l) => l.includes(hash)) ?? "",
      (found) => found !== "",
      "the devnode's line about the transaction to the v3 InputBox",
    );
    expect(line).toMatch(/went to the v3 InputBox address and added no input: the v3 InputBox .* is not deployed on this devnode/);
    // No input anywhere: not on the chain, not in the node.
    expect(await onChain()).toBe(countBefore);
    expect(await next().getProcessedInputCount({ application: APP })).toBe(before);
    expect((await pinned().listInputs({ application: APP })).pagination.totalCount).toBe(Number(countBefore));
  });
});
