/**
 * The dapp's two entry points. Advance: decode → find the kind → parse and check the sender → one
 * transaction that also records the input → notices after commit, or a report and "reject".
 * Inspect: decode → find the query → read → one report, or the exact rejection text on /exception.
 */
import type { Address, Hex } from "viem";
import { normalizeAddress } from "../common/address.ts";
import { batchNoticeOf, encodeBatchNotice, type MadeAttestation } from "../common/attestation-batch.ts";
import { messageOf } from "../common/errors.ts";
import { hexToBytes, hexToUtf8, isHex, jsonToHex, utf8ToHex } from "../common/hex.ts";
import { BATCH_KIND, COMPACT_BATCH_KIND, type Envelope, type NoticeEvent } from "../common/wire.ts";
import { hexToBuffer } from "./db/bytes.ts";
import type { DappDatabase } from "./db/open.ts";
import { createStore, type Store } from "./db/store.ts";
import type { AdvanceContext, InputMetadata } from "./define.ts";
import { InputRejection, QueryRejection, rejectionReport } from "./errors.ts";
import { applyBatch, BatchRejection, type BatchOutcome } from "./inputs/batch.ts";
import { applyCompactBatch } from "./inputs/compact_batch.ts";
import { INPUTS } from "./inputs/index.ts";
import { QUERIES } from "./queries/index.ts";
import { createRoles } from "./roles.ts";

/**
 * The advance request as the rollup HTTP server hands it out. A v1 node names the block's time
 * `timestamp`; a v2 node `block_timestamp`, beside `chain_id`, `app_contract` and `prev_randao`, which the
 * dapp does not use. Both in seconds.
 */
export interface AdvanceRequest {
  metadata: V1AdvanceMetadata | V2AdvanceMetadata;
  payload: string;
}

export interface V1AdvanceMetadata {
  msg_sender: string;
  input_index: number;
  block_number: number;
  timestamp: number;
}

export interface V2AdvanceMetadata {
  chain_id: number;
  app_contract: string;
  msg_sender: string;
  block_number: number;
  block_timestamp: number;
  prev_randao: string;
  input_index: number;
}

/**
 * The chain and application an owner's signature must be bound to: a v2 node says them in every input's
 * metadata; under v1 they come from the dapp's configuration.
 */
function consentDomainOf(metadata: AdvanceRequest["metadata"], configured: DispatcherOptions["application"]): InputMetadata["consentDomain"] {
  if ("app_contract" in metadata) return { chainId: metadata.chain_id, application: normalizeAddress(metadata.app_contract) };
  return configured === undefined ? null : { chainId: configured.chainId, application: configured.address.toLowerCase() as Address };
}

/** The block's time in seconds, under either node's name for it. */
export function blockTimestamp(metadata: AdvanceRequest["metadata"]): number {
  return "timestamp" in metadata ? metadata.timestamp : metadata.block_timestamp;
}

export interface InspectRequest {
  payload: string;
}

export type AdvanceStatus = "accept" | "reject";

/** Where the dapp's outputs go: the rollup HTTP server's /notice, /report and /exception. */
export interface RollupOutputs {
  notice(payload: Hex): Promise<unknown>;
  report(payload: Hex): Promise<unknown>;
  exception(payload: Hex): Promise<unknown>;
}

export interface DispatcherOptions {
  db: DappDatabase;
  /** DAPP_ADMINS: permanent admins. */
  admins: readonly Address[];
  outputs: RollupOutputs;
  /** One line per processed input; nothing secret is passed. */
  log?: (line: string) => void;
  /** Where this dapp runs (DAPP_CHAIN_ID, DAPP_ADDRESS): what a v1 input's metadata does not say. */
  application?: { chainId: number; address: Address };
}

export interface Dispatcher {
  store: Store;
  advance(request: AdvanceRequest): Promise<AdvanceStatus>;
  inspect(request: InspectRequest): Promise<void>;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { outputs } = options;
  const log = options.log ?? (() => {});
  const store = createStore(options.db);
  const roles = createRoles(store, options.admins);

  // This process is the database's only writer: the last applied input is read once, then tracked.
  let applied: Applied | undefined | null = null;
  function lastApplied(): Applied | undefined {
    if (applied === null) {
      const row = store.meta();
      applied = row ? { index: row.lastInputIndex, status: row.lastStatus, outputs: parseOutputs(row.lastOutputs, row.lastStatus) } : undefined;
    }
    return applied;
  }

  async function advance(request: AdvanceRequest): Promise<AdvanceStatus> {
    const { metadata } = request;
    const index = metadata.input_index;
    const previous = lastApplied();
    if (previous && index <= previous.index) {
      if (index === previous.index) {
        // Committed, but the node never saw our /finish (the dapp died in between) and discarded the
        // outputs: send the same ones again and answer as then, without applying it twice.
        for (const output of previous.outputs) await deliver(output.kind, () => outputs[output.kind](output.payload));
        log(`input ${index}: already applied, outputs sent again (${previous.status})`);
        return previous.status;
      }
      // Older inputs were finished long ago; only the latest status is kept, and almost all are accepted.
      log(`input ${index}: already applied, skipped`);
      return "accept";
    }

    const input: InputMetadata = {
      index,
      item: null,
      sender: normalizeAddress(metadata.msg_sender),
      timestamp: blockTimestamp(metadata),
      blockNumber: metadata.block_number,
      consentDomain: consentDomainOf(metadata, options.application),
    };
    let kind = "-";
    let sent: Output[];
    let summary = "";
    try {
      const envelope = decodeInput(request.payload);
      const ctx: AdvanceContext = { store, roles, input };
      let write: () => Output[];
      const batchOutputs = (outcome: BatchOutcome): Output[] => {
        summary = ` (${outcome.applied} of ${outcome.items} items applied)`;
        const sent = outcome.outputs.map((o): Output => ("notice" in o ? noticeOutput(o.notice) : { kind: "report", payload: jsonToHex(o.report) }));
        return withBatchNotice(store, input, sent, outcome.outputs.flatMap((o) => ("notice" in o ? [{ notice: o.notice, item: o.item }] : [])));
      };
      if ("compact" in envelope) {
        kind = COMPACT_BATCH_KIND;
        write = () => batchOutputs(applyCompactBatch(ctx, envelope.compact));
      } else if (envelope.type === BATCH_KIND) {
        kind = BATCH_KIND;
        write = () => batchOutputs(applyBatch(ctx, envelope.params));
      } else {
        const module = Object.hasOwn(INPUTS, envelope.type) ? INPUTS[envelope.type as keyof typeof INPUTS] : undefined;
        if (!module) throw new InputRejection("UNKNOWN_KIND", `unknown input kind: ${envelope.type}`);
        // Only a known kind reaches the log: the raw type is sender-controlled text.
        kind = module.kind;
        const planned = module.plan(ctx, envelope.params);
        write = () => {
          const notices = planned();
          return withBatchNotice(store, input, notices.map(noticeOutput), notices.map((notice) => ({ notice, item: null })));
        };
      }
      sent = store.transaction(() => {
        const emitted = write();
        store.recordInput(index, input.timestamp, "accept", emitted.map(persisted));
        return emitted;
      });
      applied = { index, status: "accept", outputs: sent };
    } catch (error) {
      if (error instanceof BatchRejection) {
        // No item applied: rejected like any input (nothing recorded), each item's report sent.
        log(`input ${index} ${kind}: reject, none of ${error.reports.length} items applied`);
        for (const report of error.reports) await deliver("report", () => outputs.report(jsonToHex(report)));
        return "reject";
      }
      const rejection =
        error instanceof InputRejection
          ? error
          : new InputRejection("INTERNAL_ERROR", `internal error: ${messageOf(error)}`, undefined, { cause: error });
      const report = jsonToHex(rejectionReport(rejection.code, rejection.message));
      // Nothing is recorded, bookkeeping included: inside the Cartesi machine the node reverts the whole
      // machine on a rejected input, so the host must end in the same state (DECISIONS.md section 2). The
      // same input on the same state is rejected again with the same report, so a redelivery needs no record.
      log(`input ${index} ${kind}: reject ${rejection.code}`);
      await deliver("report", () => outputs.report(report));
      return "reject";
    }

    for (const output of sent) await deliver(output.kind, () => outputs[output.kind](output.payload));
    log(`input ${index} ${kind}: accept${summary}`);
    return "accept";
  }

  async function inspect(request: InspectRequest): Promise<void> {
    let result: unknown;
    try {
      const envelope = decodeQuery(request.payload);
      const module = Object.hasOwn(QUERIES, envelope.type) ? QUERIES[envelope.type as keyof typeof QUERIES] : undefined;
      if (!module) throw new QueryRejection(`unknown query type: ${envelope.type}`);
      result = module.run({ store }, envelope.params);
    } catch (error) {
      const message = error instanceof QueryRejection ? error.message : `internal error: ${messageOf(error)}`;
      await deliver("exception", () => outputs.exception(utf8ToHex(message)));
      return;
    }
    await deliver("report", () => outputs.report(jsonToHex(result)));
  }

  /**
   * An output that fails to reach the server is logged, not thrown: the input is already committed,
   * and throwing would make deroll finish it as "reject".
   */
  async function deliver(what: string, send: () => Promise<unknown>): Promise<void> {
    try {
      await send();
    } catch (error) {
      log(`could not send a ${what}: ${messageOf(error)}`);
    }
  }

  return { store, advance, inspect };
}

/** One output of an input, in the order it was sent. */
interface Output {
  kind: "notice" | "report";
  payload: Hex;
}

interface Applied {
  index: number;
  status: AdvanceStatus;
  /** What the input sent: its notices, and a batch's item reports between them. */
  outputs: Output[];
}

function noticeOutput(notice: NoticeEvent): Output {
  return { kind: "notice", payload: jsonToHex(notice) };
}

/**
 * The input's outputs and, after them, its batch notice (common/attestation-batch.ts) when it made or
 * revoked attestations a contract can hold: the JSON notices keep their places, and so their proofs. Each
 * kind says whether its schema is unique per account, which the JSON notice does not: the schema's row does
 * (read inside the input's transaction, so a schema registered by the same batch is seen).
 */
function withBatchNotice(store: Store, input: InputMetadata, sent: Output[], notices: { notice: NoticeEvent; item: number | null }[]): Output[] {
  const made: MadeAttestation[] = [];
  const revoked: Extract<NoticeEvent, { event: "attestation:revoked" }>["data"][] = [];
  for (const { notice, item } of notices) {
    if (notice.event === "attestation:created") made.push({ item, data: notice.data });
    else if (notice.event === "attestation:revoked") revoked.push(notice.data);
  }
  const uniquePerAccount = (schemaId: Hex): boolean => (store.schemaById(hexToBuffer(schemaId))?.accountIdField ?? null) !== null;
  const batch = batchNoticeOf({ index: input.index, timestamp: input.timestamp, sender: input.sender }, made, revoked, uniquePerAccount);
  return batch === undefined ? sent : [...sent, { kind: "notice", payload: encodeBatchNotice(batch) }];
}

/** meta.last_outputs keeps a notice as its hex string (the form before batches) and a report as {"report": hex}. */
function persisted(output: Output): string | { report: Hex } {
  return output.kind === "notice" ? output.payload : { report: output.payload };
}

function parseOutputs(text: string, status: AdvanceStatus): Output[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) return [];
  const out: Output[] = [];
  for (const entry of value as unknown[]) {
    // A bare string of a rejected input is its report (recorded by versions that kept rejections).
    if (typeof entry === "string" && isHex(entry)) out.push({ kind: status === "accept" ? "notice" : "report", payload: entry });
    else if (typeof entry === "object" && entry !== null && "report" in entry && typeof entry.report === "string" && isHex(entry.report)) {
      out.push({ kind: "report", payload: entry.report });
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A compact batch by its first byte (0xC1: no UTF-8 text, so no JSON, starts with it); anything else is
 * hex → UTF-8 → JSON → {type, params}, params possibly left out (an empty object).
 */
function decodeInput(payload: string): Envelope | { compact: Uint8Array } {
  // The marker (common/compact-batch.ts) read off the hex text.
  if (/^0x[cC]1/.test(payload) && isHex(payload)) return { compact: hexToBytes(payload) };
  let text: string;
  try {
    text = hexToUtf8(payload);
  } catch (error) {
    const reason = messageOf(error);
    throw new InputRejection("INVALID_PAYLOAD", reason.startsWith("payload") ? reason : `payload: ${reason}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputRejection("INVALID_PAYLOAD", "payload: not JSON");
  }
  const envelope = toEnvelope(value);
  if (typeof envelope === "string") throw new InputRejection("INVALID_PAYLOAD", `payload: ${envelope}`);
  return envelope;
}

/** hex → UTF-8 → JSON, also when the text is still percent-encoded (a GET path passed through as is). */
function decodeQuery(payload: string): Envelope {
  let text: string;
  try {
    text = hexToUtf8(payload);
  } catch (error) {
    throw new QueryRejection(`invalid query: ${messageOf(error)}`);
  }
  const value = parseJson(text) ?? parseJson(percentDecoded(text)) ?? parseBeforeQueryString(text);
  if (value === undefined) throw new QueryRejection("invalid query: not JSON");
  const envelope = toEnvelope(value);
  if (typeof envelope === "string") throw new QueryRejection(`invalid query: ${envelope}`);
  return envelope;
}

function toEnvelope(value: unknown): Envelope | string {
  if (!isRecord(value) || typeof value.type !== "string") return "expected a JSON object {type, params}";
  const params = value.params ?? {};
  if (!isRecord(params)) return "params must be a JSON object";
  return { type: value.type, params };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A v1 node hands the dapp `GET /inspect/<path>?<query>` as the decoded path, `?` and the query as sent
 * (DECISIONS.md section 12): the query is the JSON before a `?`. A decoded path may hold a `?` itself, so
 * the first prefix that parses wins.
 */
function parseBeforeQueryString(text: string): unknown {
  for (let at = text.indexOf("?"); at !== -1; at = text.indexOf("?", at + 1)) {
    const head = text.slice(0, at);
    const value = parseJson(head) ?? parseJson(percentDecoded(head));
    if (value !== undefined) return value;
  }
  return undefined;
}

function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
