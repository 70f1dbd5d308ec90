// SPDX-License-Identifier: AGPL-3.0-only
/**
 * Extra root certificates for attestor-core's TLS library, which keeps its own root list and ignores
 * NODE_EXTRA_CA_CERTS: a local provider's CA (tests, the demo provider) is pushed onto the global list it
 * reads, in every process that speaks TLS through it (the attestor and the prover).
 */
import { readFileSync } from "node:fs";

declare global {
  // eslint-disable-next-line no-var
  var TLS_ADDITIONAL_ROOT_CA_LIST: string[] | undefined;
}

/** `files`: comma-separated PEM paths (ATTESTOR_CA_FILES); empty adds nothing. */
export function trustExtraRoots(files: string | undefined): number {
  const paths = (files ?? "").split(",").map((p) => p.trim()).filter((p) => p.length > 0);
  const list = (globalThis.TLS_ADDITIONAL_ROOT_CA_LIST ??= []);
  for (const path of paths) {
    try {
      list.push(readFileSync(path, "utf8"));
    } catch {
      throw new Error(`invalid configuration: ATTESTOR_CA_FILES: cannot read ${path}`);
    }
  }
  return paths.length;
}
