/**
 * What `rpc.discover` answers: an OpenRPC document of the v2 devnode's JSON-RPC, written for the methods
 * it serves (the newest node's dispatch table, and no other: rpc.ts serves exactly METHOD_DOCS), with
 * each parameter's and each result's schema and the shared objects in `components`, their properties the
 * fields rpc-objects.ts writes (the newest node's, and the older ones the 2.2.0 clients read). It follows
 * the layout of the node's own document (OpenRPC 1.4.1, results as `$ref`s to `{data}` / `{data,
 * pagination}` objects, hex quantities as strings); it is this project's text, not a copy of the node's file.
 */
import { DEVNODE_V2_VERSION } from "./rpc-version.ts";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: "null" }] });

const P = {
  application: { name: "application", required: true, schema: ref("NameOrAddress"), description: "the application's name or address" },
  limit: { name: "limit", required: false, schema: { type: "integer", minimum: 0, maximum: 10000, default: 50 }, description: "items per page (0 or absent: 50; at most 10,000)" },
  offset: { name: "offset", required: false, schema: { type: "integer", minimum: 0, default: 0 } },
  descending: { name: "descending", required: false, schema: { type: "boolean", default: false } },
  from: { name: "from", required: false, schema: ref("UnsignedInteger"), description: "the first index" },
  to: { name: "to", required: false, schema: ref("UnsignedInteger"), description: "the last index" },
  epochIndex: (required: boolean) => ({ name: "epoch_index", required, schema: ref("UnsignedInteger") }),
  inputIndex: (required: boolean) => ({ name: "input_index", required, schema: ref("UnsignedInteger") }),
} as const;
const PAGE = [P.limit, P.offset, P.descending] as const;

/** The newest node's epoch statuses (a devnode's epochs reach OPEN, CLOSED, CLAIM_COMPUTED and CLAIM_ACCEPTED). */
export const EPOCH_STATUSES = ["OPEN", "CLOSED", "INPUTS_PROCESSED", "CLAIM_COMPUTED", "CLAIM_SUBMITTED", "CLAIM_STAGED", "CLAIM_ACCEPTED", "CLAIM_REJECTED", "CLAIM_FORECLOSED"] as const;

interface MethodDoc {
  summary: string;
  params: readonly { name: string; required: boolean; schema: Schema; description?: string }[];
  result: string;
}

/** Every method the devnode serves, in the order `rpc.discover` lists them. */
export const METHOD_DOCS: Record<string, MethodDoc> = {
  cartesi_listApplications: { summary: "List applications", params: PAGE, result: "ApplicationListResult" },
  cartesi_getApplication: { summary: "One application", params: [P.application], result: "ApplicationGetResult" },
  cartesi_listEpochs: {
    summary: "List an application's epochs",
    params: [P.application, { name: "status", required: false, schema: { oneOf: [ref("EpochStatus"), { type: "array", items: ref("EpochStatus"), minItems: 1 }] } }, ...PAGE, P.from, P.to],
    result: "EpochListResult",
  },
  cartesi_getEpoch: { summary: "One epoch by index", params: [P.application, P.epochIndex(true)], result: "EpochGetResult" },
  cartesi_getEpochByVirtualIndex: {
    summary: "One epoch by its virtual index (dense, counting only epochs with inputs)",
    params: [P.application, { name: "virtual_index", required: true, schema: ref("UnsignedInteger") }],
    result: "EpochGetResult",
  },
  cartesi_getLastAcceptedEpochIndex: { summary: "The index of the last epoch whose claim was accepted", params: [P.application], result: "QuantityResult" },
  cartesi_listInputs: {
    summary: "List an application's inputs",
    params: [P.application, P.epochIndex(false), { name: "sender", required: false, schema: ref("EthereumAddress") }, ...PAGE, P.from, P.to],
    result: "InputListResult",
  },
  cartesi_getInput: { summary: "One input", params: [P.application, P.inputIndex(true)], result: "InputGetResult" },
  cartesi_getProcessedInputCount: { summary: "How many inputs the application processed", params: [P.application], result: "QuantityResult" },
  cartesi_getExecutedOutputCount: { summary: "How many outputs were executed on the base layer", params: [P.application], result: "QuantityResult" },
  cartesi_getPendingExecutableOutputCount: {
    summary: "How many vouchers can be executed (their epoch's claim accepted) and are not yet",
    params: [P.application],
    result: "QuantityResult",
  },
  cartesi_listOutputs: {
    summary: "List an application's outputs",
    params: [
      P.application,
      P.epochIndex(false),
      P.inputIndex(false),
      { name: "output_type", required: false, schema: { oneOf: [ref("FunctionSelector"), { type: "array", items: ref("FunctionSelector"), minItems: 1 }] } },
      { name: "voucher_address", required: false, schema: ref("EthereumAddress") },
      ...PAGE,
      P.from,
      P.to,
      { name: "executed", required: false, schema: { type: "boolean" } },
    ],
    result: "OutputListResult",
  },
  cartesi_getOutput: { summary: "One output, with its proof once its epoch is claimed", params: [P.application, { name: "output_index", required: true, schema: ref("UnsignedInteger") }], result: "OutputGetResult" },
  cartesi_listReports: { summary: "List an application's reports", params: [P.application, P.epochIndex(false), P.inputIndex(false), ...PAGE, P.from, P.to], result: "ReportListResult" },
  cartesi_getReport: { summary: "One report", params: [P.application, { name: "report_index", required: true, schema: ref("UnsignedInteger") }], result: "ReportGetResult" },
  cartesi_listWithdrawals: { summary: "List withdrawals (none on an Authority application)", params: [P.application, { name: "account_index", required: false, schema: ref("UnsignedInteger") }, ...PAGE], result: "EmptyListResult" },
  cartesi_getWithdrawal: { summary: "One withdrawal", params: [P.application, { name: "account_index", required: true, schema: ref("UnsignedInteger") }], result: "EmptyGetResult" },
  cartesi_listTournaments: { summary: "List tournaments (none on an Authority application)", params: [P.application, P.epochIndex(false), ...PAGE], result: "EmptyListResult" },
  cartesi_getTournament: { summary: "One tournament", params: [P.application, { name: "address", required: true, schema: ref("EthereumAddress") }], result: "EmptyGetResult" },
  cartesi_listCommitments: { summary: "List commitments", params: [P.application, P.epochIndex(false), ...PAGE], result: "EmptyListResult" },
  cartesi_getCommitment: { summary: "One commitment", params: [P.application, P.epochIndex(true), { name: "tournament_address", required: true, schema: ref("EthereumAddress") }, { name: "commitment", required: true, schema: ref("Hash") }], result: "EmptyGetResult" },
  cartesi_listMatches: { summary: "List matches", params: [P.application, P.epochIndex(false), ...PAGE], result: "EmptyListResult" },
  cartesi_getMatch: { summary: "One match", params: [P.application, P.epochIndex(true), { name: "tournament_address", required: true, schema: ref("EthereumAddress") }, { name: "id_hash", required: true, schema: ref("Hash") }], result: "EmptyGetResult" },
  cartesi_listMatchAdvances: {
    summary: "List a match's advances",
    params: [P.application, P.epochIndex(true), { name: "tournament_address", required: true, schema: ref("EthereumAddress") }, { name: "id_hash", required: true, schema: ref("Hash") }, ...PAGE],
    result: "EmptyListResult",
  },
  cartesi_getMatchAdvance: {
    summary: "One match advance",
    params: [
      P.application,
      P.epochIndex(true),
      { name: "tournament_address", required: true, schema: ref("EthereumAddress") },
      { name: "id_hash", required: true, schema: ref("Hash") },
      { name: "tx_hash", required: true, schema: ref("Hash") },
      { name: "log_index", required: true, schema: ref("UnsignedInteger") },
    ],
    result: "EmptyGetResult",
  },
  cartesi_getNodeInfo: { summary: "The node's chain, version and the block it reads at", params: [], result: "NodeInfoResult" },
  cartesi_getChainId: { summary: "The chain id (deprecated: cartesi_getNodeInfo)", params: [], result: "QuantityResult" },
  cartesi_getNodeVersion: { summary: "The node's version (deprecated: cartesi_getNodeInfo)", params: [], result: "StringResult" },
};

const quantity = ref("UnsignedInteger");
const listOf = (item: string): Schema => ({
  type: "object",
  required: ["data", "pagination"],
  properties: { data: { type: "array", items: ref(item) }, pagination: ref("Pagination") },
});
const getOf = (item: string): Schema => ({ type: "object", required: ["data"], properties: { data: ref(item) } });
const object = (properties: Record<string, Schema>): Schema => ({ type: "object", required: Object.keys(properties), properties });

const COMPONENT_SCHEMAS: Record<string, Schema> = {
  UnsignedInteger: { type: "string", pattern: "^0x[a-fA-F0-9]{1,16}$", description: "a hex quantity" },
  UnsignedInteger256: { type: "string", pattern: "^0x[a-fA-F0-9]{1,64}$", description: "a 256-bit hex quantity" },
  EthereumAddress: { type: "string", pattern: "^0x[a-fA-F0-9]{40}$" },
  Hash: { type: "string", pattern: "^0x[a-fA-F0-9]{64}$" },
  ByteArray: { type: "string", pattern: "^0x([a-fA-F0-9]{2})*$" },
  FunctionSelector: { type: "string", pattern: "^0x[a-fA-F0-9]{8}$" },
  ApplicationName: { type: "string", pattern: "^[a-z0-9_-]{3,}$" },
  NameOrAddress: { oneOf: [ref("ApplicationName"), ref("EthereumAddress")] },
  Timestamp: { type: "string", format: "date-time" },
  Pagination: object({ total_count: { type: "integer" }, limit: { type: "integer" }, offset: { type: "integer" } }),
  EpochStatus: { type: "string", enum: [...EPOCH_STATUSES] },
  InputCompletionStatus: { type: "string", enum: ["NONE", "ACCEPTED", "REJECTED", "EXCEPTION", "MACHINE_HALTED", "CYCLE_LIMIT_EXCEEDED", "TIME_LIMIT_EXCEEDED", "PAYLOAD_LENGTH_LIMIT_EXCEEDED"] },
  ExecutionParameters: { type: "object", description: "the machine's limits (a devnode enforces none: zeros)" },
  ApplicationStatus: { type: "string", enum: ["OK", "FAILED", "DIVERGED", "CORRUPTED", "GUEST_EXCEPTION", "MACHINE_HALTED", "MCYCLE_OVERFLOW", "UNEXPECTED_YIELD"] },
  WithdrawalConfig: {
    ...object({
      guardian: ref("EthereumAddress"),
      log2_leaves_per_account: quantity,
      log2_max_num_of_accounts: quantity,
      accounts_drive_start_index: quantity,
      withdrawal_output_builder: ref("EthereumAddress"),
    }),
    description: "the Application's withdrawal immutables; all zeros: none configured (a 2.2.0 Application has none)",
  },
  Application: object({
    name: ref("ApplicationName"),
    iapplication_address: ref("EthereumAddress"),
    iconsensus_address: ref("EthereumAddress"),
    iinputbox_address: ref("EthereumAddress"),
    template_hash: ref("Hash"),
    epoch_length: quantity,
    claim_staging_period: { ...quantity, description: "blocks a claim stays staged before it can be accepted (0: accepted at once)" },
    withdrawal_config: ref("WithdrawalConfig"),
    data_availability: ref("ByteArray"),
    consensus_type: { type: "string", enum: ["AUTHORITY", "QUORUM", "PRT"] },
    enabled: { type: "boolean" },
    status: ref("ApplicationStatus"),
    state: { type: "string", enum: ["ENABLED", "DISABLED", "INOPERABLE"], description: "the 2.2.0 clients' single state (the newest node's enabled and status)" },
    reason: nullable({ type: "string" }),
    iinputbox_block: quantity,
    last_epoch_check_block: quantity,
    last_input_check_block: quantity,
    last_output_check_block: quantity,
    last_tournament_check_block: quantity,
    last_foreclose_check_block: quantity,
    last_accounts_drive_proved_check_block: quantity,
    last_withdrawal_check_block: quantity,
    processed_inputs: quantity,
    foreclose_block: { ...quantity, description: "0: not foreclosed" },
    foreclose_transaction: { ...ref("Hash"), description: "the zero hash: not foreclosed" },
    accounts_drive_proved_block: { ...quantity, description: "0: no accounts drive proved" },
    accounts_drive_proved_transaction: { ...ref("Hash"), description: "the zero hash: no accounts drive proved" },
    accounts_drive_merkle_root: { ...ref("Hash"), description: "the zero hash: no accounts drive proved" },
    created_at: ref("Timestamp"),
    updated_at: ref("Timestamp"),
    execution_parameters: ref("ExecutionParameters"),
  }),
  Epoch: object({
    index: quantity,
    first_block: quantity,
    last_block: quantity,
    input_index_lower_bound: quantity,
    input_index_upper_bound: quantity,
    machine_hash: nullable(ref("Hash")),
    outputs_merkle_root: nullable(ref("Hash")),
    outputs_merkle_proof: nullable({ type: "array", items: ref("Hash") }),
    commitment: nullable(ref("Hash")),
    commitment_proof: nullable({ type: "array", items: ref("Hash") }),
    claim_transaction_hash: nullable(ref("Hash")),
    tournament_address: nullable(ref("EthereumAddress")),
    status: ref("EpochStatus"),
    staged_at_block: nullable(quantity),
    virtual_index: quantity,
    created_at: ref("Timestamp"),
    updated_at: ref("Timestamp"),
  }),
  EvmAdvance: object({
    chain_id: quantity,
    application_contract: ref("EthereumAddress"),
    sender: ref("EthereumAddress"),
    block_number: quantity,
    block_timestamp: quantity,
    prev_randao: ref("UnsignedInteger256"),
    index: quantity,
    payload: ref("ByteArray"),
  }),
  Input: object({
    epoch_index: quantity,
    index: quantity,
    block_number: quantity,
    raw_data: ref("ByteArray"),
    decoded_data: ref("EvmAdvance"),
    status: ref("InputCompletionStatus"),
    exception_data: { ...nullable(ref("ByteArray")), description: "the dapp's exception payload when status is EXCEPTION, null otherwise" },
    machine_hash: nullable(ref("Hash")),
    outputs_hash: nullable(ref("Hash")),
    transaction_hash: ref("Hash"),
    log_index: { ...quantity, description: "the InputAdded log's index in its block" },
    transaction_reference: { ...ref("Hash"), description: "the transaction_hash, under the name the 2.2.0 clients read" },
    created_at: ref("Timestamp"),
    updated_at: ref("Timestamp"),
  }),
  DecodedOutput: {
    oneOf: [
      object({ type: { const: "Notice" }, payload: ref("ByteArray") }),
      object({ type: { const: "Voucher" }, destination: ref("EthereumAddress"), value: ref("UnsignedInteger256"), payload: ref("ByteArray") }),
      object({ type: { const: "DelegateCallVoucher" }, destination: ref("EthereumAddress"), payload: ref("ByteArray") }),
    ],
  },
  Output: object({
    epoch_index: quantity,
    input_index: quantity,
    index: quantity,
    raw_data: ref("ByteArray"),
    decoded_data: nullable(ref("DecodedOutput")),
    hash: ref("Hash"),
    output_hashes_siblings: nullable({ type: "array", items: ref("Hash") }),
    execution_transaction_hash: nullable(ref("Hash")),
    created_at: ref("Timestamp"),
    updated_at: ref("Timestamp"),
  }),
  Report: object({ epoch_index: quantity, input_index: quantity, index: quantity, raw_data: ref("ByteArray"), created_at: ref("Timestamp"), updated_at: ref("Timestamp") }),
  NodeInfo: object({ chain_id: quantity, version: { type: "string" }, default_block: { type: "string", enum: ["FINALIZED", "SAFE", "LATEST", "PENDING"] } }),
  ApplicationListResult: listOf("Application"),
  ApplicationGetResult: getOf("Application"),
  EpochListResult: listOf("Epoch"),
  EpochGetResult: getOf("Epoch"),
  InputListResult: listOf("Input"),
  InputGetResult: getOf("Input"),
  OutputListResult: listOf("Output"),
  OutputGetResult: getOf("Output"),
  ReportListResult: listOf("Report"),
  ReportGetResult: getOf("Report"),
  NodeInfoResult: getOf("NodeInfo"),
  QuantityResult: { type: "object", required: ["data"], properties: { data: quantity } },
  StringResult: { type: "object", required: ["data"], properties: { data: { type: "string" } } },
  EmptyListResult: { type: "object", required: ["data", "pagination"], properties: { data: { type: "array", maxItems: 0 }, pagination: ref("Pagination") } },
  EmptyGetResult: { description: "never answered: the item does not exist on an Authority application (-31001)" },
};

/** The errors every method may answer, beside its own not-found ones. */
const COMPONENT_ERRORS: Record<string, { code: number; message: string }> = {
  InvalidParams: { code: -32602, message: "Invalid parameters" },
  ResourceNotFound: { code: -31001, message: "<resource> not found" },
  ApplicationNotFound: { code: -31002, message: "Application not found" },
  TimeoutError: { code: -32070, message: "Request timed out" },
  ResponseSizeLimitExceeded: { code: -31003, message: "Response size limit exceeded" },
  InternalError: { code: -32603, message: "Internal server error" },
};

/** The OpenRPC document, built once. */
export function discoverDocument(): unknown {
  return {
    openrpc: "1.4.1",
    info: {
      title: "Cartesi Rollups Node API (devnode)",
      version: DEVNODE_V2_VERSION,
      description: "The read-only JSON-RPC of the v2 devnode: applications, epochs, inputs, outputs and reports, as a Cartesi Rollups Node 2 answers them.",
    },
    methods: Object.entries(METHOD_DOCS).map(([name, doc]) => ({
      name,
      summary: doc.summary,
      params: doc.params.map((p) => ({ name: p.name, required: p.required, schema: p.schema, ...(p.description === undefined ? {} : { description: p.description }) })),
      result: { name: "result", schema: ref(doc.result) },
      errors: Object.keys(COMPONENT_ERRORS).map((error) => ({ $ref: `#/components/errors/${error}` })),
    })),
    components: { schemas: COMPONENT_SCHEMAS, errors: COMPONENT_ERRORS },
  };
}
