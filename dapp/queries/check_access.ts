import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import type { AccessCheck } from "../../common/wire.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineQuery } from "../define.ts";

export default defineQuery({
  type: "check_access",
  params: z.object({ owner: addressSchema, requester: addressSchema, at: z.int().min(0).optional() }),
  read({ store }, p): AccessCheck {
    // Without `at`, "now" is the rollup's own clock: the latest input's block time.
    const now = p.at ?? store.meta()?.latestTimestamp ?? 0;
    const grants = store.activeGrants(hexToBuffer(p.owner), hexToBuffer(p.requester), now).map((g) => ({
      grant_id: bytesToHex(g.grantId),
      schema_id: bytesToHex(g.schemaId),
      expires_at: g.expiresAt,
      consent: g.consent,
    }));
    return { has_access: grants.length > 0, grants };
  },
});
