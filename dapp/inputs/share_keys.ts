/**
 * `share_keys` (an extension, docs/consent.md): more content keys for a standing grant, for attestations
 * made after it or for the requester's newer key. A revoked or expired grant takes none: after a revoke,
 * the requester gets no newly sealed key.
 */
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { keepSharedKeys, sharedKeysParam } from "../shared-keys.ts";
import { bytes32 } from "./fields.ts";

export const params = z.object({
  grant_id: bytes32,
  keys: sharedKeysParam,
  owner: addressSchema.optional(),
});

export default defineInput({
  kind: "share_keys",
  params,
  sender: { owner: true },
  apply({ store, input }, p, owner) {
    const grant = store.grantById(hexToBuffer(p.grant_id));
    if (!grant || grant.revokedAt !== null) throw new InputRejection("GRANT_NOT_FOUND", `grant not found: ${p.grant_id}`);
    if (bytesToHex(grant.owner) !== owner) throw new InputRejection("NOT_OWNER", `grant ${p.grant_id} does not belong to ${owner}`);
    if (grant.expiresAt <= input.timestamp) throw new InputRejection("GRANT_NOT_FOUND", `grant ${p.grant_id} expired at ${grant.expiresAt}`);
    const requester = bytesToHex(grant.requester);
    const shared = keepSharedKeys(store, { grantId: grant.grantId, owner, requester, schemaId: grant.schemaId }, p.keys, input.index);
    return [{ event: "keys:shared", data: { grantId: p.grant_id, owner, requester, attestations: shared } }];
  },
});
