import { z } from "zod";
import type { RollupHealth } from "../../common/wire.ts";
import { defineQuery } from "../define.ts";

export default defineQuery({
  type: "health",
  params: z.object({}),
  read({ store }): RollupHealth {
    try {
      store.ping();
      // What the dapp's own state can know in the machine too: inputs up to the last accepted one (a
      // rejected input leaves no trace there, DECISIONS.md section 9).
      const meta = store.meta();
      return { status: "ok", database: "ok", processed_inputs: meta === undefined ? 0 : meta.lastInputIndex + 1 };
    } catch {
      // The dapp still answers, so it is degraded rather than down.
      return { status: "degraded", database: "error", processed_inputs: 0 };
    }
  },
});
