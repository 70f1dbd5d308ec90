/**
 * The shapes of an input kind and of a query type. Each kind/type is one file that calls
 * `defineInput`/`defineQuery`; the registries map names to them. The helpers own the parse and
 * the role check so every kind rejects in the same words.
 */
import type { Address } from "viem";
import { z } from "zod";
import { isAddress } from "../common/address.ts";
import type { InputKind, NoticeEvent, QueryType, Role } from "../common/wire.ts";
import type { Store } from "./db/store.ts";
import { describeIssue, InputRejection, QueryRejection } from "./errors.ts";
import type { Roles } from "./roles.ts";

/** What an advance handler may know about its input: nothing from the wall clock. */
export interface InputMetadata {
  index: number;
  /**
   * The position inside a `batch` input when this is one of its items, else null. An item is judged as
   * if its sender had sent it alone; only the ids of what it creates differ (DECISIONS.md section 3).
   */
  item: number | null;
  /** Lower-case msg_sender. */
  sender: Address;
  /** Block time in seconds: the only "now" on the advance path. */
  timestamp: number;
  blockNumber: number;
  /**
   * The chain and application signed consents are bound to (common/consent.ts): a v2 input's own
   * metadata, else the dapp's configuration (DAPP_CHAIN_ID, DAPP_ADDRESS); null when neither names them.
   */
  consentDomain: { chainId: number; application: Address } | null;
}

export interface AdvanceContext {
  store: Store;
  roles: Roles;
  input: InputMetadata;
}

/**
 * Who may send a kind: a role, or "owner": the owner itself, or an operator relaying for the owner
 * named in `params.owner`. A role rule may also let the owner named in `params.owner` send for itself
 * when `ownerMay` says the params prove what they claim (an attestation with its signed claims).
 */
export type SenderRule =
  | { role: Role; ownerMay?: (params: unknown) => boolean }
  /**
   * The owner, or an operator naming it in `params.owner`. With `signedConsent`, params that carry the
   * owner's signed `consent` may come from anyone: the kind must check that signature before it writes.
   */
  | { owner: true; signedConsent?: true }
  /** Who may send it depends on the row it acts on: the kind's apply checks the sender itself. */
  | { byRow: true };

export interface InputModule {
  readonly kind: InputKind;
  readonly sender: SenderRule;
  /**
   * Parses the params and checks the sender, throwing an InputRejection; returns the write, which the
   * dispatcher runs inside the input's transaction and which returns the notices to send after commit.
   */
  plan(ctx: AdvanceContext, rawParams: unknown): () => NoticeEvent[];
}

interface InputDefinition<S extends z.ZodType> {
  kind: InputKind;
  params: S;
  sender: SenderRule;
  /** `actor` is the sender, or for owner kinds the owner it acts for. */
  apply(ctx: AdvanceContext, params: z.output<S>, actor: Address): NoticeEvent[];
}

export function defineInput<S extends z.ZodType>(def: InputDefinition<S>): InputModule {
  return {
    kind: def.kind,
    sender: def.sender,
    plan(ctx, rawParams) {
      const parsed = def.params.safeParse(rawParams, { reportInput: true });
      if (!parsed.success) throw new InputRejection("INVALID_PARAMS", inputIssueMessage(parsed.error.issues));
      const params = parsed.data;
      const actor = authorize(ctx, def.sender, params);
      return () => def.apply(ctx, params, actor);
    },
  };
}

function authorize(ctx: AdvanceContext, rule: SenderRule, params: unknown): Address {
  const { sender } = ctx.input;
  if ("byRow" in rule) return sender;
  if ("role" in rule) {
    if (ctx.roles.has(sender, rule.role)) return sender;
    if (rule.ownerMay?.(params) === true) {
      const owner = relayedOwner(params);
      if (owner === sender) return sender;
      throw new InputRejection("UNAUTHORIZED_SENDER", `sender ${sender} does not hold the ${rule.role} role and is not the owner ${String(owner)} it names`);
    }
    throw new InputRejection("UNAUTHORIZED_SENDER", `sender ${sender} does not hold the ${rule.role} role`);
  }
  const owner = relayedOwner(params);
  if (rule.signedConsent === true && hasConsent(params) && owner !== undefined) return owner;
  if (owner === undefined || owner === sender) return sender;
  if (!ctx.roles.has(sender, "operator")) {
    throw new InputRejection("UNAUTHORIZED_SENDER", `sender ${sender} may not act for owner ${owner}: operator role needed`);
  }
  return owner;
}

function hasConsent(params: unknown): boolean {
  return typeof params === "object" && params !== null && "consent" in params && params.consent !== undefined;
}

function relayedOwner(params: unknown): Address | undefined {
  if (typeof params !== "object" || params === null || !("owner" in params)) return undefined;
  const owner = params.owner;
  return isAddress(owner) ? owner : undefined;
}

// ---- queries ----

export interface QueryContext {
  store: Store;
}

export interface QueryModule {
  readonly type: QueryType;
  /** Parses the params and reads, throwing a QueryRejection with the exact wire message. */
  run(ctx: QueryContext, rawParams: unknown): unknown;
}

interface QueryDefinition<S extends z.ZodType, R> {
  type: QueryType;
  params: S;
  read(ctx: QueryContext, params: z.output<S>): R;
}

export function defineQuery<S extends z.ZodType, R>(def: QueryDefinition<S, R>): QueryModule {
  return {
    type: def.type,
    run(ctx, rawParams) {
      const parsed = def.params.safeParse(rawParams, { reportInput: true });
      if (!parsed.success) throw new QueryRejection(queryIssueMessage(parsed.error.issues));
      return def.read(ctx, parsed.data);
    },
  };
}

function isMissing(issue: z.core.$ZodIssue): boolean {
  // An absent enum or literal field (`algorithm`, `role`) is reported by zod as invalid_value, not invalid_type.
  return (issue.code === "invalid_type" || issue.code === "invalid_value") && issue.input === undefined;
}

/** Names the field: `missing required parameter: <path>` or `<path>: <problem>`. */
function inputIssueMessage(issues: readonly z.core.$ZodIssue[]): string {
  const first = issues[0];
  if (!first) return "invalid params";
  return isMissing(first) ? `missing required parameter: ${first.path.map(String).join(".")}` : describeIssue(first);
}

function queryIssueMessage(issues: readonly z.core.$ZodIssue[]): string {
  const missing = issues.find((i) => isMissing(i) && i.path.length === 1);
  if (missing) return `missing required parameter: ${String(missing.path[0])}`;
  const first = issues[0];
  return `invalid query: ${first ? describeIssue(first) : "invalid params"}`;
}

/** The time a query answers for (`at`, unix seconds), shared by the queries that take one. */
export const atParam = z.int().min(0).max(2 ** 40).optional();

/** Without `at`, "now" is the rollup's own clock: the latest input's block time (the dapp has no other). */
export function queryTime(store: Store, at: number | undefined): number {
  return at ?? store.meta()?.latestTimestamp ?? 0;
}

/** Pagination shared by the list queries: creation order, 1..1000 items (default 1000), from offset. */
export const pageParams = {
  limit: z.int().min(1).max(1000).default(1000),
  offset: z.int().min(0).default(0),
};

/**
 * Stored bytes one answer may carry. A page of 1,000 of the largest attestations (16 KiB of sealed data
 * each) would neither fit the Cartesi machine's memory once hex-encoded twice nor fit one report (the v1
 * rollup HTTP server takes at most 2 MiB per output, and hex doubles the data), so a page ends early past
 * this budget; it always holds at least one item, and a client continues at `offset + items returned`.
 */
export const PAGE_BYTE_BUDGET = 512 * 1024;

/** The leading rows whose sizes add up to at most `PAGE_BYTE_BUDGET` (and at least the first row). */
export function withinPageBudget<Row>(rows: readonly Row[], sizeOf: (row: Row) => number): Row[] {
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    bytes += sizeOf(rows[i] as Row);
    if (i > 0 && bytes > PAGE_BYTE_BUDGET) return rows.slice(0, i);
  }
  return rows.slice();
}
