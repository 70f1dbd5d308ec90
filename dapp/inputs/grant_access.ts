import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import { writeIdOf } from "../../common/ids.ts";
import type { ConsentKind } from "../../common/wire.ts";
import { checkGrantConsent, signedConsentParam, unsignedConsent } from "../consent.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { keepSharedKeys, sharedKeysParam } from "../shared-keys.ts";
import { bytes32 } from "./fields.ts";

export const params = z
  .object({
    requester: addressSchema,
    schema_id: bytes32,
    expires_at: z.int().min(0),
    owner: addressSchema.optional(),
    /** Extension: the owner's EIP-712 signature of this grant; then anyone may send it. */
    consent: signedConsentParam.optional(),
    /** Extension: content keys of the owner's attestations, sealed on its side to the requester's key. */
    keys: sharedKeysParam.optional(),
  })
  .refine((p) => p.consent === undefined || p.owner !== undefined, { message: "required with consent", path: ["owner"] });

export default defineInput({
  kind: "grant_access",
  params,
  sender: { owner: true, signedConsent: true },
  apply(ctx, p, owner) {
    const { store, input } = ctx;
    const schemaKey = hexToBuffer(p.schema_id);
    const schema = store.schemaById(schemaKey);
    if (!schema) throw new InputRejection("SCHEMA_NOT_FOUND", `schema not found: ${p.schema_id}`);
    if (p.expires_at <= input.timestamp) {
      throw new InputRejection("INVALID_PARAMS", `expires_at: must be later than the input's timestamp ${input.timestamp}`);
    }
    let consent: ConsentKind;
    if (p.consent !== undefined) {
      checkGrantConsent(ctx, p.consent, { owner, requester: p.requester, schemaId: p.schema_id, expiresAt: p.expires_at });
      consent = "signed";
    } else consent = unsignedConsent(ctx, owner, schema.requireSignedConsent, p.schema_id);
    const ownerKey = hexToBuffer(owner);
    const requesterKey = hexToBuffer(p.requester);
    const standing = store.activeGrants(ownerKey, requesterKey, input.timestamp).find((g) => g.schemaId.equals(schemaKey));
    if (standing) {
      throw new InputRejection("DUPLICATE", `an active grant for this owner, requester and schema already exists: ${bytesToHex(standing.grantId)}`);
    }
    const grantId = writeIdOf("grant_access", input.index, input.item);
    store.insertGrant({
      inputIndex: input.index,
      itemIndex: input.item,
      grantId: hexToBuffer(grantId),
      owner: ownerKey,
      requester: requesterKey,
      schemaId: schemaKey,
      createdAt: input.timestamp,
      expiresAt: p.expires_at,
      consent,
    });
    if (p.keys !== undefined) keepSharedKeys(store, { grantId: hexToBuffer(grantId), owner, requester: p.requester, schemaId: schemaKey }, p.keys, input.index);
    return [{ event: "grant:created", data: { grantId, owner, requester: p.requester } }];
  },
});
