import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { ROLES } from "../../common/wire.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";

export const params = z.object({
  address: addressSchema,
  role: z.enum(ROLES),
  enabled: z.boolean(),
});

/** Grants or removes a role. No notice: roles are not part of the public event stream. */
export default defineInput({
  kind: "set_role",
  params,
  sender: { role: "admin" },
  apply({ store, roles }, p) {
    const address = hexToBuffer(p.address);
    if (p.enabled) {
      store.addRole(address, p.role);
      return [];
    }
    if (p.role === "admin") {
      if (roles.isPermanentAdmin(p.address)) {
        throw new InputRejection("INVALID_PARAMS", `address: ${p.address} is a permanent admin (DAPP_ADMINS) and cannot be removed`);
      }
      const admins = roles.admins();
      if (admins.has(p.address) && admins.size === 1) {
        throw new InputRejection("INVALID_PARAMS", `address: ${p.address} is the last admin and cannot be removed`);
      }
    }
    store.removeRole(address, p.role);
    return [];
  },
});
