import { describe, expect, it } from "vitest";
import { INPUT_KINDS, QUERY_TYPES } from "../../common/wire.ts";
import { INPUTS } from "../../dapp/inputs/index.ts";
import { QUERIES } from "../../dapp/queries/index.ts";

describe("registries", () => {
  it("cover exactly the input kinds of the wire contract", () => {
    expect(Object.keys(INPUTS).sort()).toEqual([...INPUT_KINDS].sort());
    for (const [kind, module] of Object.entries(INPUTS)) expect(module.kind).toBe(kind);
  });

  it("cover exactly the query types of the wire contract", () => {
    expect(Object.keys(QUERIES).sort()).toEqual([...QUERY_TYPES].sort());
    for (const [type, module] of Object.entries(QUERIES)) expect(module.type).toBe(type);
  });

  it("give each kind the sender rule of DECISIONS.md section 2", () => {
    expect(Object.fromEntries(Object.entries(INPUTS).map(([kind, m]) => [kind, m.sender]))).toEqual({
      register_schema: { role: "admin" },
      register_encryption_key: { role: "admin" },
      // The owner itself may send an attestation that carries attestors' signed claims.
      create_attestation: { role: "attestor", ownerMay: expect.any(Function) },
      // With the owner's signed consent, anyone may send them (the kind checks the signature).
      grant_access: { owner: true, signedConsent: true },
      revoke_grant: { owner: true, signedConsent: true },
      set_role: { role: "admin" },
      set_tls_attestor: { role: "admin" },
      // Its owner, its attester, an attestor that proved it or an admin: known only from the row.
      revoke_attestation: { byRow: true },
      // Only the owner's word registers its key: its wallet, or its signature (an operator's relay is refused in the kind).
      register_owner_key: { owner: true, signedConsent: true },
      share_keys: { owner: true },
      set_nullifier_keys: { role: "admin" },
    });
  });
});
