import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { atParam, defineQuery, pageParams, queryTime, withinPageBudget } from "../define.ts";
import { attestationListItem } from "../views.ts";
import { halfLifeOf } from "../validity.ts";

export default defineQuery({
  type: "attestations_by_owner",
  params: z.object({ owner: addressSchema, at: atParam, ...pageParams }),
  read({ store }, p) {
    const at = queryTime(store, p.at);
    const rows = withinPageBudget(store.attestationsByOwner(hexToBuffer(p.owner), p.limit, p.offset), (row) => (row.encryptedData.length - 2) / 2);
    return rows.map((row) => attestationListItem(row, { at, halfLife: halfLifeOf(store, row.schemaId) }));
  },
});
