/**
 * A recorded input log: every processed input of an application with what the node recorded for it (its
 * status, outputs, reports and, on v2, the outputs Merkle root after it), and inspect queries answered at
 * the log's end. Read from a node's reader (GraphQL on v1, JSON-RPC on v2) or from a JSON Lines file, and
 * replayed through libcmt by `npm run replay -- --libcmt` (scripts/lib/libcmt-replay.ts).
 *
 * The file, one JSON object a line:
 *   {"inputLog": 1, "rollups": "v1"|"v2", "chainId": N, "application": "0x…"}          the header, first
 *   {"advance": {index, sender, blockNumber, blockTimestamp, prevRandao, payload}, "expected": {…}}
 *   {"inspect": {"payload": "0x…"}, "expected": {"status", "reports", "exception"}}   after every advance
 * An advance's expected: `status` (ACCEPTED, REJECTED, EXCEPTION...), `reports`, and on v1 `notices` (their
 * payloads, as GraphQL gives them), on v2 `outputs` (as encoded in the outputs tree) and `outputsRoot`.
 */
import { z } from "zod";
import type { Address, Hex } from "viem";
import { ROLLUPS_VERSIONS, type RollupsVersion } from "../../devnode/config.ts";
import { decodeEvmAdvance, encodeEvmAdvance, type DecodedAdvance } from "../../devnode/v2/inputs.ts";
import { messageOf } from "../../common/errors.ts";
import { utf8ToHex } from "../../common/hex.ts";
import { addressSchema } from "../../common/address.ts";
import type { RollupClient } from "./rollup-client.ts";

export const INPUT_LOG_VERSION = 1;

const hex = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, "expected 0x-prefixed hex with an even number of digits").transform((s) => s.toLowerCase() as Hex);
const address = addressSchema;
const word = hex.refine((s) => s.length === 66, "expected 32 bytes");
const count = z.number().int().nonnegative();
const COMPLETION = ["ACCEPTED", "REJECTED", "EXCEPTION", "MACHINE_HALTED", "CYCLE_LIMIT_EXCEEDED", "TIME_LIMIT_EXCEEDED", "PAYLOAD_LENGTH_LIMIT_EXCEEDED", "OUTPUTS_LIMIT_EXCEEDED", "REPORTS_LIMIT_EXCEEDED"] as const;

const headerSchema = z.strictObject({ inputLog: z.literal(INPUT_LOG_VERSION), rollups: z.enum(ROLLUPS_VERSIONS), chainId: z.number().int().positive(), application: address });
const advanceSchema = z.strictObject({
  advance: z.strictObject({ index: count, sender: address, blockNumber: count, blockTimestamp: count, prevRandao: word, payload: hex }),
  expected: z.strictObject({ status: z.enum(COMPLETION), reports: z.array(hex), notices: z.array(hex).optional(), outputs: z.array(hex).optional(), outputsRoot: word.optional() }),
});
const inspectSchema = z.strictObject({
  inspect: z.strictObject({ payload: hex }),
  expected: z.strictObject({ status: z.enum(["Accepted", "Rejected", "Exception"]), reports: z.array(hex), exception: hex.nullable() }),
});

export type LoggedAdvance = z.infer<typeof advanceSchema>;
export type LoggedInspect = z.infer<typeof inspectSchema>;

export interface InputLog {
  rollups: RollupsVersion;
  chainId: number;
  application: Address;
  advances: LoggedAdvance[];
  /** Answered at the state after the last advance. */
  inspects: LoggedInspect[];
}

/** The EvmAdvance call a v2 node feeds the machine for a logged advance (libcmt's mock reads these bytes). */
export function evmAdvanceOf(chainId: number, application: Address, advance: LoggedAdvance["advance"]): Hex {
  return encodeEvmAdvance({
    metadata: {
      chain_id: chainId,
      app_contract: application,
      msg_sender: advance.sender,
      block_number: advance.blockNumber,
      block_timestamp: advance.blockTimestamp,
      prev_randao: advance.prevRandao,
      input_index: advance.index,
    },
    payload: advance.payload,
  });
}

export class InputLogError extends Error {
  override readonly name = "InputLogError";
}

/** Parses a whole log file; the first bad line throws, naming the line and the field. */
export function parseInputLog(text: string): InputLog {
  let log: InputLog | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new InputLogError(`${where}: not JSON`);
    }
    if (log === undefined) {
      const header = check(headerSchema, value, `${where} (the header {"inputLog": ${INPUT_LOG_VERSION}, "rollups", "chainId", "application"})`);
      log = { rollups: header.rollups, chainId: header.chainId, application: header.application, advances: [], inspects: [] };
      return;
    }
    if (typeof value === "object" && value !== null && "advance" in value) {
      if (log.inspects.length > 0) throw new InputLogError(`${where}: an advance after an inspect (inspects are answered at the log's end)`);
      const advance = check(advanceSchema, value, where);
      const expectedIndex = log.advances.length;
      if (advance.advance.index !== expectedIndex) throw new InputLogError(`${where}: input ${advance.advance.index} where input ${expectedIndex} was due (a log holds every input from 0, in order)`);
      log.advances.push(advance);
    } else if (typeof value === "object" && value !== null && "inspect" in value) {
      log.inspects.push(check(inspectSchema, value, where));
    } else {
      throw new InputLogError(`${where}: expected {"advance": ...} or {"inspect": ...}`);
    }
  });
  if (log === undefined) throw new InputLogError("the log is empty: it needs at least its header line");
  return log;
}

function check<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue === undefined ? "" : issue.path.map(String).join(".");
  throw new InputLogError(`${where}: ${path === "" ? "" : `${path}: `}${issue?.message ?? "invalid"}`);
}

export function formatInputLog(log: InputLog): string {
  const lines = [JSON.stringify({ inputLog: INPUT_LOG_VERSION, rollups: log.rollups, chainId: log.chainId, application: log.application })];
  for (const advance of log.advances) lines.push(JSON.stringify(advance));
  for (const inspect of log.inspects) lines.push(JSON.stringify(inspect));
  return `${lines.join("\n")}\n`;
}

/** Reads every processed input of the client's application, and answers `queries` at the state they leave. */
export async function readInputLog(client: RollupClient, queries: readonly string[]): Promise<InputLog> {
  const rollups = client.endpoints.rollups ?? "v1";
  const chainId = await client.publicClient.getChainId();
  const application = client.endpoints.dappAddress.toLowerCase() as Address;
  const advances = rollups === "v2" ? await readV2(client, chainId) : await readV1(client);
  const inspects: LoggedInspect[] = [];
  for (const query of queries) {
    const answer = await client.inspect(query, "POST");
    inspects.push({
      inspect: { payload: utf8ToHex(query) },
      // A v1 node's envelope says Rejected with the exception's payload: the log says what happened.
      expected: { status: answer.exception_payload === null ? answer.status : "Exception", reports: answer.reports.map((r) => r.payload), exception: answer.exception_payload },
    });
  }
  return { rollups, chainId, application, advances, inspects };
}

const PAGE = 10_000;

interface RpcList<T> {
  data: T[];
  pagination: { total_count: number };
}

interface RpcInput {
  index: Hex;
  status: string;
  raw_data: Hex;
  outputs_hash: Hex | null;
}

/** Each input's raw_data items (outputs or reports), in the node's order. */
function rawDataByInput(items: readonly { input_index: Hex; raw_data: Hex }[]): Map<number, Hex[]> {
  const byInput = new Map<number, Hex[]>();
  for (const item of items) {
    const index = Number(item.input_index);
    const list = byInput.get(index);
    const raw = item.raw_data.toLowerCase() as Hex;
    if (list === undefined) byInput.set(index, [raw]);
    else list.push(raw);
  }
  return byInput;
}

async function rpcAll<T>(client: RollupClient, method: string, application: Address): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const page = await client.rpc<RpcList<T>>(method, { application, limit: PAGE, offset: all.length });
    all.push(...page.data);
    if (page.data.length === 0 || all.length >= page.pagination.total_count) return all;
  }
}

/** A v2 node serves the EvmAdvance it fed the machine (raw_data): the log keeps its fields, checked to name this chain and application. */
async function readV2(client: RollupClient, chainId: number): Promise<LoggedAdvance[]> {
  const application = client.endpoints.dappAddress;
  const inputs = await rpcAll<RpcInput>(client, "cartesi_listInputs", application);
  const outputs = rawDataByInput(await rpcAll<{ input_index: Hex; raw_data: Hex }>(client, "cartesi_listOutputs", application));
  const reports = rawDataByInput(await rpcAll<{ input_index: Hex; raw_data: Hex }>(client, "cartesi_listReports", application));
  const advances: LoggedAdvance[] = [];
  for (const input of inputs) {
    if (input.status === "NONE") break;
    const index = Number(input.index);
    let decoded: DecodedAdvance;
    try {
      decoded = decodeEvmAdvance(input.raw_data);
    } catch (error) {
      throw new InputLogError(`input ${index}: the node's raw_data is not an EvmAdvance (${messageOf(error)})`);
    }
    const m = decoded.metadata;
    if (m.chain_id !== chainId || m.app_contract.toLowerCase() !== application.toLowerCase() || m.input_index !== index) {
      throw new InputLogError(`input ${index}: the node's raw_data names chain ${m.chain_id}, application ${m.app_contract} and input ${m.input_index}, not this chain's and application's`);
    }
    const advance = {
      index,
      sender: m.msg_sender.toLowerCase() as Address,
      blockNumber: m.block_number,
      blockTimestamp: m.block_timestamp,
      prevRandao: m.prev_randao.toLowerCase() as Hex,
      payload: decoded.payload.toLowerCase() as Hex,
    };
    advances.push({
      advance,
      expected: {
        status: input.status as LoggedAdvance["expected"]["status"],
        reports: reports.get(index) ?? [],
        outputs: outputs.get(index) ?? [],
        ...(input.outputs_hash === null ? {} : { outputsRoot: input.outputs_hash.toLowerCase() as Hex }),
      },
    });
  }
  return advances;
}

const V1_INPUTS = `query Inputs($after: String) {
  inputs(first: 1000, after: $after) {
    edges { node { index status msgSender blockNumber timestamp payload
      notices { edges { node { payload } } }
      reports { edges { node { payload } } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface V1Page {
  inputs: {
    edges: { node: { index: number; status: string; msgSender: Address; blockNumber: string; timestamp: string; payload: Hex; notices: { edges: { node: { payload: Hex } }[] }; reports: { edges: { node: { payload: Hex } }[] } } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

/** A v1 node does not serve prevRandao: it is the input's block's, read from the chain as a v2 node reads it. */
async function readV1(client: RollupClient): Promise<LoggedAdvance[]> {
  const advances: LoggedAdvance[] = [];
  let after: string | null = null;
  const randao = new Map<number, Hex>();
  for (;;) {
    const page: V1Page = await client.graphql<V1Page>(V1_INPUTS, after === null ? {} : { after });
    for (const { node } of page.inputs.edges) {
      if (node.status === "UNPROCESSED") return advances;
      const blockNumber = Number(node.blockNumber);
      let prevRandao = randao.get(blockNumber);
      if (prevRandao === undefined) {
        const block = await client.publicClient.getBlock({ blockNumber: BigInt(blockNumber) });
        prevRandao = (block.mixHash ?? `0x${"00".repeat(32)}`).toLowerCase() as Hex;
        randao.set(blockNumber, prevRandao);
      }
      advances.push({
        advance: { index: node.index, sender: node.msgSender.toLowerCase() as Address, blockNumber, blockTimestamp: Number(node.timestamp), prevRandao, payload: node.payload.toLowerCase() as Hex },
        expected: {
          status: node.status as LoggedAdvance["expected"]["status"],
          reports: node.reports.edges.map((e) => e.node.payload.toLowerCase() as Hex),
          notices: node.notices.edges.map((e) => e.node.payload.toLowerCase() as Hex),
        },
      });
    }
    if (!page.inputs.pageInfo.hasNextPage || page.inputs.pageInfo.endCursor === null) return advances;
    after = page.inputs.pageInfo.endCursor;
  }
}
