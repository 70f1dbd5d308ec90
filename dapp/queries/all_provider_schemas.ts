import { z } from "zod";
import { defineQuery, pageParams, withinPageBudget } from "../define.ts";
import { schemaSummary } from "../views.ts";

export default defineQuery({
  type: "all_provider_schemas",
  params: z.object({ ...pageParams, include_description: z.boolean().default(false), include_index: z.boolean().default(false) }),
  read: ({ store }, p) =>
    withinPageBudget(store.schemaPage(p.limit, p.offset), (row) => row.bucketDefinitions.length + row.description.length).map((row) =>
      schemaSummary(row, { description: p.include_description, index: p.include_index }),
    ),
});
