import { z } from "zod";
import { idKey } from "../db/bytes.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { attestationView } from "../views.ts";

export default defineQuery({
  type: "attestation",
  params: z.object({ attestation_id: z.string() }),
  read({ store }, p) {
    const key = idKey(p.attestation_id);
    const row = key && store.attestationById(key);
    if (!row) throw new QueryRejection(`attestation not found: ${p.attestation_id}`);
    return attestationView(row);
  },
});
