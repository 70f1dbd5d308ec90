import { z } from "zod";
import { idKey } from "../db/bytes.ts";
import { atParam, defineQuery, queryTime } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { attestationView } from "../views.ts";
import { halfLifeOf } from "../validity.ts";

export default defineQuery({
  type: "attestation",
  params: z.object({ attestation_id: z.string(), at: atParam }),
  read({ store }, p) {
    const key = idKey(p.attestation_id);
    const row = key && store.attestationById(key);
    if (!row) throw new QueryRejection(`attestation not found: ${p.attestation_id}`);
    return attestationView(row, { at: queryTime(store, p.at), halfLife: halfLifeOf(store, row.schemaId) });
  },
});
