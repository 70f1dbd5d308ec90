/**
 * The whole stack the inspect, api, writes and chain-advance sections share (test/support/stack.ts:
 * chain, devnode, dapp bundle, api), started on the inspect-size store with rate limits off and the local
 * provider allowed; and how those sections talk to its chain: JSON-RPC on loopback, addInput calldata,
 * the InputBox's input count, an input's status as the node reads it.
 */
import { join } from "node:path";
import { encodeFunctionData, type Hex } from "viem";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { loopbackTarget } from "../load.ts";
import type { BenchContext } from "./context.ts";

/** The api's JWT secret: the api section issues its tokens with it. */
export const JWT_SECRET = "bench-secret-bench-secret-bench-secret-0123";

/** Starts the whole stack on the store seeded in `<work>/stack` (bench/sections/stores.ts). */
export async function startWholeStack(ctx: BenchContext, rollups: "v1" | "v2"): Promise<TestStack> {
  const stack = await startStack({
    api: true,
    index: ctx.profile.indexer,
    rollups,
    dataDir: join(ctx.work, "stack"),
    dappCommand: ctx.bundle.command,
    env: { RATE_LIMITS: "off", PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET },
    readyTimeoutMs: 120_000,
  });
  ctx.log(`stack up (Rollups ${rollups}): node ${stack.urls.node}, api ${stack.urls.api}`);
  return stack;
}

export async function rpc<T>(url: string, body: unknown): Promise<T> {
  loopbackTarget(url);
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return (await response.json()) as T;
}

export interface RpcAnswer<T> {
  result?: T;
  error?: { message: string };
}

export function addInputData(stack: TestStack, payload: Hex): Hex {
  return encodeFunctionData({ abi: inputBoxAbi, functionName: "addInput", args: [stack.addresses.dapp, payload] });
}


/** An input's status as the node reads it: GraphQL on v1, JSON-RPC on v2. Throws while the node has not seen it. */
export async function inputStatus(stack: TestStack, index: number): Promise<string> {
  if (stack.rollups === "v1") return (await stack.graphql<{ input: { status: string } }>("query($i: Int!) { input(index: $i) { status } }", { i: index })).input.status;
  const answer = await rpc<RpcAnswer<{ data: { status: string } }>>(`${stack.urls.node}/rpc`, {
    jsonrpc: "2.0",
    id: 1,
    method: "cartesi_getInput",
    params: { application: stack.addresses.dapp, input_index: `0x${index.toString(16)}` },
  });
  if (answer.result === undefined) throw new Error(answer.error?.message ?? "no result");
  return answer.result.data.status;
}
