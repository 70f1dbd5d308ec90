import { z } from "zod";
import { bytesToHex } from "../../common/hex.ts";
import type { NullifierKeysWire } from "../../common/nullifier.ts";
import { defineQuery } from "../define.ts";
import { QueryRejection } from "../errors.ts";

/**
 * Extension (issue 52, docs/nullifiers.md): the registered nullifier key set, public keys only. A prover
 * (the api, or `npm run prove` on the user's machine) finishes a claim's nullifier against it, and drops
 * an attestor's evaluation whose proof does not hold against its commitment here, before the dapp would.
 */
export default defineQuery({
  type: "nullifier_keys",
  params: z.object({}),
  read({ store }): NullifierKeysWire {
    const keys = store.nullifierKeys();
    if (keys === undefined) throw new QueryRejection("no nullifier key set registered");
    return {
      threshold: keys.threshold,
      group_key: bytesToHex(keys.groupKey),
      commitments: keys.shares.map((s) => ({ index: s.shareIndex, commitment: bytesToHex(s.commitment), attestor: bytesToHex(s.attestor) })),
      registered_at: keys.registeredAt,
    };
  },
});
