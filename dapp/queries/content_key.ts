import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import type { ContentKeyView } from "../../common/wire.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { atParam, defineQuery, queryTime } from "../define.ts";
import { QueryRejection } from "../errors.ts";
import { bytes32 } from "../inputs/fields.ts";

/**
 * The content key of an owner-sealed attestation its owner shared with `requester`: only while a grant of
 * the attestation's schema from its owner stands at `at` (revoked or expired grants share nothing).
 */
export default defineQuery({
  type: "content_key",
  params: z.object({ attestation_id: bytes32, requester: addressSchema, at: atParam }),
  read({ store }, p): ContentKeyView {
    const attestation = store.attestationById(hexToBuffer(p.attestation_id));
    if (attestation === undefined) throw new QueryRejection(`attestation not found: ${p.attestation_id}`);
    const now = queryTime(store, p.at);
    const grants = store.activeGrants(hexToBuffer(attestation.owner), hexToBuffer(p.requester), now).filter((g) => bytesToHex(g.schemaId) === attestation.schemaId);
    for (const grant of grants.reverse()) {
      const shared = store.grantKey(grant.grantId, hexToBuffer(p.attestation_id));
      if (shared !== undefined) {
        return { attestation_id: p.attestation_id, requester: p.requester, grant_id: bytesToHex(grant.grantId), key_id: bytesToHex(shared.keyId), sealed_key: bytesToHex(shared.sealedKey) };
      }
    }
    throw new QueryRejection(`no content key of attestation ${p.attestation_id} is shared with ${p.requester} by a standing grant`);
  },
});
