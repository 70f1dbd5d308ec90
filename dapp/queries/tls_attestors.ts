import { z } from "zod";
import type { TlsAttestorView } from "../../common/wire.ts";
import { defineQuery } from "../define.ts";
import { tlsAttestorView } from "../views.ts";

/** Extension: the TLS attestors the rollup trusts, in registration order (a handful: no paging). */
export default defineQuery({
  type: "tls_attestors",
  params: z.object({}),
  read({ store }): TlsAttestorView[] {
    return store.tlsAttestors().map(tlsAttestorView);
  },
});
