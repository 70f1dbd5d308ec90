import type { Address } from "viem";
import { normalizeAddress } from "../common/address.ts";
import { bytesToHex } from "../common/hex.ts";
import type { Role } from "../common/wire.ts";
import { hexToBuffer } from "./db/bytes.ts";
import type { Store } from "./db/store.ts";

/**
 * Who holds which role. Admins hold every role. DAPP_ADMINS admins come from configuration and are
 * permanent; others are rows written by set_role.
 */
export function createRoles(store: Store, permanentAdmins: readonly Address[]) {
  const permanent = new Set<Address>(permanentAdmins.map((a) => normalizeAddress(a)));
  return {
    isPermanentAdmin: (address: Address): boolean => permanent.has(address),
    has(address: Address, role: Role): boolean {
      return permanent.has(address) || store.hasRoleRow(hexToBuffer(address), role);
    },
    /** Every admin, permanent or granted, without duplicates. */
    admins(): Set<Address> {
      const all = new Set<Address>(permanent);
      for (const row of store.adminRows()) all.add(bytesToHex(row));
      return all;
    },
  };
}

export type Roles = ReturnType<typeof createRoles>;
