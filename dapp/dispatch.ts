/**
 * The dapp's two entry points. Advance: decode → find the kind → parse and check the sender → one
 * transaction that also records the input → notices after commit, or a report and "reject".
 * Inspect: decode → find the query → read → one report, or the exact rejection text on /exception.
 */
import type { Address, Hex } from "viem";
import { normalizeAddress } from "../common/address.ts";
import { messageOf } from "../common/errors.ts";
import { hexToUtf8, isHex, jsonToHex, utf8ToHex } from "../common/hex.ts";
import type { Envelope } from "../common/wire.ts";
import type { DappDatabase } from "./db/open.ts";
import { createStore, type Store } from "./db/store.ts";
import type { AdvanceContext, InputMetadata } from "./define.ts";
import { InputRejection, QueryRejection, rejectionReport } from "./errors.ts";
import { INPUTS } from "./inputs/index.ts";
import { QUERIES } from "./queries/index.ts";
import { createRoles } from "./roles.ts";

/** The advance request as the rollup HTTP server hands it out (timestamp in seconds). */
export interface AdvanceRequest {
  metadata: { msg_sender: string; input_index: number; block_number: number; timestamp: number };
  payload: string;
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
      applied = row ? { index: row.lastInputIndex, status: row.lastStatus, outputs: parseOutputs(row.lastOutputs) } : undefined;
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
        const send = previous.status === "accept" ? outputs.notice : outputs.report;
        for (const payload of previous.outputs) await deliver(previous.status === "accept" ? "notice" : "report", () => send(payload));
        log(`input ${index}: already applied, outputs sent again (${previous.status})`);
        return previous.status;
      }
      // Older inputs were finished long ago; only the latest status is kept, and almost all are accepted.
      log(`input ${index}: already applied, skipped`);
      return "accept";
    }

    const input: InputMetadata = {
      index,
      sender: normalizeAddress(metadata.msg_sender),
      timestamp: metadata.timestamp,
      blockNumber: metadata.block_number,
    };
    let kind = "-";
    let notices: Hex[];
    try {
      const envelope = decodeInput(request.payload);
      const module = Object.hasOwn(INPUTS, envelope.type) ? INPUTS[envelope.type as keyof typeof INPUTS] : undefined;
      if (!module) throw new InputRejection("UNKNOWN_KIND", `unknown input kind: ${envelope.type}`);
      // Only a known kind reaches the log: the raw type is sender-controlled text.
      kind = module.kind;
      const ctx: AdvanceContext = { store, roles, input };
      const write = module.plan(ctx, envelope.params);
      notices = store.transaction(() => {
        const emitted = write().map((notice) => jsonToHex(notice));
        store.recordInput(index, input.timestamp, "accept", emitted);
        return emitted;
      });
      applied = { index, status: "accept", outputs: notices };
    } catch (error) {
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

    for (const notice of notices) await deliver("notice", () => outputs.notice(notice));
    log(`input ${index} ${kind}: accept`);
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

interface Applied {
  index: number;
  status: AdvanceStatus;
  /** Hex payloads the input produced: its notices when accepted, its report when rejected. */
  outputs: Hex[];
}

function parseOutputs(text: string): Hex[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((item): item is Hex => typeof item === "string" && isHex(item)) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** hex → UTF-8 → JSON → {type, params}; params may be left out (an empty object). */
function decodeInput(payload: string): Envelope {
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
