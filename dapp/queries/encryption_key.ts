import { z } from "zod";
import { bytesToHex } from "../../common/hex.ts";
import type { EncryptionKeyView } from "../../common/wire.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";

/**
 * Extension: the encryption key registered last, the one claims are sealed to. A user who proves and
 * seals on its own machine (`npm run prove`) reads it here rather than trusting the api to name it.
 */
export default defineQuery({
  type: "encryption_key",
  params: z.object({}),
  read({ store }): EncryptionKeyView {
    const row = store.latestKey();
    if (row === undefined) throw new QueryRejection("no encryption key registered");
    return { key_id: bytesToHex(row.keyId), public_key: Buffer.from(row.publicKey).toString("base64"), algorithm: "nacl-box", created_at: row.createdAt };
  },
});
