/**
 * `register_owner_key` (an extension, docs/consent.md): an owner's own NaCl key, which the data of a schema
 * sealing to the owner is sealed to (its newest key). Only the owner's word registers it: sent from its own
 * wallet, or relayed with its EIP-712 signature; an operator naming the owner is refused, or whoever runs
 * the operator could have the owner's data sealed to a key of its own.
 */
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { keyIdOf } from "../../common/ids.ts";
import { checkOwnerKeyConsent, signedConsentParam } from "../consent.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { naclPublicKey } from "./fields.ts";

export const params = z
  .object({
    public_key: naclPublicKey,
    algorithm: z.literal("nacl-box"),
    owner: addressSchema.optional(),
    consent: signedConsentParam.optional(),
  })
  .refine((p) => p.consent === undefined || p.owner !== undefined, { message: "required with consent", path: ["owner"] });

export default defineInput({
  kind: "register_owner_key",
  params,
  sender: { owner: true, signedConsent: true },
  apply(ctx, p, owner) {
    const { store, input } = ctx;
    const keyId = keyIdOf(p.public_key);
    if (p.consent !== undefined) checkOwnerKeyConsent(ctx, p.consent, { owner, keyId });
    else if (input.sender !== owner) {
      throw new InputRejection("CONSENT_REJECTED", `consent: an owner's key is registered only on its own word: sign it (consent) or send it from ${owner}`);
    }
    const current = store.ownerKey(hexToBuffer(owner));
    if (current !== undefined && current.keyId.equals(hexToBuffer(keyId))) {
      throw new InputRejection("DUPLICATE", `key ${keyId} is already ${owner}'s newest key`);
    }
    store.insertOwnerKey({
      inputIndex: input.index,
      itemIndex: input.item,
      owner: hexToBuffer(owner),
      keyId: hexToBuffer(keyId),
      publicKey: Buffer.from(p.public_key),
      createdAt: input.timestamp,
    });
    return [{ event: "owner_key:registered", data: { owner, keyId } }];
  },
});
