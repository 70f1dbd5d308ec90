/**
 * The devnode as a Cartesi Rollups v2 node (ROLLUPS=v2) on the real stack (hardhat, devnode, dapp), read
 * and written with the v2 clients as they are: @cartesi/viem sends inputs to the canonical InputBox and
 * reads the node's JSON-RPC, @cartesi/rpc checks the raw shapes, and the deployed Application's
 * `validateOutput` judges every proof the node serves.
 */
import { createClient as createRpcClient } from "@cartesi/rpc";
import { createCartesiPublicClient, getInputsAdded, publicActionsL1, walletActionsL1 } from "@cartesi/viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createWalletClient, decodeFunctionData, http, numberToHex, stringToHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import { RollupClient } from "../../scripts/lib/rollup-client.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";

const APP = V2_DEFAULTS.applicationAddress;
const account = privateKeyToAccount(DEFAULTS.privateKey);

function jsonHex(value: unknown): Hex {
  return stringToHex(JSON.stringify(value));
}

describe("the devnode as a Rollups v2 node", () => {
  let stack: TestStack;
  let l1: ReturnType<typeof makeL1>;
  let wallet: ReturnType<typeof makeWallet>;
  let l2: ReturnType<typeof createCartesiPublicClient>;
  let rpc: ReturnType<typeof createRpcClient>;

  function makeL1(url: string) {
    return createPublicClient({ chain: hardhat, transport: http(url) }).extend(publicActionsL1());
  }
  function makeWallet(url: string) {
    return createWalletClient({ account, chain: hardhat, transport: http(url) }).extend(walletActionsL1());
  }

  /** Sends `payload` through @cartesi/viem and waits until the node has processed it. */
  async function send(payload: Hex): Promise<bigint> {
    const hash = await wallet.addInput({ account, chain: hardhat, application: APP, payload });
    const [added] = getInputsAdded(await l1.waitForTransactionReceipt({ hash }));
    if (added === undefined) throw new Error("no InputAdded in the receipt");
    await l2.waitForInput({ application: APP, inputIndex: added.index, pollingInterval: 50, retryCount: 600 });
    return added.index;
  }

  beforeAll(async () => {
    stack = await startStack({ rollups: "v2", env: { EPOCH_INTERVAL_MS: "0" } });
    l1 = makeL1(stack.urls.rpc);
    wallet = makeWallet(stack.urls.rpc);
    l2 = createCartesiPublicClient({ transport: http(`${stack.urls.node}/rpc`) });
    rpc = createRpcClient({ uri: `${stack.urls.node}/rpc` });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("places the v2 contracts where the v2 clients expect them and describes the application", async () => {
    const app = await l2.getApplication({ application: "attestation" });
    expect(app.applicationAddress).toBe(APP);
    expect(app.consensusAddress).toBe(V2_DEFAULTS.authorityAddress);
    expect(app.inputBoxAddress).toBe(V2_DEFAULTS.inputBoxAddress);
    expect(app.consensusType).toBe("AUTHORITY");
    expect(await l2.getChainId()).toBe(31337);
    const byAddress = await rpc.request("cartesi_getApplication", { application: APP.toLowerCase() });
    expect(byAddress.data.name).toBe("attestation");
    const validator = await l1.readContract({ address: APP, abi: v2Abi("Application"), functionName: "getOutputsMerkleRootValidator" });
    expect(validator).toBe(V2_DEFAULTS.authorityAddress);
    const apps = await rpc.request("cartesi_listApplications", {});
    expect(apps.pagination).toEqual({ total_count: 1, limit: 50, offset: 0 });
  });

  it("hands the dapp v2 metadata and records the input as the node shows it", async () => {
    const index = await send(jsonHex(schemaInput("v2-first.example")));
    const input = await l2.getInput({ application: APP, inputIndex: index });
    expect(input.status).toBe("ACCEPTED");
    expect(input.decodedData?.sender).toBe(account.address);
    expect(input.decodedData?.applicationContract).toBe(APP);
    expect(input.decodedData?.chainId).toBe(31337n);
    const raw = await rpc.request("cartesi_getInput", { application: "attestation", input_index: `0x${index.toString(16)}` });
    // The raw EvmAdvance is what the InputBox emitted: decoding it gives the payload back.
    const decoded = decodeFunctionData({ abi: v2Abi("Inputs"), data: raw.data.raw_data as Hex });
    expect(decoded.functionName).toBe("EvmAdvance");
    expect(raw.data.transaction_reference).toMatch(/^0x[0-9a-f]{64}$/);
    expect(raw.data.outputs_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await l2.getProcessedInputCount({ application: APP })).toBe(index + 1n);
  });

  it("numbers notices across the application and proves each one once its epoch is claimed", async () => {
    await send(jsonHex(schemaInput("v2-second.example")));
    await send(jsonHex(schemaInput("v2-third.example")));
    const { data: notices } = await l2.listOutputs({ application: APP, outputType: "Notice" });
    expect(notices.length).toBeGreaterThanOrEqual(3);
    expect(notices.map((o) => o.index)).toEqual(notices.map((_, i) => BigInt(i)));
    const closed = (await (await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).json()) as { closed: { claimTx: Hex } | null; claimed: number };
    expect(closed.claimed).toBeGreaterThan(0);
    expect(closed.closed?.claimTx).toMatch(/^0x[0-9a-f]{64}$/);
    for (const listed of notices) {
      const output = await l2.getOutput({ application: APP, outputIndex: listed.index });
      expect(output.outputHashesSiblings).toHaveLength(63);
      expect(await l1.validateOutput({ application: APP, output })).toBe(true);
    }
    const epoch = await l2.getEpoch({ application: APP, epochIndex: notices[0]?.epochIndex ?? 0n });
    expect(epoch.status).toBe("CLAIM_ACCEPTED");
    expect(await l2.getLastAcceptedEpochIndex({ application: APP })).toBeGreaterThanOrEqual(epoch.index);
  });

  it("refuses a changed output or a proof of another output", async () => {
    const output = await l2.getOutput({ application: APP, outputIndex: 0n });
    // One byte of the payload itself (after the selector, the offset and the length words) changed.
    const at = 2 + 8 + 64 + 64;
    const flipped = output.rawData.slice(at, at + 2) === "ff" ? "00" : "ff";
    const changed = { ...output, rawData: `${output.rawData.slice(0, at)}${flipped}${output.rawData.slice(at + 2)}` as Hex };
    expect(await l1.validateOutput({ application: APP, output: changed })).toBe(false);
    expect(await l1.validateOutput({ application: APP, output: { ...output, index: 1n } })).toBe(false);
  });

  it("tells a v1 script pointed at this v2 chain what is wrong: no InputBox there, set ROLLUPS=v2", async () => {
    const v1 = new RollupClient({ rpcUrl: stack.urls.rpc, nodeUrl: stack.urls.node, inputBoxAddress: DEFAULTS.inputBoxAddress, dappAddress: DEFAULTS.dappAddress, rollups: "v1" });
    await expect(v1.send({ type: "health_probe", params: {} }, 0)).rejects.toThrow(
      new RegExp(`^no InputBox at ${DEFAULTS.inputBoxAddress} on ${stack.urls.rpc} \\(ROLLUPS=v1\\): transaction 0x[0-9a-f]{64} added nothing\\. Is it a Rollups v2 stack \\(npm start -- --rollups v2\\)\\? Run the scripts with ROLLUPS=v2`),
    );
  });

  it("answers a v2 inspect as the newest node does: reports always a list, a refused query as an Exception with its data", async () => {
    const response = await fetch(`${stack.urls.node}/inspect/attestation`, { method: "POST", body: JSON.stringify({ type: "all_provider_schemas", params: {} }) });
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/json"]);
    const text = await response.text();
    expect(text.endsWith("}\n")).toBe(true);
    const body = JSON.parse(text) as { status: string; reports: { payload: Hex }[]; processed_input_count: number };
    expect(body.status).toBe("Accepted");
    expect(body.processed_input_count).toBe(Number(await l2.getProcessedInputCount({ application: APP })));
    expect(body.reports).toHaveLength(1);
    // The dapp refuses an unknown query through /exception: the node says so, and hands on its payload.
    const refused = await fetch(`${stack.urls.node}/inspect/${APP}`, { method: "POST", body: JSON.stringify({ type: "no_such_query", params: {} }) });
    expect(await refused.json()).toEqual({
      status: "Exception",
      error: "The machine raised an exception while inspecting",
      exception_data: stringToHex("unknown query type: no_such_query"),
      reports: [],
      processed_input_count: body.processed_input_count,
    });
    const text404 = async (path: string, init: RequestInit = { method: "POST", body: "x" }) => {
      const answer = await fetch(`${stack.urls.node}${path}`, init);
      return [answer.status, await answer.text(), answer.headers.get("x-content-type-options")];
    };
    expect(await text404("/inspect/nobody")).toEqual([404, "Application not found\n", "nosniff"]);
    expect(await text404("/inspect/attestation/extra")).toEqual([404, "404 page not found\n", "nosniff"]);
    const get = await fetch(`${stack.urls.node}/inspect/attestation`, { method: "PUT" });
    expect([get.status, get.headers.get("allow"), await get.text()]).toEqual([405, "POST", "Method not allowed\n"]);
    // Over the node's 2 MiB: 413, and the node keeps serving.
    expect(await text404("/inspect/attestation", { method: "POST", body: "x".repeat(2 * 1024 * 1024 + 1) })).toEqual([413, "Payload too large\n", "nosniff"]);
    expect((await fetch(`${stack.urls.node}/inspect/attestation`, { method: "POST", body: "{}" })).status).toBe(200);
  });

  it("serves the specification's query interface beside it (GET /inspect/<query>, POST /inspect), as on v1", async () => {
    const query = { type: "all_provider_schemas", params: {} };
    const got = (await (await fetch(`${stack.urls.node}/inspect/${encodeURIComponent(JSON.stringify(query))}`)).json()) as Record<string, unknown>;
    expect(Object.keys(got)).toEqual(["status", "exception_payload", "reports", "processed_input_count"]);
    expect(got).toMatchObject({ status: "Accepted", exception_payload: null });
    const posted = (await (await fetch(`${stack.urls.node}/inspect`, { method: "POST", body: JSON.stringify(query) })).json()) as Record<string, unknown>;
    expect(posted).toEqual(got);
    const refused = (await (await fetch(`${stack.urls.node}/inspect/${encodeURIComponent(JSON.stringify({ type: "nope", params: {} }))}`)).json()) as Record<string, unknown>;
    expect(refused).toEqual({ status: "Rejected", exception_payload: stringToHex("unknown query type: nope"), reports: [], processed_input_count: got.processed_input_count });
  });

  it("answers unknown items, bad parameters and bad requests as the newest node does", async () => {
    await expect(rpc.request("cartesi_getInput", { application: APP, input_index: "0x999" })).rejects.toMatchObject({ code: -31001, message: "Input not found" });
    await expect(rpc.request("cartesi_getInput", { application: APP, input_index: "12" as Hex })).rejects.toMatchObject({ code: -32602 });
    await expect(rpc.request("cartesi_getOutput", { application: "someone-else", output_index: "0x0" })).rejects.toMatchObject({ code: -31002, message: "Application not found" });
    const raw = async (body: string): Promise<[number, string]> => {
      const response = await fetch(`${stack.urls.node}/rpc`, { method: "POST", body });
      return [response.status, await response.text()];
    };
    const error = (code: number, message: string, id: unknown = null): string => `${JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id })}\n`;
    expect(await raw("{not json")).toEqual([200, error(-32700, "Parse error")]);
    expect(await raw('{"jsonrpc":"2.0","method":5,"id":1}')).toEqual([200, error(-32700, "Parse error")]);
    expect(await raw("5")).toEqual([200, error(-32600, "Invalid Request")]);
    expect(await raw("  ")).toEqual([400, "Empty request body\n"]);
    expect(await raw('{"jsonrpc":"1.0","method":"cartesi_getChainId","id":3}')).toEqual([200, error(-32600, "Unsupported JSON-RPC version", 3)]);
    expect(await raw('{"jsonrpc":"2.0","method":"cartesi_getChainId","id":{"a":1}}')).toEqual([200, error(-32600, "Invalid request ID")]);
    expect(await raw('{"jsonrpc":"2.0","id":4}')).toEqual([200, error(-32600, "Invalid Request", 4)]);
    expect(await raw(JSON.stringify({ jsonrpc: "2.0", method: "cartesi_nothing", id: 7 }))).toEqual([200, error(-32601, "Method not found", 7)]);
    // A request without an id is answered anyway, with a null id.
    expect(await raw('{"jsonrpc":"2.0","method":"cartesi_getChainId"}')).toEqual([200, '{"jsonrpc":"2.0","result":{"data":"0x7a69"},"id":null}\n']);
    // Over 1 MiB: 413, and the node keeps serving.
    expect(await raw("x".repeat(1024 * 1024 + 1))).toEqual([413, "Payload too large\n"]);
    expect(await l2.getChainId()).toBe(31337);
  });

  it("answers a batch with a list in the same order; refuses an empty or oversized batch, or one that lists too much", async () => {
    const post = async (body: unknown): Promise<unknown> => (await fetch(`${stack.urls.node}/rpc`, { method: "POST", body: JSON.stringify(body) })).json();
    const batch = (await post([
      { jsonrpc: "2.0", method: "cartesi_getChainId", id: 1 },
      { jsonrpc: "2.0", method: "cartesi_getInput", params: { application: APP, input_index: "0x999" }, id: "two" },
      7,
      { jsonrpc: "2.0", method: "cartesi_getNodeInfo", id: 4 },
    ])) as unknown[];
    expect(batch).toEqual([
      { jsonrpc: "2.0", result: { data: "0x7a69" }, id: 1 },
      { jsonrpc: "2.0", error: { code: -31001, message: "Input not found" }, id: "two" },
      { jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request" }, id: null },
      { jsonrpc: "2.0", result: { data: { chain_id: "0x7a69", version: expect.any(String), default_block: "LATEST" } }, id: 4 },
    ]);
    expect(await post([])).toEqual({ jsonrpc: "2.0", error: { code: -32040, message: "invalid request batch size (expected [1..100])" }, id: null });
    expect(await post(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", method: "cartesi_getChainId", id: i })))).toMatchObject({ error: { code: -32040 } });
    const list = (limit: number) => ({ jsonrpc: "2.0", method: "cartesi_listInputs", params: { application: APP, limit }, id: limit });
    expect(await post([list(6000), list(4001)])).toEqual({ jsonrpc: "2.0", error: { code: -31004, message: "Batch list item limit exceeded" }, id: null });
    expect(((await post([list(6000), list(4000)])) as unknown[]).length).toBe(2);
  });

  it("serves the newest node's methods, and rpc.discover describes exactly the methods it serves", async () => {
    const call = async (method: string, params: unknown): Promise<{ result?: { data: unknown }; error?: { code: number; message: string } }> =>
      (await (await fetch(`${stack.urls.node}/rpc`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }) })).json()) as never;
    const [first] = ((await call("cartesi_listEpochs", { application: APP })).result as unknown as { data: { virtual_index: Hex; index: Hex }[] }).data;
    expect((await call("cartesi_getEpochByVirtualIndex", { application: APP, virtual_index: first?.virtual_index })).result?.data).toMatchObject({ index: first?.index });
    expect((await call("cartesi_getEpochByVirtualIndex", { application: APP, virtual_index: "0xffff" })).error).toEqual({ code: -31001, message: "Epoch not found" });
    expect((await call("cartesi_getExecutedOutputCount", { application: APP })).result).toEqual({ data: "0x0" });
    expect((await call("cartesi_getPendingExecutableOutputCount", { application: APP })).result).toEqual({ data: "0x0" });
    expect((await call("cartesi_listWithdrawals", { application: APP })).result).toEqual({ data: [], pagination: { total_count: 0, limit: 50, offset: 0 } });
    expect((await call("cartesi_getMatchAdvance", { application: APP })).error).toEqual({ code: -31001, message: "Match advanced not found" });
    expect((await call("cartesi_listEpochs", { application: APP, status: [] })).error).toEqual({ code: -32602, message: "Invalid epoch status: expected at least one status" });
    const ranged = (await call("cartesi_listInputs", { application: APP, from: "0x1", to: "0x2" })).result as unknown as { data: { index: Hex }[] };
    expect(ranged.data.map((i) => i.index)).toEqual(["0x1", "0x2"]);
    expect((await call("cartesi_listInputs", { application: APP, from: "0x2", to: "0x1" })).error?.code).toBe(-32602);
    const doc = (await call("rpc.discover", undefined)).result as unknown as { openrpc: string; methods: { name: string; params: { schema: unknown }[]; result: { schema: { $ref: string } } }[]; components: { schemas: Record<string, unknown> } };
    expect(doc.openrpc).toBe("1.4.1");
    const listed = doc.methods.map((m) => m.name);
    // Every method listed is served (none answers Method not found), and every result names a schema that exists.
    for (const name of listed) {
      expect((await call(name, { application: APP })).error?.code, name).not.toBe(-32601);
      const schema = doc.methods.find((m) => m.name === name)?.result.schema.$ref.replace("#/components/schemas/", "") ?? "";
      expect(doc.components.schemas[schema], `${name} -> ${schema}`).toBeDefined();
    }
    expect(listed).toEqual(expect.arrayContaining(["cartesi_getEpochByVirtualIndex", "cartesi_getExecutedOutputCount", "cartesi_getPendingExecutableOutputCount", "cartesi_getNodeInfo", "cartesi_listWithdrawals", "cartesi_getMatchAdvance", "cartesi_listMatchAdvances"]));
    // And nothing else is: a name not in the document is not a method.
    expect((await call("cartesi_listEverything", {})).error?.code).toBe(-32601);
  });

  it("the scripts' client (npm run input, inspect, replay) speaks to a v2 node: a verdict with its notice and reports, an inspect", async () => {
    const verdict = await stack.send(schemaInput("v2-client.example"));
    expect(verdict.status).toBe("ACCEPTED");
    expect(verdict.notices).toHaveLength(1);
    const refused = await stack.send({ type: "register_schema", params: {} });
    expect(refused.status).toBe("REJECTED");
    expect(refused.reports.length).toBeGreaterThan(0);
    const answer = await stack.client.inspect({ type: "all_provider_schemas", params: {} });
    expect(answer.status).toBe("Accepted");
    expect(answer.processed_input_count).toBe(refused.index + 1);
  });

  it("pages lists with the node's defaults and filters", async () => {
    const page = await rpc.request("cartesi_listInputs", { application: APP, limit: 2, offset: 1, descending: true });
    expect(page.pagination.limit).toBe(2);
    expect(page.data).toHaveLength(2);
    const total = page.pagination.total_count;
    expect(page.data.map((i) => i.index)).toEqual([`0x${(total - 2).toString(16)}`, `0x${(total - 3).toString(16)}`]);
    const bySender = await rpc.request("cartesi_listInputs", { application: APP, sender: "0x000000000000000000000000000000000000dEaD" });
    expect(bySender.pagination.total_count).toBe(0);
    const reports = await rpc.request("cartesi_listReports", { application: APP, input_index: "0x0" });
    expect(reports.data).toEqual([]);
    const all = await rpc.request("cartesi_listReports", { application: APP });
    expect(all.data.map((r) => r.index)).toEqual(all.data.map((_, i) => `0x${i.toString(16)}`));
    const vouchers = await l2.listOutputs({ application: APP, outputType: "Voucher" });
    expect(vouchers.data).toEqual([]);
  });

  it("keeps its record across a restart: the same indices, roots and proofs", async () => {
    const before = await l2.getOutput({ application: APP, outputIndex: 1n });
    await stack.restart("devnode");
    const processed = await l2.getProcessedInputCount({ application: APP });
    const outputsBefore = (await l2.listOutputs({ application: APP })).pagination.totalCount;
    await until(() => l2.getProcessedInputCount({ application: APP }).catch(() => -1n), (count) => count >= processed, "the devnode answers again");
    const after = await l2.getOutput({ application: APP, outputIndex: 1n });
    expect(after.outputHashesSiblings).toEqual(before.outputHashesSiblings);
    const index = await send(jsonHex(schemaInput("v2-after-restart.example")));
    const { data: outputs } = await l2.listOutputs({ application: APP, inputIndex: index });
    expect(outputs[0]?.index).toBe(BigInt(outputsBefore));
    expect(outputs[0]?.outputHashesSiblings).toBeNull();
  });

  it("a fresh chain gets the contracts, the inputs and claims back, and the old proofs hold again", async () => {
    const proved = await l2.getOutput({ application: APP, outputIndex: 2n });
    const count = await l2.getProcessedInputCount({ application: APP });
    await stack.restart("chain");
    // The devnode sees the chain went back, re-submits the inputs (into new blocks) and deploys the contracts.
    await until(
      () => l1.getCode({ address: APP }).catch(() => undefined),
      (code) => code !== undefined && code !== "0x",
      "the Application is deployed again",
      60_000,
    );
    await until(
      () => l1.readContract({ address: V2_DEFAULTS.inputBoxAddress, abi: v2Abi("InputBox"), functionName: "getNumberOfInputs", args: [APP] }).catch(() => 0n),
      (n) => n === count,
      "the inputs are on the fresh chain",
      60_000,
    );
    await until(
      async () => ((await (await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).json()) as { claimed: number }).claimed,
      (claimed) => claimed >= 1,
      "the epochs are claimed again",
      60_000,
    );
    expect(await l1.validateOutput({ application: APP, output: proved })).toBe(true);
    expect(await l2.getProcessedInputCount({ application: APP })).toBe(count);
    // Each input is where the fresh chain holds it now: its block, transaction and log.
    const [log] = await l1.getContractEvents({ address: V2_DEFAULTS.inputBoxAddress, abi: v2Abi("InputBox"), eventName: "InputAdded", args: { appContract: APP, index: 0n }, fromBlock: 0n, strict: true });
    const input = (await rpc.request("cartesi_getInput", { application: APP, input_index: "0x0" })).data as Record<string, unknown>;
    expect([input.block_number, input.transaction_hash, input.log_index]).toEqual([numberToHex(log?.blockNumber ?? -1n), log?.transactionHash, numberToHex(log?.logIndex ?? -1)]);
  });
});
