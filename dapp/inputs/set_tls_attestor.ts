import { z } from "zod";
import { addressSchema } from "../../common/address.ts";
import { hexToBuffer } from "../db/bytes.ts";
import { defineInput } from "../define.ts";
import { InputRejection } from "../errors.ts";
import { shortText } from "./fields.ts";

export const params = z.object({
  address: addressSchema,
  enabled: z.boolean(),
  name: shortText.optional(),
});

/**
 * Trusts a TLS attestor's signing address for proven attestations (docs/provider.md), or stops trusting it.
 * Registering one again renames it. A notice, unlike roles: which attestors vouch for data is public.
 */
export default defineInput({
  kind: "set_tls_attestor",
  params,
  sender: { role: "admin" },
  apply({ store, input }, p) {
    const address = hexToBuffer(p.address);
    if (p.enabled) {
      const name = p.name ?? "";
      store.addTlsAttestor(address, name, input.timestamp);
      return [{ event: "attestor:registered", data: { address: p.address, name } }];
    }
    if (!store.removeTlsAttestor(address)) throw new InputRejection("INVALID_PARAMS", `address: ${p.address} is not a registered attestor`);
    return [{ event: "attestor:removed", data: { address: p.address } }];
  },
});
