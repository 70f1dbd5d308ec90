// SPDX-License-Identifier: AGPL-3.0-only
/** The TLS attestor process `npm start` runs (attestor/serve.ts): it signs range statements only. */
import { serveAttestor } from "./serve.ts";

serveAttestor({ checkStatements: true }).catch((error: unknown) => {
  console.error(`[attestor] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
