/**
 * The compact batch (issue 37; common/compact-batch.ts, docs/dapp.md "compact batch"): a `batch` in a
 * versioned binary layout, recognised by its first byte. Its items are read one by one, each in its own
 * savepoint at its turn (a JSON item may register what a later one needs), into the `{type, params}` they
 * stand for, and applied exactly as the JSON batch of the same items would apply them: the same writes,
 * verdicts, reports, notices and ids. A payload that cannot be split is rejected whole (INVALID_PAYLOAD);
 * an item that cannot be read is rejected alone, its report naming its position and the byte.
 */
import type { Hex } from "viem";
import type { BucketDefinition } from "../../common/buckets.ts";
import { CompactProblem, compactItemToJson, compactSchemaOf, parseCompactBatch, type CompactContainer, type CompactSchema } from "../../common/compact-batch.ts";
import { bytesToHex } from "../../common/hex.ts";
import type { SchemaRow } from "../db/store.ts";
import type { AdvanceContext } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { applyEach, applyItem, type BatchOutcome } from "./batch.ts";

/** A compact problem as the input's or the item's rejection: the one place its codes reach the wire. */
function rejectionOf(problem: CompactProblem): InputRejection {
  return new InputRejection(problem.code, problem.message);
}

/** Schema rows never change once committed: what an item needs of one is worked out once per row object. */
const compactSchemas = new WeakMap<SchemaRow, CompactSchema>();

function compactSchemaOfRow(row: SchemaRow): CompactSchema {
  let schema = compactSchemas.get(row);
  if (schema === undefined) {
    schema = compactSchemaOf(row.id, bytesToHex(row.schemaId) as Hex, row.providerType, row.domain, JSON.parse(row.bucketDefinitions) as Record<string, BucketDefinition>);
    compactSchemas.set(row, schema);
  }
  return schema;
}

/** Applies a compact batch's items; runs inside the input's transaction, like `applyBatch`. */
export function applyCompactBatch(ctx: AdvanceContext, payload: Uint8Array): BatchOutcome {
  let container: CompactContainer;
  try {
    container = parseCompactBatch(payload);
  } catch (error) {
    if (error instanceof CompactProblem) throw rejectionOf(error);
    throw error;
  }
  const directory = (index: number): CompactSchema | undefined => {
    const row = ctx.store.schemaByIndex(index);
    return row === undefined ? undefined : compactSchemaOfRow(row);
  };
  return applyEach(ctx, container.items.length, (item) => {
    let raw: unknown;
    try {
      raw = compactItemToJson(container, item, directory);
    } catch (error) {
      if (error instanceof CompactProblem) throw rejectionOf(error);
      throw error;
    }
    return applyItem(ctx, raw, item);
  });
}
