import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineQuery, pageParams } from "../define.ts";
import { grantView } from "../views.ts";

/** Unrevoked grants, expired ones included: the owner sees what it once granted until it revokes. */
export default defineQuery({
  type: "grants_by_owner",
  params: z.object({ owner: addressSchema, ...pageParams }),
  read: ({ store }, p) => store.grantsByOwner(hexToBuffer(p.owner), p.limit, p.offset).map(grantView),
});
