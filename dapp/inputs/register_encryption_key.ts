import { z } from "zod";
import { keyIdOf } from "../../common/ids.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";

const NACL_BOX_PUBLIC_KEY_BYTES = 32;

/** Canonical base64 only, so one key has one textual form and one id. */
const publicKey = z
  .string()
  .max(64)
  .transform((text, ctx) => {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length !== NACL_BOX_PUBLIC_KEY_BYTES || bytes.toString("base64") !== text) {
      ctx.addIssue({ code: "custom", message: `expected the base64 of a ${NACL_BOX_PUBLIC_KEY_BYTES}-byte NaCl public key` });
      return z.NEVER;
    }
    return new Uint8Array(bytes);
  });

export const params = z.object({
  publicKey,
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
