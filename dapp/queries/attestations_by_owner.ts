import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineQuery, pageParams, withinPageBudget } from "../define.ts";
import { attestationListItem } from "../views.ts";

export default defineQuery({
  type: "attestations_by_owner",
  params: z.object({ owner: addressSchema, ...pageParams }),
  read: ({ store }, p) =>
    withinPageBudget(store.attestationsByOwner(hexToBuffer(p.owner), p.limit, p.offset), (row) => (row.encryptedData.length - 2) / 2).map(
      attestationListItem,
    ),
});
