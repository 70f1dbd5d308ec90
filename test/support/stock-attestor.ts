// SPDX-License-Identifier: AGPL-3.0-only
/**
 * attestor-core's server as it comes, without the project's check of what it signs: a test runs it to
 * show that the lies the project's attestor refuses would be signed otherwise (the defect it closes).
 */
import { serveAttestor } from "../../attestor/serve.ts";

serveAttestor({ checkStatements: false }).catch((error: unknown) => {
  console.error(`[stock attestor] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
