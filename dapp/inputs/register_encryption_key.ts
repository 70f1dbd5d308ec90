import { z } from "zod";
import { keyIdOf } from "../../common/ids.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { naclPublicKey } from "./fields.ts";

export const params = z.object({
  publicKey: naclPublicKey,
  algorithm: z.literal("nacl-box"),
});

export default defineInput({
  kind: "register_encryption_key",
  params,
  sender: { role: "admin" },
  apply({ store, input }, p) {
    const keyId = keyIdOf(p.publicKey);
    const key = hexToBuffer(keyId);
    if (store.keyExists(key)) throw new InputRejection("DUPLICATE", `encryption key ${keyId} is already registered`);
    store.insertKey({
      inputIndex: input.index,
      itemIndex: input.item,
      keyId: key,
      publicKey: Buffer.from(p.publicKey),
      algorithm: p.algorithm,
      createdAt: input.timestamp,
    });
    return [{ event: "key:registered", data: { keyId } }];
  },
});
