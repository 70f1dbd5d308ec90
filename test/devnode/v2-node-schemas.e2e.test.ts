/**
 * Every result of the v2 devnode's JSON-RPC, property by property, against the Cartesi node's own result
 * schemas: the components of cartesi/rollups-node's internal/jsonrpc/jsonrpc-discover.json (the newest
 * v2 line), restated here by hand (name, type, nullable), never taken from the devnode's own
 * `rpc.discover`. The walk follows `rpc.discover`: each method it lists is called (each item of a get
 * method, by every index the lists hold) and each answer checked: no property of the node's schema
 * missing, no `null` where the node's schema does not allow one, every value of its type, and nothing
 * beside them but the older fields the pinned clients read (DECISIONS.md section 15). The same answers
 * are then decoded by both client generations, the pinned (@cartesi/rpc 2.0.0-alpha.20, @cartesi/viem
 * 2.0.0-alpha.29) and the newest (2.0.0-alpha.25, 2.0.0-alpha.31).
 *
 * The dapp is a small one of this test's own, so that the record holds every kind of object: an input
 * with a notice, a voucher, a delegate-call voucher and a report; a rejected input; an input whose dapp
 * raises an exception (the only way to an EXCEPTION input and its `exception_data`); claimed epochs and
 * one not claimed, whose outputs have no proof yet.
 */
import { createClient as createRpcClient } from "@cartesi/rpc";
import { createClient as createNextRpcClient } from "@cartesi/rpc-next";
import { createCartesiPublicClient, getInputsAdded, walletActionsL1 } from "@cartesi/viem";
import { createCartesiPublicClient as createNextCartesiPublicClient } from "@cartesi/viem-next";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createWalletClient, http, numberToHex, stringToHex, zeroAddress, zeroHash, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { startStack, type TestStack } from "../support/stack.ts";

const APP = V2_DEFAULTS.applicationAddress;
const account = privateKeyToAccount(DEFAULTS.privateKey);
const VOUCHER_DESTINATION = "0x00000000000000000000000000000000000000aa";
const EXCEPTION_PAYLOAD = stringToHex("the dapp gave up on this input");

/**
 * A dapp on the rollup HTTP server that does what each input's text says: `outputs` (a notice, a voucher
 * of 42 wei, a delegate-call voucher and a report), `reject` (a report, then rejected) or `exception` (a
 * report, then /exception); an inspect gets its payload back as a report.
 */
const SCHEMA_DAPP = `
const base = process.env.ROLLUP_HTTP_SERVER_URL;
const post = async (path, body) => {
  const answer = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await answer.text();
  if (answer.status >= 400) throw new Error(path + ": " + answer.status + " " + text);
  return { status: answer.status, text };
};
let status = "accept";
for (;;) {
  const answer = await post("/finish", { status });
  status = "accept";
  if (answer.status === 202) continue;
  const { request_type, data } = JSON.parse(answer.text);
  await post("/report", { payload: data.payload });
  if (request_type !== "advance_state") continue;
  const kind = Buffer.from(data.payload.slice(2), "hex").toString("utf8");
  if (kind === "outputs") {
    await post("/notice", { payload: data.payload });
    await post("/voucher", { destination: "${VOUCHER_DESTINATION}", value: "0x2a", payload: "0xdeadbeef" });
    await post("/delegate-call-voucher", { destination: "${VOUCHER_DESTINATION}", payload: "0xcafe" });
  } else if (kind === "reject") {
    status = "reject";
  } else if (kind === "exception") {
    await post("/exception", { payload: "${EXCEPTION_PAYLOAD}" });
  }
}
`;

// ---- The node's result schemas, restated from its jsonrpc-discover.json ----

type Scalar = "Hash" | "EthereumAddress" | "ByteArray" | "UnsignedInteger" | "UnsignedInteger256" | "FunctionSelector" | "ApplicationName" | "Semver" | "DateTime" | "string" | "boolean" | "integer";
type Property = ({ scalar: Scalar } | { oneOf: readonly string[] } | { object: string } | { array: Property } | { enum: readonly string[] }) & { nullable?: boolean };

const s = (scalar: Scalar): Property => ({ scalar });
const object = (name: string): Property => ({ object: name });
const array = (items: Property): Property => ({ array: items });
const oneOf = (...names: string[]): Property => ({ oneOf: names });
const values = (...names: string[]): Property => ({ enum: names });
const orNull = (property: Property): Property => ({ ...property, nullable: true });
const quantity = s("UnsignedInteger");
const hash = s("Hash");
const address = s("EthereumAddress");
const bytes = s("ByteArray");
const time = s("DateTime");
const list = (item: string) => ({ data: array(object(item)), pagination: object("Pagination") });
const get = (item: string) => ({ data: object(item) });

const SCALARS: Record<Scalar, (value: unknown) => boolean> = {
  Hash: (v) => typeof v === "string" && /^0x[a-fA-F0-9]{64}$/.test(v),
  EthereumAddress: (v) => typeof v === "string" && /^0x[a-fA-F0-9]{40}$/.test(v),
  ByteArray: (v) => typeof v === "string" && /^0x[a-fA-F0-9]*$/.test(v),
  UnsignedInteger: (v) => typeof v === "string" && /^0x[a-fA-F0-9]{1,16}$/.test(v),
  UnsignedInteger256: (v) => typeof v === "string" && /^0x[a-fA-F0-9]{1,64}$/.test(v),
  FunctionSelector: (v) => typeof v === "string" && /^0x[a-fA-F0-9]{8}$/.test(v),
  ApplicationName: (v) => typeof v === "string" && /^[a-z0-9_-]+$/.test(v),
  // The node's pattern, ^[a-zA-Z0-9_-\.]+$, meant as: letters, digits, '_', '-' and '.'.
  Semver: (v) => typeof v === "string" && /^[a-zA-Z0-9_.-]+$/.test(v),
  DateTime: (v) => typeof v === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
  string: (v) => typeof v === "string",
  boolean: (v) => typeof v === "boolean",
  integer: (v) => Number.isInteger(v),
};

/** The node's `components.schemas` objects; every property of each is written by the node. */
const NODE_SCHEMAS: Record<string, Record<string, Property>> = {
  Pagination: { total_count: s("integer"), limit: s("integer"), offset: s("integer") },
  Application: {
    name: s("ApplicationName"), iapplication_address: address, iconsensus_address: address, iinputbox_address: address,
    template_hash: hash, epoch_length: quantity, claim_staging_period: quantity, withdrawal_config: object("WithdrawalConfig"),
    data_availability: bytes, consensus_type: values("AUTHORITY", "QUORUM", "PRT"), enabled: s("boolean"),
    status: values("OK", "FAILED", "DIVERGED", "CORRUPTED"), reason: orNull(s("string")),
    iinputbox_block: quantity, last_epoch_check_block: quantity, last_input_check_block: quantity, last_output_check_block: quantity,
    last_tournament_check_block: quantity, last_foreclose_check_block: quantity, last_accounts_drive_proved_check_block: quantity,
    last_withdrawal_check_block: quantity, processed_inputs: quantity,
    foreclose_block: quantity, foreclose_transaction: hash,
    accounts_drive_proved_block: quantity, accounts_drive_proved_transaction: hash, accounts_drive_merkle_root: hash,
    created_at: time, updated_at: time, execution_parameters: object("ExecutionParameters"),
  },
  WithdrawalConfig: { guardian: address, log2_leaves_per_account: quantity, log2_max_num_of_accounts: quantity, accounts_drive_start_index: quantity, withdrawal_output_builder: address },
  ExecutionParameters: {
    snapshot_policy: values("NONE", "EVERY_INPUT", "EVERY_EPOCH"),
    advance_inc_cycles: quantity, advance_max_cycles: quantity, inspect_inc_cycles: quantity, inspect_max_cycles: quantity,
    advance_inc_deadline: quantity, advance_max_deadline: quantity, inspect_inc_deadline: quantity, inspect_max_deadline: quantity,
    load_deadline: quantity, store_deadline: quantity, fast_deadline: quantity, max_concurrent_inspects: s("integer"),
    created_at: time, updated_at: time,
  },
  Epoch: {
    index: quantity, first_block: quantity, last_block: quantity, input_index_lower_bound: quantity, input_index_upper_bound: quantity,
    machine_hash: orNull(hash), outputs_merkle_root: orNull(hash), outputs_merkle_proof: orNull(array(hash)),
    commitment: orNull(hash), commitment_proof: orNull(array(hash)), claim_transaction_hash: orNull(hash), tournament_address: orNull(address),
    status: values("OPEN", "CLOSED", "INPUTS_PROCESSED", "CLAIM_COMPUTED", "CLAIM_SUBMITTED", "CLAIM_STAGED", "CLAIM_ACCEPTED", "CLAIM_REJECTED", "CLAIM_FORECLOSED"),
    staged_at_block: orNull(quantity), virtual_index: quantity, created_at: time, updated_at: time,
  },
  Input: {
    epoch_index: quantity, index: quantity, block_number: quantity, raw_data: bytes, decoded_data: orNull(object("EvmAdvance")),
    status: values("NONE", "ACCEPTED", "REJECTED", "EXCEPTION", "MACHINE_HALTED"), exception_data: orNull(bytes),
    machine_hash: orNull(hash), outputs_hash: orNull(hash), transaction_hash: hash, log_index: quantity, created_at: time, updated_at: time,
  },
  EvmAdvance: {
    chain_id: quantity, application_contract: address, sender: address, block_number: quantity, block_timestamp: quantity,
    prev_randao: s("UnsignedInteger256"), index: quantity, payload: bytes,
  },
  Output: {
    epoch_index: quantity, input_index: quantity, index: quantity, raw_data: bytes,
    decoded_data: orNull(oneOf("Notice", "Voucher", "DelegateCallVoucher")), hash: orNull(hash),
    output_hashes_siblings: orNull(array(hash)), execution_transaction_hash: orNull(hash), created_at: time, updated_at: time,
  },
  // The node's schema types `type` as a FunctionSelector; its DecodeOutput (internal/jsonrpc) writes the
  // ABI function's name, which both @cartesi/rpc generations type as that literal: the name is checked.
  Notice: { type: values("Notice"), payload: bytes },
  Voucher: { type: values("Voucher"), destination: address, value: s("UnsignedInteger256"), payload: bytes },
  DelegateCallVoucher: { type: values("DelegateCallVoucher"), destination: address, payload: bytes },
  Report: { epoch_index: quantity, input_index: quantity, index: quantity, raw_data: bytes, created_at: time, updated_at: time },
  Withdrawal: { account_index: quantity, account: bytes, output: bytes, block_number: quantity, transaction_hash: hash, log_index: quantity, created_at: time, updated_at: time },
  Tournament: {
    epoch_index: quantity, address, parent_tournament_address: orNull(address), parent_match_id_hash: orNull(hash),
    max_level: quantity, level: quantity, log2step: quantity, height: quantity, winner_commitment: orNull(hash), final_state_hash: orNull(hash),
    finished_at_block: quantity, created_at: time, updated_at: time,
  },
  Commitment: { epoch_index: quantity, tournament_address: address, commitment: hash, final_state_hash: hash, submitter_address: address, block_number: quantity, tx_hash: hash, created_at: time, updated_at: time },
  Match: {
    epoch_index: quantity, tournament_address: address, id_hash: hash, commitment_one: bytes, commitment_two: bytes, left_of_two: bytes,
    block_number: quantity, tx_hash: hash, winner_commitment: values("NONE", "ONE", "TWO"), deletion_reason: values("STEP", "TIMEOUT", "CHILD_TOURNAMENT", "NOT_DELETED"),
    deletion_block_number: quantity, deletion_tx_hash: hash, created_at: time, updated_at: time,
  },
  MatchAdvanced: { epoch_index: quantity, tournament_address: address, id_hash: hash, other_parent: bytes, left_node: bytes, block_number: quantity, tx_hash: hash, created_at: time, updated_at: time },
  NodeInfo: { chain_id: quantity, version: s("Semver"), default_block: values("FINALIZED", "SAFE", "LATEST", "PENDING") },
  ...Object.fromEntries(
    ["Application", "Epoch", "Input", "Output", "Report", "Withdrawal", "Tournament", "Commitment", "Match", "MatchAdvanced"].flatMap((item) => [
      [`${item}ListResult`, list(item)],
      [`${item}GetResult`, get(item)],
    ]),
  ),
  LastAcceptedEpochIndexResult: { data: quantity },
  ProcessedInputCountResult: { data: quantity },
  ExecutedOutputCountResult: { data: quantity },
  PendingExecutableOutputCountResult: { data: quantity },
  ChainIdResult: { data: quantity },
  NodeInfoResult: get("NodeInfo"),
  NodeVersionResult: { data: s("Semver") },
};

/** Each method's result, as the node's definition names it. */
const NODE_RESULTS: Record<string, string> = {
  cartesi_listApplications: "ApplicationListResult",
  cartesi_getApplication: "ApplicationGetResult",
  cartesi_listEpochs: "EpochListResult",
  cartesi_getEpoch: "EpochGetResult",
  cartesi_getEpochByVirtualIndex: "EpochGetResult",
  cartesi_getLastAcceptedEpochIndex: "LastAcceptedEpochIndexResult",
  cartesi_listInputs: "InputListResult",
  cartesi_getInput: "InputGetResult",
  cartesi_getProcessedInputCount: "ProcessedInputCountResult",
  cartesi_getExecutedOutputCount: "ExecutedOutputCountResult",
  cartesi_getPendingExecutableOutputCount: "PendingExecutableOutputCountResult",
  cartesi_listOutputs: "OutputListResult",
  cartesi_getOutput: "OutputGetResult",
  cartesi_listReports: "ReportListResult",
  cartesi_getReport: "ReportGetResult",
  cartesi_listWithdrawals: "WithdrawalListResult",
  cartesi_getWithdrawal: "WithdrawalGetResult",
  cartesi_listTournaments: "TournamentListResult",
  cartesi_getTournament: "TournamentGetResult",
  cartesi_listCommitments: "CommitmentListResult",
  cartesi_getCommitment: "CommitmentGetResult",
  cartesi_listMatches: "MatchListResult",
  cartesi_getMatch: "MatchGetResult",
  cartesi_listMatchAdvances: "MatchAdvancedListResult",
  cartesi_getMatchAdvance: "MatchAdvancedGetResult",
  cartesi_getNodeInfo: "NodeInfoResult",
  cartesi_getChainId: "ChainIdResult",
  cartesi_getNodeVersion: "NodeVersionResult",
};

/** The only properties beside the node's: what the 2.2.0 clients read under their older names. */
const OLDER_FIELDS: Record<string, readonly string[]> = { Application: ["state"], Input: ["transaction_reference"] };

/** Items an Authority application never has: their get methods answer "not found" (-31001), as the node's do. */
const NONE_ON_AN_AUTHORITY = ["cartesi_getWithdrawal", "cartesi_getTournament", "cartesi_getCommitment", "cartesi_getMatch", "cartesi_getMatchAdvance"];

/** Where `value` departs from `property`, each as a line naming its path. */
function problemsOf(value: unknown, property: Property, path: string): string[] {
  if (value === null) return property.nullable === true ? [] : [`${path}: null where the node's schema allows none`];
  if ("scalar" in property) return SCALARS[property.scalar](value) ? [] : [`${path}: ${JSON.stringify(value)} is not a ${property.scalar}`];
  if ("enum" in property) return property.enum.includes(value as string) ? [] : [`${path}: ${JSON.stringify(value)} is none of ${property.enum.join(", ")}`];
  if ("array" in property) {
    if (!Array.isArray(value)) return [`${path}: not an array`];
    return value.flatMap((item, i) => problemsOf(item, property.array, `${path}[${i}]`));
  }
  if ("oneOf" in property) {
    const type = (value as { type?: unknown }).type;
    const name = property.oneOf.find((n) => n === type);
    return name === undefined ? [`${path}: type ${JSON.stringify(type)} is none of ${property.oneOf.join(", ")}`] : objectProblems(value, name, path);
  }
  return objectProblems(value, property.object, path);
}

function objectProblems(value: unknown, name: string, path: string): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: not a ${name} object`];
  const schema = NODE_SCHEMAS[name];
  if (schema === undefined) return [`${path}: no node schema ${name}`];
  const record = value as Record<string, unknown>;
  const missing = Object.keys(schema).filter((key) => !Object.hasOwn(record, key)).map((key) => `${path}.${key}: missing (${name})`);
  const extra = Object.keys(record)
    .filter((key) => !Object.hasOwn(schema, key) && !(OLDER_FIELDS[name] ?? []).includes(key))
    .map((key) => `${path}.${key}: not in the node's ${name}`);
  const wrong = Object.entries(schema).flatMap(([key, property]) => (Object.hasOwn(record, key) ? problemsOf(record[key], property, `${path}.${key}`) : []));
  return [...missing, ...extra, ...wrong];
}

interface Discovered {
  methods: { name: string; params: { name: string; required: boolean; schema: { $ref?: string } }[] }[];
}

interface Answer {
  method: string;
  params: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The part of a json-rpc-2.0 client used here: any method by name (each generation types only its own). */
interface LooseRpcClient {
  request(method: string, params?: unknown): PromiseLike<unknown>;
}

describe("the v2 node's results against the node's own schemas", () => {
  let stack: TestStack;
  let rpcUrl: string;
  const sent: { kind: string; index: bigint; hash: Hex }[] = [];
  /** Every answer of the walk of `rpc.discover`. */
  const answers: Answer[] = [];

  const l1 = () => createPublicClient({ chain: hardhat, transport: http(stack.urls.rpc) });
  const pinned = () => createCartesiPublicClient({ transport: http(rpcUrl) });
  const next = () => createNextCartesiPublicClient({ transport: http(rpcUrl) });
  const call = async (method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number; message: string } }> =>
    (await (await fetch(rpcUrl, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }) })).json()) as never;
  const dataOf = async <T>(method: string, params: unknown): Promise<T> => ((await call(method, params)).result as { data: T }).data;

  async function send(kind: string): Promise<void> {
    const wallet = createWalletClient({ account, chain: hardhat, transport: http(stack.urls.rpc) }).extend(walletActionsL1());
    const hash = await wallet.addInput({ account, chain: hardhat, application: APP, payload: stringToHex(kind) });
    const [added] = getInputsAdded(await l1().waitForTransactionReceipt({ hash }));
    if (added === undefined) throw new Error(`no InputAdded in ${hash}`);
    await pinned().waitForInput({ application: APP, inputIndex: added.index, pollingInterval: 50, retryCount: 600 });
    sent.push({ kind, index: added.index, hash });
  }

  beforeAll(async () => {
    stack = await startStack({ rollups: "v2", env: { EPOCH_INTERVAL_MS: "0" }, dappCommand: [process.execPath, "--input-type=module", "-e", SCHEMA_DAPP] });
    rpcUrl = `${stack.urls.node}/rpc`;
    for (const kind of ["outputs", "reject", "exception"]) await send(kind);
    // Those three claimed; one more, left unclaimed.
    const closed = (await (await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).json()) as { claimed: number };
    if (closed.claimed < 1) throw new Error(`no epoch claimed: ${JSON.stringify(closed)}`);
    await send("outputs");

    // The indices every get method is called with: all the lists hold.
    const indices = async (method: string, key: string): Promise<Hex[]> => (await dataOf<Record<string, Hex>[]>(method, { application: APP })).map((item) => item[key] as Hex);
    const byParam: Record<string, Hex[]> = {
      epoch_index: await indices("cartesi_listEpochs", "index"),
      virtual_index: await indices("cartesi_listEpochs", "virtual_index"),
      input_index: await indices("cartesi_listInputs", "index"),
      output_index: await indices("cartesi_listOutputs", "index"),
      report_index: await indices("cartesi_listReports", "index"),
    };
    // What a parameter that names nothing the record holds is sent as, by its schema.
    const placeholder: Record<string, unknown> = {
      "#/components/schemas/UnsignedInteger": "0x0",
      "#/components/schemas/Hash": zeroHash,
      "#/components/schemas/EthereumAddress": zeroAddress,
    };
    const doc = (await call("rpc.discover", [])).result as Discovered;
    for (const method of doc.methods) {
      const required = method.params.filter((p) => p.required && p.name !== "application");
      // A get method of a kind the record holds is called for each item; any other once.
      const varying = method.name.startsWith("cartesi_get") ? required.find((p) => byParam[p.name] !== undefined) : undefined;
      const fixed = Object.fromEntries(required.filter((p) => p !== varying).map((p) => [p.name, placeholder[p.schema.$ref ?? ""] ?? "0x0"]));
      const base = method.params.some((p) => p.name === "application") ? { application: APP, ...fixed } : fixed;
      const paramsList = varying === undefined ? [base] : (byParam[varying.name] ?? []).map((index) => ({ ...base, [varying.name]: index }));
      for (const params of paramsList) answers.push({ method: method.name, params, ...(await call(method.name, params)) });
    }
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("holds every kind of object: outputs of three kinds, a rejected and an EXCEPTION input, claimed and unclaimed epochs", async () => {
    const inputs = await dataOf<{ status: string }[]>("cartesi_listInputs", { application: APP });
    expect(inputs.map((i) => i.status)).toEqual(["ACCEPTED", "REJECTED", "EXCEPTION", "ACCEPTED"]);
    const outputs = await dataOf<{ decoded_data: { type: string } | null; output_hashes_siblings: Hex[] | null }[]>("cartesi_listOutputs", { application: APP });
    expect(outputs.map((o) => o.decoded_data?.type)).toEqual(["Notice", "Voucher", "DelegateCallVoucher", "Notice", "Voucher", "DelegateCallVoucher"]);
    // Proved once their epoch is claimed; the last input's epoch is not.
    expect(outputs.map((o) => o.output_hashes_siblings?.length ?? null)).toEqual([63, 63, 63, null, null, null]);
    const epochs = await dataOf<{ status: string }[]>("cartesi_listEpochs", { application: APP });
    expect(new Set(epochs.map((e) => e.status))).toEqual(new Set(["CLAIM_ACCEPTED", "CLAIM_COMPUTED"]));
    expect((await dataOf<unknown[]>("cartesi_listReports", { application: APP })).length).toBe(4);
  });

  it("answers every method of rpc.discover with a result the node's schema describes, property by property", () => {
    const methods = [...new Set(answers.map((a) => a.method))];
    // Every method listed has a result schema in the node's definition.
    expect(methods.filter((m) => NODE_RESULTS[m] === undefined)).toEqual([]);
    const problems = answers.flatMap((answer) =>
      answer.error === undefined ? objectProblems(answer.result, NODE_RESULTS[answer.method] ?? "", `${answer.method}(${JSON.stringify(answer.params)})`) : [],
    );
    expect(problems).toEqual([]);
    // Errors only where an Authority application has no such item, and "not found" as the node says it.
    const errors = answers.filter((a) => a.error !== undefined);
    expect([...new Set(errors.map((a) => a.method))].sort()).toEqual([...NONE_ON_AN_AUTHORITY].sort());
    for (const { method, error } of errors) expect(error?.code, method).toBe(-31001);
    // Every other method answered, and each get method once per item of its list.
    for (const method of methods.filter((m) => !NONE_ON_AN_AUTHORITY.includes(m))) {
      expect(answers.filter((a) => a.method === method && a.result !== undefined).length, method).toBeGreaterThan(0);
    }
    expect(answers.filter((a) => a.method === "cartesi_getInput").length).toBe(4);
    expect(answers.filter((a) => a.method === "cartesi_getOutput").length).toBe(6);
  });

  it("writes the node's values where a devnode has nothing to say: zero hashes and blocks, not nulls", async () => {
    const app = await dataOf<Record<string, unknown>>("cartesi_getApplication", { application: APP });
    expect(app).toMatchObject({
      foreclose_block: "0x0",
      foreclose_transaction: zeroHash,
      accounts_drive_proved_block: "0x0",
      accounts_drive_proved_transaction: zeroHash,
      accounts_drive_merkle_root: zeroHash,
    });
    expect((await dataOf<Record<string, unknown>[]>("cartesi_listApplications", {}))[0]).toEqual(app);
  });

  it("gives an EXCEPTION input the dapp's exception payload as exception_data, and every other input null", async () => {
    for (const { kind, index, hash } of sent) {
      const input = await dataOf<Record<string, unknown>>("cartesi_getInput", { application: APP, input_index: numberToHex(index) });
      expect(input, kind).toMatchObject({ exception_data: kind === "exception" ? EXCEPTION_PAYLOAD : null, transaction_hash: hash, transaction_reference: hash });
    }
    const listed = await dataOf<{ exception_data: Hex | null }[]>("cartesi_listInputs", { application: APP });
    expect(listed.map((i) => i.exception_data)).toEqual([null, null, EXCEPTION_PAYLOAD, null]);
  });

  it("is decoded by both @cartesi/rpc generations as it was answered", async () => {
    // Each generation's client for the methods it knows (the newest adds the withdrawals).
    const known = {
      pinned: ["cartesi_listApplications", "cartesi_getApplication", "cartesi_listEpochs", "cartesi_getEpoch", "cartesi_getLastAcceptedEpochIndex", "cartesi_listInputs", "cartesi_getInput", "cartesi_getProcessedInputCount", "cartesi_listOutputs", "cartesi_getOutput", "cartesi_listReports", "cartesi_getReport", "cartesi_listTournaments", "cartesi_listCommitments", "cartesi_listMatches", "cartesi_listMatchAdvances", "cartesi_getChainId", "cartesi_getNodeVersion"],
      newest: ["cartesi_listWithdrawals"],
    };
    const clients: [string, LooseRpcClient, string[]][] = [
      ["@cartesi/rpc 2.0.0-alpha.20", createRpcClient({ uri: rpcUrl }) as unknown as LooseRpcClient, known.pinned],
      ["@cartesi/rpc 2.0.0-alpha.25", createNextRpcClient({ uri: rpcUrl }) as unknown as LooseRpcClient, [...known.pinned, ...known.newest]],
    ];
    for (const [name, client, methods] of clients) {
      for (const answer of answers.filter((a) => a.result !== undefined && methods.includes(a.method))) {
        const params = ["cartesi_getChainId", "cartesi_getNodeVersion"].includes(answer.method) ? [] : answer.params;
        expect(await client.request(answer.method, params), `${name} ${answer.method}`).toEqual(answer.result);
      }
    }
  });

  it("is decoded by both @cartesi/viem generations, each reading the values served", async () => {
    const inputs = await dataOf<Record<string, Hex | null>[]>("cartesi_listInputs", { application: APP });
    const outputs = await dataOf<{ index: Hex; decoded_data: { type: string } | null }[]>("cartesi_listOutputs", { application: APP });
    const epochs = await dataOf<{ index: Hex; status: string }[]>("cartesi_listEpochs", { application: APP });
    const reports = await dataOf<{ index: Hex }[]>("cartesi_listReports", { application: APP });
    for (const l2 of [pinned(), next()]) {
      expect((await l2.getApplication({ application: APP })).applicationAddress).toBe(APP);
      expect((await l2.listApplications()).data).toHaveLength(1);
      for (const raw of inputs) {
        const input = await l2.getInput({ application: APP, inputIndex: BigInt(raw["index"] ?? "0x0") });
        expect([input.status, input.transactionReference, input.outputsHash]).toEqual([raw["status"], raw["transaction_hash"], raw["outputs_hash"]]);
      }
      expect((await l2.listInputs({ application: APP })).data.map((i) => i.status)).toEqual(inputs.map((i) => i["status"]));
      for (const raw of outputs) {
        const output = await l2.getOutput({ application: APP, outputIndex: BigInt(raw.index) });
        expect(output.decodedData?.type).toBe(raw.decoded_data?.type);
      }
      expect((await l2.listOutputs({ application: APP })).data).toHaveLength(outputs.length);
      for (const raw of epochs) expect((await l2.getEpoch({ application: APP, epochIndex: BigInt(raw.index) })).status).toBe(raw.status);
      expect((await l2.listEpochs({ application: APP })).data).toHaveLength(epochs.length);
      for (const raw of reports) expect((await l2.getReport({ application: APP, reportIndex: BigInt(raw.index) })).index).toBe(BigInt(raw.index));
      expect((await l2.listReports({ application: APP })).data).toHaveLength(reports.length);
      expect(await l2.getProcessedInputCount({ application: APP })).toBe(BigInt(inputs.length));
      expect(await l2.getLastAcceptedEpochIndex({ application: APP })).toBe(BigInt(epochs.filter((e) => e.status === "CLAIM_ACCEPTED").at(-1)?.index ?? "0x0"));
      expect(await l2.getChainId()).toBe(hardhat.id);
      expect(await l2.getNodeVersion()).toMatch(/^2\./);
      const empty = await Promise.all([
        l2.listTournaments({ application: APP }),
        l2.listCommitments({ application: APP }),
        l2.listMatches({ application: APP }),
        l2.listMatchAdvances({ application: APP, epochIndex: 0n, tournamentAddress: zeroAddress, idHash: zeroHash }),
      ]);
      expect(empty.map((page) => page.data)).toEqual([[], [], [], []]);
    }
    const app = await next().getApplication({ application: APP });
    expect([app.forecloseBlock, app.forecloseTransaction, app.accountsDriveProvedTransaction, app.accountsDriveMerkleRoot]).toEqual([0n, zeroHash, zeroHash, zeroHash]);
    expect((await next().listWithdrawals({ application: APP })).data).toEqual([]);
  });
});
