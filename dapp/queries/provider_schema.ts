import { z } from "zod";
import { idKey } from "../db/bytes.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { schemaDetail } from "../views.ts";

/**
 * One schema, by its id or (an extension) by its short index, the number a compact batch names it by;
 * `schema_id` wins when both are given. `include_index: true` adds `schema_index` to the answer.
 */
export default defineQuery({
  type: "provider_schema",
  params: z.object({
    schema_id: z.string().optional(),
    schema_index: z.int().min(0).max(2 ** 32).optional(),
    include_description: z.boolean().default(false),
    include_index: z.boolean().default(false),
  }),
  read({ store }, p) {
    const extras = { description: p.include_description, index: p.include_index };
    if (p.schema_id === undefined) {
      if (p.schema_index === undefined) throw new QueryRejection("missing required parameter: schema_id");
      const row = store.schemaByIndex(p.schema_index);
      if (!row) throw new QueryRejection(`schema not found: index ${p.schema_index}`);
      return schemaDetail(row, extras);
    }
    const key = idKey(p.schema_id);
    const row = key && store.schemaById(key);
    if (!row) throw new QueryRejection(`schema not found: ${p.schema_id}`);
    return schemaDetail(row, extras);
  },
});
