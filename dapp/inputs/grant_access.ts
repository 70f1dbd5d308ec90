import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import { writeIdOf } from "../../common/ids.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { bytes32 } from "./fields.ts";

export const params = z.object({
  requester: addressSchema,
  schema_id: bytes32,
  expires_at: z.int().min(0),
  owner: addressSchema.optional(),
});

export default defineInput({
  kind: "grant_access",
  params,
  sender: { owner: true },
  apply({ store, input }, p, owner) {
    const schemaKey = hexToBuffer(p.schema_id);
    if (!store.schemaById(schemaKey)) throw new InputRejection("SCHEMA_NOT_FOUND", `schema not found: ${p.schema_id}`);
    if (p.expires_at <= input.timestamp) {
      throw new InputRejection("INVALID_PARAMS", `expires_at: must be later than the input's timestamp ${input.timestamp}`);
    }
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
    });
    return [{ event: "grant:created", data: { grantId, owner, requester: p.requester } }];
  },
});
