import { z } from "zod";
import { canonicalJson } from "../../common/canonical.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { PROOF_KINDS, proofFieldProblem } from "../../common/tls-claim.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { bucketDefinitions, LIMITS, shortText } from "./fields.ts";

export const params = z.object({
  provider: shortText,
  flowType: shortText,
  domain: shortText,
  bucketDefinitions,
  dataKeys: z.array(z.string().min(1).max(LIMITS.shortText)).max(LIMITS.dataKeys),
  freshnessHalfLife: z.number().positive(),
  name: shortText.optional(),
  description: z.string().max(LIMITS.description).optional(),
  proof: z.enum(PROOF_KINDS).optional(),
}).superRefine((p, ctx) => {
  if (p.proof !== "attestor") return;
  const fields = Object.keys(p.bucketDefinitions);
  if (fields.length === 0) ctx.addIssue({ code: "custom", path: ["bucketDefinitions"], message: "a schema with proof \"attestor\" needs a bucket definition" });
  for (const field of fields) {
    const problem = proofFieldProblem(field);
    if (problem !== undefined) ctx.addIssue({ code: "custom", path: ["bucketDefinitions", field], message: problem });
  }
});

/** Registers a provider schema; identical content is already registered, so it is accepted as a no-op. */
export default defineInput({
  kind: "register_schema",
  params,
  sender: { role: "admin" },
  apply({ store, input }, p) {
    const schemaId = schemaIdOf(p);
    const key = hexToBuffer(schemaId);
    if (store.schemaById(key)) return [];
    store.insertSchema({
      inputIndex: input.index,
      itemIndex: input.item,
      schemaId: key,
      name: p.name ?? `${p.domain}/${p.flowType}`,
      description: p.description ?? "",
      providerType: p.provider,
      flowType: p.flowType,
      domain: p.domain,
      bucketDefinitions: canonicalJson(p.bucketDefinitions),
      dataKeys: JSON.stringify(p.dataKeys),
      freshnessHalfLife: p.freshnessHalfLife,
      createdAt: input.timestamp,
      proof: p.proof ?? "none",
    });
    return [{ event: "schema:registered", data: { schema_id: schemaId } }];
  },
});
