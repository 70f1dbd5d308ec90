import { z } from "zod";
import { idKey } from "../db/bytes.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { schemaDetail } from "../views.ts";

export default defineQuery({
  type: "provider_schema",
  params: z.object({ schema_id: z.string(), include_description: z.boolean().default(false) }),
  read({ store }, p) {
    const key = idKey(p.schema_id);
    const row = key && store.schemaById(key);
    if (!row) throw new QueryRejection(`schema not found: ${p.schema_id}`);
    return schemaDetail(row, p.include_description);
  },
});
