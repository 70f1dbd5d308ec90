import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import type { OwnerKeyView } from "../../common/wire.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";

/** An owner's newest own key: what data of an owner-sealing schema is sealed to, and content keys for it. */
export default defineQuery({
  type: "owner_key",
  params: z.object({ owner: addressSchema }),
  read({ store }, p): OwnerKeyView {
    const row = store.ownerKey(hexToBuffer(p.owner));
    if (row === undefined) throw new QueryRejection(`no key registered for ${p.owner}`);
    return { owner: p.owner, key_id: bytesToHex(row.keyId), public_key: row.publicKey.toString("base64"), algorithm: "nacl-box", created_at: row.createdAt };
  },
});
