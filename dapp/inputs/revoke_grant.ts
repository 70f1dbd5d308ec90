import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import { checkRevokeConsent, signedConsentParam, unsignedConsent } from "../consent.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { bytes32 } from "./fields.ts";

export const params = z
  .object({
    grant_id: bytes32,
    owner: addressSchema.optional(),
    /** Extension: the owner's EIP-712 signature of this revoke; then anyone may send it. */
    consent: signedConsentParam.optional(),
  })
  .refine((p) => p.consent === undefined || p.owner !== undefined, { message: "required with consent", path: ["owner"] });

export default defineInput({
  kind: "revoke_grant",
  params,
  sender: { owner: true, signedConsent: true },
  apply(ctx, p, owner) {
    const { store, input } = ctx;
    const grant = store.grantById(hexToBuffer(p.grant_id));
    // A revoked grant no longer exists for its owner: revoking it twice is "not found", not a no-op.
    if (!grant || grant.revokedAt !== null) throw new InputRejection("GRANT_NOT_FOUND", `grant not found: ${p.grant_id}`);
    if (bytesToHex(grant.owner) !== owner) {
      throw new InputRejection("NOT_OWNER", `grant ${p.grant_id} does not belong to ${owner}`);
    }
    if (p.consent !== undefined) checkRevokeConsent(ctx, p.consent, { owner, grantId: p.grant_id });
    else {
      // A schema that takes only the owner's consent to share takes only the owner's to stop sharing.
      const schema = store.schemaById(grant.schemaId);
      unsignedConsent(ctx, owner, schema?.requireSignedConsent === true, bytesToHex(grant.schemaId));
    }
    store.revokeGrant(grant.id, input.timestamp);
    return [{ event: "grant:revoked", data: { grantId: p.grant_id, owner } }];
  },
});
