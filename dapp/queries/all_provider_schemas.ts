import { z } from "zod";
import { defineQuery, pageParams } from "../define.ts";
import { schemaSummary } from "../views.ts";

export default defineQuery({
  type: "all_provider_schemas",
  params: z.object({ ...pageParams, include_description: z.boolean().default(false) }),
  read: ({ store }, p) => store.schemaPage(p.limit, p.offset).map((row) => schemaSummary(row, p.include_description)),
});
