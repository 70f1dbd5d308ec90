/**
 * `batch` (DECISIONS.md section 2): up to 256 inputs of the other kinds in one, from any sender. Each item
 * is checked and applied on its own, in order, as if the sender had sent it alone (same roles, same
 * timestamp), inside a savepoint of the input's transaction: an item that fails is undone alone and
 * reports `{"item": i, "error": {code, message}}`; later items see what earlier ones applied (a grant,
 * then its revoke). The input is accepted when at least one item applied, rejected (no trace) otherwise.
 */
import { z } from "zod";
import { messageOf } from "../../common/errors.ts";
import { BATCH_KIND, BATCH_MAX_ITEMS, type BatchItemErrorReport, type NoticeEvent } from "../../common/wire.ts";
import type { AdvanceContext } from "../define.ts";
import { describeIssue, InputRejection } from "../errors.ts";
import { INPUTS } from "./index.ts";

/** Items are checked one by one below: here only that there is a list of 1 to 256 of them. */
const params = z.object({
  items: z.array(z.unknown()).min(1, "a batch holds at least one item").max(BATCH_MAX_ITEMS, `a batch holds at most ${BATCH_MAX_ITEMS} items`),
});

/** What a batch input sends, in item order: the notices of applied items (with the item) and the reports of failed ones. */
export type BatchOutput = { notice: NoticeEvent; item: number } | { report: BatchItemErrorReport };

export interface BatchOutcome {
  outputs: BatchOutput[];
  applied: number;
  items: number;
}

/** A batch none of whose items applied: rejected whole, with each item's report. */
export class BatchRejection extends Error {
  override readonly name = "BatchRejection";
  constructor(readonly reports: BatchItemErrorReport[]) {
    super(`none of the batch's ${reports.length} items applied`);
  }
}

/**
 * Applies the items; runs inside the input's transaction (each item in its own savepoint through
 * `store.transaction`). Throws an InputRejection when the batch itself is malformed, a BatchRejection when
 * no item applied.
 */
export function applyBatch(ctx: AdvanceContext, rawParams: unknown): BatchOutcome {
  const parsed = params.safeParse(rawParams);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new InputRejection("INVALID_PARAMS", first === undefined ? "invalid batch" : describeIssue(first));
  }
  const { items } = parsed.data;
  return applyEach(ctx, items.length, (item) => applyItem(ctx, items[item], item));
}

/**
 * Applies items 0..count-1 in order, each through `apply` in its own savepoint (`store.transaction`):
 * a `batch` and a compact batch (compact_batch.ts) alike. Throws a BatchRejection when none applied.
 */
export function applyEach(ctx: AdvanceContext, count: number, apply: (item: number) => NoticeEvent[]): BatchOutcome {
  const outputs: BatchOutput[] = [];
  const reports: BatchItemErrorReport[] = [];
  let applied = 0;
  for (let item = 0; item < count; item++) {
    try {
      const notices = ctx.store.transaction(() => apply(item));
      applied += 1;
      for (const notice of notices) outputs.push({ notice, item });
    } catch (error) {
      const rejection =
        error instanceof InputRejection ? error : new InputRejection("INTERNAL_ERROR", `internal error: ${messageOf(error)}`, undefined, { cause: error });
      const report: BatchItemErrorReport = { item, error: { code: rejection.code, message: rejection.message } };
      reports.push(report);
      outputs.push({ report });
    }
  }
  if (applied === 0) throw new BatchRejection(reports);
  return { outputs, applied, items: count };
}

/** One `{type, params}` item, judged as if its sender had sent it alone (only its ids know its position). */
export function applyItem(ctx: AdvanceContext, raw: unknown, item: number): NoticeEvent[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || typeof (raw as { type?: unknown }).type !== "string") {
    throw new InputRejection("INVALID_PARAMS", "expected an item {type, params}");
  }
  const { type, params: itemParams = {} } = raw as { type: string; params?: unknown };
  if (type === BATCH_KIND) throw new InputRejection("INVALID_PARAMS", "a batch cannot hold a batch");
  const module = Object.hasOwn(INPUTS, type) ? INPUTS[type as keyof typeof INPUTS] : undefined;
  if (module === undefined) throw new InputRejection("UNKNOWN_KIND", `unknown input kind: ${type}`);
  if (typeof itemParams !== "object" || itemParams === null || Array.isArray(itemParams)) {
    throw new InputRejection("INVALID_PARAMS", "params must be a JSON object");
  }
  return module.plan({ ...ctx, input: { ...ctx.input, item } }, itemParams)();
}
