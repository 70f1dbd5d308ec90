/**
 * The v2 JSON-RPC's objects (application, epoch, input, output, report) as JSON, for both client
 * generations at once (DECISIONS.md section 15): every property of the newest node's result schemas
 * (cartesi/rollups-node internal/jsonrpc/jsonrpc-discover.json: `enabled`, `status`,
 * `claim_staging_period`, `withdrawal_config`, the foreclosure and accounts-drive markers, an epoch's
 * `staged_at_block`, an input's `exception_data`, `transaction_hash` and `log_index`, which
 * @cartesi/rpc 2.0.0-alpha.25 and @cartesi/viem 2.0.0-alpha.31 read), beside the older ones that
 * @cartesi/rpc 2.0.0-alpha.20 and @cartesi/viem 2.0.0-alpha.29 read (`state`, `data_availability`,
 * `transaction_reference`). Where a devnode has nothing to say, a property holds what the node writes
 * then (a zero hash, block 0); `null` only where the node's schema allows it. Every number is a
 * lower-case hex quantity, every address checksummed.
 */
import { decodeFunctionData, getAddress, numberToHex, zeroAddress, zeroHash, type Address, type Hex } from "viem";
import type { CompletionStatus } from "../../common/wire.ts";
import type { RollupModel } from "../model.ts";
import type { ConsensusKind } from "./application.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Abi } from "./contracts.ts";
import type { V2Epoch, V2EpochManager } from "./epochs.ts";
import { encodeEvmAdvance } from "./inputs.ts";
import type { V2Input, V2Output, V2Report, V2Store } from "./record.ts";

/** What the objects are made from. */
export interface RpcContext {
  store: V2Store;
  epochs: V2EpochManager;
  model: RollupModel;
  applicationName: string;
  chainId: number;
}

export const quantity = (value: number | bigint): Hex => numberToHex(value);

const STATUS: Record<CompletionStatus, string> = {
  UNPROCESSED: "NONE",
  ACCEPTED: "ACCEPTED",
  REJECTED: "REJECTED",
  EXCEPTION: "EXCEPTION",
  MACHINE_HALTED: "MACHINE_HALTED",
  CYCLE_LIMIT_EXCEEDED: "CYCLE_LIMIT_EXCEEDED",
  TIME_LIMIT_EXCEEDED: "TIME_LIMIT_EXCEEDED",
  PAYLOAD_LENGTH_LIMIT_EXCEEDED: "PAYLOAD_LENGTH_LIMIT_EXCEEDED",
};

/** The devnode keeps no insertion times: a record's time is its block's. */
const timeOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** The node's name for the kind of consensus contract that validates an application (its schema's ConsensusType). */
const CONSENSUS_TYPE: Record<ConsensusKind, "AUTHORITY" | "QUORUM"> = { authority: "AUTHORITY", quorum: "QUORUM" };

/** What the application object is made from: the application's state, not the epochs themselves. */
export interface ApplicationContext extends Pick<RpcContext, "store" | "applicationName"> {
  epochs: Pick<V2EpochManager, "applicationState">;
  model: Pick<RollupModel, "processedInputCount">;
}

/** The application this devnode runs, as `cartesi_getApplication` answers it. */
export function applicationObject(ctx: ApplicationContext): unknown {
  const state = ctx.epochs.applicationState;
  const head = quantity(Math.max(0, Number(ctx.store.nextBlock() ?? 1n) - 1));
  const at = new Date(0).toISOString();
  const zero = quantity(0);
  return {
    name: ctx.applicationName,
    iapplication_address: getAddress(state.application),
    iconsensus_address: getAddress(state.authority),
    iinputbox_address: getAddress(state.inputBox),
    template_hash: DEVNODE_TEMPLATE_HASH,
    epoch_length: quantity(state.epochLength),
    // The 2.2.0 Authority and Quorum accept a claim at once (the Quorum on its majority's vote): no staging period.
    claim_staging_period: zero,
    // A 2.2.0 Application has no guardian and no accounts drive: the node's all-zero "not configured".
    withdrawal_config: {
      guardian: zeroAddress,
      log2_leaves_per_account: zero,
      log2_max_num_of_accounts: zero,
      accounts_drive_start_index: zero,
      withdrawal_output_builder: zeroAddress,
    },
    data_availability: inputBoxAvailability(getAddress(state.inputBox)),
    consensus_type: CONSENSUS_TYPE[state.consensus],
    enabled: true,
    status: "OK",
    // The 2.2.0 clients' single state, which the newest node split into `enabled` and `status`.
    state: "ENABLED",
    reason: null,
    iinputbox_block: zero,
    last_epoch_check_block: head,
    last_input_check_block: head,
    last_output_check_block: head,
    last_tournament_check_block: zero,
    // Every block read holds no foreclosure (a 2.2.0 Application cannot be foreclosed); the drive and
    // withdrawal scans start only after one, so they never ran.
    last_foreclose_check_block: head,
    last_accounts_drive_proved_check_block: zero,
    last_withdrawal_check_block: zero,
    processed_inputs: quantity(ctx.model.processedInputCount),
    // Never foreclosed, no accounts drive proved: zero blocks and zero hashes, the node's "not set" (its
    // schema types the three hashes as Hash, not nullable; clients tell foreclosure by the block).
    foreclose_block: zero,
    foreclose_transaction: zeroHash,
    accounts_drive_proved_block: zero,
    accounts_drive_proved_transaction: zeroHash,
    accounts_drive_merkle_root: zeroHash,
    created_at: at,
    updated_at: at,
    // The node's machine limits; a devnode runs the dapp as a process and enforces none of them.
    execution_parameters: {
      snapshot_policy: "NONE",
      advance_inc_cycles: zero,
      advance_max_cycles: zero,
      inspect_inc_cycles: zero,
      inspect_max_cycles: zero,
      advance_inc_deadline: zero,
      advance_max_deadline: zero,
      inspect_inc_deadline: zero,
      inspect_max_deadline: zero,
      load_deadline: zero,
      store_deadline: zero,
      fast_deadline: zero,
      max_concurrent_inspects: 1,
      created_at: at,
      updated_at: at,
    },
  };
}

export function epochObject(e: V2Epoch): unknown {
  const at = timeOf(Math.floor((e.claim?.claimedAt ?? 0) / 1000));
  return {
    index: quantity(e.index),
    first_block: quantity(e.firstBlock),
    last_block: quantity(e.lastBlock),
    input_index_lower_bound: quantity(e.lower),
    input_index_upper_bound: quantity(e.upper),
    machine_hash: null,
    outputs_merkle_root: e.outputsRoot,
    outputs_merkle_proof: null,
    commitment: null,
    commitment_proof: null,
    claim_transaction_hash: e.claim?.claimTx ?? null,
    tournament_address: null,
    status: e.status,
    // A claim is staged only where the consensus has a staging period; the 2.2.0 Authority has none.
    staged_at_block: null,
    virtual_index: quantity(e.virtualIndex),
    created_at: at,
    updated_at: at,
  };
}

export function inputObject(ctx: RpcContext, input: V2Input): unknown {
  const application = getAddress(ctx.epochs.applicationState.application);
  const sender = getAddress(input.msgSender);
  const metadata = {
    chain_id: ctx.chainId,
    app_contract: application,
    msg_sender: sender,
    block_number: input.blockNumber,
    block_timestamp: input.timestamp,
    prev_randao: input.prevRandao,
    input_index: input.index,
  };
  const at = timeOf(input.timestamp);
  return {
    epoch_index: quantity(ctx.epochs.epochIndexOfBlock(input.blockNumber)),
    index: quantity(input.index),
    block_number: quantity(input.blockNumber),
    raw_data: encodeEvmAdvance({ metadata, payload: input.payload }),
    decoded_data: {
      chain_id: quantity(ctx.chainId),
      application_contract: application,
      sender,
      block_number: quantity(input.blockNumber),
      block_timestamp: quantity(input.timestamp),
      prev_randao: quantity(BigInt(input.prevRandao)),
      index: quantity(input.index),
      payload: input.payload,
    },
    status: STATUS[input.status],
    // The dapp's exception payload ("0x" when it gave none) for an EXCEPTION input, null otherwise.
    exception_data: input.status === "EXCEPTION" ? (input.exceptionPayload ?? "0x") : null,
    machine_hash: null,
    outputs_hash: input.outputsHash,
    transaction_hash: input.txHash,
    // Not yet known only while a record kept before log indices were is being read again
    // (V2Store.addLogIndex): 0 then, the node's unset number, as its schema allows no null here.
    log_index: quantity(input.logIndex ?? 0),
    // The same transaction under the name the 2.2.0 clients read.
    transaction_reference: input.txHash,
    created_at: at,
    updated_at: at,
  };
}

/** The epoch of the input an output or report belongs to, as read from the record (0 for one it does not hold). */
export function epochIndexOfInput(ctx: RpcContext, input: Pick<V2Input, "blockNumber"> | undefined): number {
  return input === undefined ? 0 : ctx.epochs.epochIndexOfBlock(input.blockNumber);
}

/** An output's proof siblings once its epoch (`epochIndex`, its input's) is claimed, else null. */
export function proofOf(ctx: RpcContext, output: V2Output, epochIndex: number): Hex[] | null {
  const { store } = ctx;
  const claimed = store.claimOf(epochIndex) !== undefined ? store.epochInputs(epochIndex) : null;
  return claimed === null ? null : store.siblingsAt(output.index, store.outputsBefore(claimed.upper));
}

export function outputObject(ctx: RpcContext, output: V2Output): unknown {
  const input = ctx.store.getInput(output.inputIndex);
  const epochIndex = epochIndexOfInput(ctx, input);
  const at = timeOf(input?.timestamp ?? 0);
  const decoded = decodeOutput(output.raw);
  return {
    epoch_index: quantity(epochIndex),
    input_index: quantity(output.inputIndex),
    index: quantity(output.index),
    raw_data: output.raw,
    decoded_data: decoded,
    hash: output.hash,
    // A proof exists once the epoch's claim is on chain: against the tree as it stood at the epoch's end.
    output_hashes_siblings: proofOf(ctx, output, epochIndex),
    execution_transaction_hash: null,
    created_at: at,
    updated_at: at,
  };
}

export function reportObject(ctx: RpcContext, report: V2Report): unknown {
  const input = ctx.store.getInput(report.inputIndex);
  const at = timeOf(input?.timestamp ?? 0);
  return {
    epoch_index: quantity(epochIndexOfInput(ctx, input)),
    input_index: quantity(report.inputIndex),
    index: quantity(report.index),
    raw_data: report.payload,
    created_at: at,
    updated_at: at,
  };
}

/** The output's call decoded as the node decodes it; null when it is none of the three. */
function decodeOutput(raw: Hex): Record<string, unknown> | null {
  try {
    const decoded = decodeFunctionData({ abi: v2Abi("Outputs"), data: raw });
    switch (decoded.functionName) {
      case "Notice": {
        const [payload] = decoded.args as readonly [Hex];
        return { type: "Notice", payload };
      }
      case "Voucher": {
        const [destination, value, payload] = decoded.args as readonly [Address, bigint, Hex];
        return { type: "Voucher", destination: getAddress(destination), value: quantity(value), payload };
      }
      case "DelegateCallVoucher": {
        const [destination, payload] = decoded.args as readonly [Address, Hex];
        return { type: "DelegateCallVoucher", destination: getAddress(destination), payload };
      }
      default:
        return null;
    }
  } catch {
    return null;
  }
}
