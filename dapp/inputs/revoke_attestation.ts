/**
 * `revoke_attestation` (an extension, DECISIONS.md section 17): its attester (the account that sent it),
 * one of the TLS attestors that proved it, or an admin revokes an attestation; its owner may withdraw
 * its own. The attestation stays readable, marked revoked, and the notice `attestation:revoked` makes the
 * revocation provable on the base layer (a contract rebuilds it from its fields, so the reason is plain
 * text: no quotes, backslashes or control characters, which JSON would escape).
 */
import type { Address, Hex } from "viem";
import { z } from "zod";
import { isPlainText, PLAIN_TEXT_RULE } from "../../common/plain-text.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { bytes32, LIMITS } from "./fields.ts";

/** Text a contract can rebuild byte for byte inside a JSON string. */
const plainText = z.string().max(LIMITS.shortText, `at most ${LIMITS.shortText} characters`).refine(isPlainText, PLAIN_TEXT_RULE);

export const params = z.object({
  attestation_id: bytes32,
  reason: plainText.optional(),
  superseded_by: bytes32.optional(),
});

export default defineInput({
  kind: "revoke_attestation",
  params,
  sender: { byRow: true },
  apply({ store, roles, input }, p) {
    const attestation = store.attestationById(hexToBuffer(p.attestation_id));
    if (attestation === undefined) throw new InputRejection("ATTESTATION_NOT_FOUND", `attestation not found: ${p.attestation_id}`);
    if (attestation.revokedAt !== null) {
      throw new InputRejection("ALREADY_REVOKED", `attestation ${p.attestation_id} was already revoked at ${attestation.revokedAt}`);
    }
    const sender = input.sender;
    const provers = attestation.attestors !== null ? (JSON.parse(attestation.attestors) as string[]) : attestation.attestor === null ? [] : [attestation.attestor];
    const may = sender === attestation.owner || sender === attestation.attester || provers.includes(sender) || roles.has(sender, "admin");
    if (!may) {
      throw new InputRejection(
        "UNAUTHORIZED_SENDER",
        `sender ${sender} may not revoke attestation ${p.attestation_id}: only its owner, its attester${attestation.attester === null ? "" : ` ${attestation.attester}`}, an attestor that proved it, or an admin`,
      );
    }
    if (p.superseded_by !== undefined) {
      const successor = store.attestationById(hexToBuffer(p.superseded_by));
      if (successor === undefined) throw new InputRejection("ATTESTATION_NOT_FOUND", `superseded_by: attestation not found: ${p.superseded_by}`);
      if (p.superseded_by === p.attestation_id) throw new InputRejection("INVALID_PARAMS", "superseded_by: an attestation cannot supersede itself");
      if (successor.owner !== attestation.owner || successor.schemaId !== attestation.schemaId) {
        throw new InputRejection("INVALID_PARAMS", `superseded_by: attestation ${p.superseded_by} is not of the same owner and schema`);
      }
    }
    // A nullifier the attestation bound stays bound (dapp/nullifier.ts): freeing it would let one account back owners in turn.
    store.insertRevocation({
      attestationId: hexToBuffer(p.attestation_id),
      inputIndex: input.index,
      itemIndex: input.item,
      revokedAt: input.timestamp,
      revoker: hexToBuffer(sender),
      reason: p.reason ?? "",
      supersededBy: p.superseded_by === undefined ? null : hexToBuffer(p.superseded_by),
    });
    // Keys in this order, as the notice always had them; contracts read the batch notice instead (common/attestation-batch.ts).
    const data = {
      claimId: p.attestation_id,
      owner: attestation.owner as Address,
      schema_id: attestation.schemaId,
      revoker: sender,
      revoked_at: input.timestamp,
      reason: p.reason ?? "",
      superseded_by: (p.superseded_by ?? null) as Hex | null,
    };
    return [{ event: "attestation:revoked", data }];
  },
});
