/**
 * `set_nullifier_keys` (an extension, issue 52, docs/nullifiers.md): registers the public side of the
 * nullifier key the attestors hold in shares, t of n, as `npm run nullifier-keys` deals it: the threshold,
 * the group key K, each share's commitment K_i, and which registered TLS attestor holds each index. Public
 * keys only: a notice says it, as for the attestors themselves.
 */
import type { Address } from "viem";
import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { bytesToHex } from "../../common/hex.ts";
import { checkKeySet, keySetJson, keySetSchema, MAX_PUBLISHED_SHARES, MAX_SHARE_INDEX } from "../../common/nullifier.ts";
import { encodeElement } from "../../common/oprf-ristretto255.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";

export const params = z.object({
  keySet: keySetSchema,
  attestors: z
    .array(z.object({ index: z.int().min(1).max(MAX_SHARE_INDEX), address: addressSchema }))
    .min(1)
    .max(MAX_PUBLISHED_SHARES),
});

const refuse = (message: string): InputRejection => new InputRejection("INVALID_PARAMS", message);

export default defineInput({
  kind: "set_nullifier_keys",
  params,
  sender: { role: "admin" },
  apply({ store, input }, p) {
    const verdict = checkKeySet(p.keySet);
    if (!verdict.ok) throw refuse(`keySet: ${verdict.message}`);
    const { keys } = verdict;
    // As the dealer: with t = 1 one attestor alone would compute every account's nullifier.
    if (keys.threshold < 2) throw refuse("keySet.threshold: at least 2 (with 1, one attestor alone computes every account's nullifier)");

    const holders = new Map<number, Address>();
    const held = new Set<Address>();
    for (const { index, address } of p.attestors) {
      if (holders.has(index)) throw refuse(`attestors: index ${index} is given twice`);
      // One share per attestor: an attestor holding two would count twice towards t, and t − 1 colluders would be enough.
      if (held.has(address)) throw refuse(`attestors: ${address} holds two indices; an attestor holds one share`);
      if (!keys.commitments.has(index)) throw refuse(`attestors: index ${index} has no commitment in the key set`);
      if (!store.isTlsAttestor(hexToBuffer(address))) throw refuse(`attestors: ${address} is not a registered attestor (set_tls_attestor)`);
      holders.set(index, address);
      held.add(address);
    }
    const unheld = [...keys.commitments.keys()].find((index) => !holders.has(index));
    if (unheld !== undefined) throw refuse(`attestors: no attestor is named for share ${unheld}`);

    const groupKey = Buffer.from(encodeElement(keys.groupKey));
    const previous = store.nullifierKeys();
    // Only a re-sharing (the same k, so the same K) may replace a key set: under another key every
    // nullifier already bound would silently stop matching, and each bound account could back a new owner.
    if (previous !== undefined && !previous.groupKey.equals(groupKey)) {
      throw refuse(`keySet.groupKey: not the registered group key ${bytesToHex(previous.groupKey)}: a new key would change every nullifier; re-share the registered key instead (npm run nullifier-keys -- reshare)`);
    }
    // A unique schema's claims count shares only from their signers: a threshold above its quorum would stop them all.
    const quorum = store.minUniqueQuorum();
    if (quorum !== undefined && keys.threshold > quorum) {
      throw refuse(`keySet.threshold: ${keys.threshold} is above the attestor quorum ${quorum} of a schema unique per account, whose claims could then never carry enough shares`);
    }

    const json = keySetJson(keys);
    store.setNullifierKeys(
      { inputIndex: input.index, itemIndex: input.item, threshold: keys.threshold, groupKey, registeredAt: input.timestamp },
      json.commitments.map(({ index, commitment }) => ({ shareIndex: index, commitment: hexToBuffer(commitment), attestor: hexToBuffer(holders.get(index) as Address) })),
    );
    const commitments = json.commitments.map(({ index, commitment }) => ({ index, commitment, attestor: holders.get(index) as Address }));
    return [{ event: "nullifier_keys:registered", data: { threshold: keys.threshold, groupKey: json.groupKey, commitments } }];
  },
});
