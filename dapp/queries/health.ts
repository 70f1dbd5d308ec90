import { z } from "zod";
import type { RollupHealth } from "../../common/wire.ts";
import { defineQuery } from "../define.ts";

export default defineQuery({
  type: "health",
  params: z.object({}),
  read({ store }): RollupHealth {
    try {
      store.ping();
      return { status: "ok", database: "ok", processed_inputs: store.meta()?.processedInputs ?? 0 };
    } catch {
      // The dapp still answers, so it is degraded rather than down.
      return { status: "degraded", database: "error", processed_inputs: 0 };
    }
  },
});
