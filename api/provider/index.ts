/**
 * Provider `http`: fetch a JSON body from the URL a claim names, under the rules of DECISIONS.md
 * section 5 (docs/provider.md), and read the claimed number out of it.
 */
import { type HttpProviderParams, type ProviderFetchConfig, fetchJson } from "./fetch.ts";

export {
  DEFAULT_PROVIDER_MAX_BODY_BYTES,
  MAX_PROVIDER_REDIRECTS,
  type HttpProviderParams,
  type ProviderFetchConfig,
} from "./fetch.ts";
export { ALLOWED_METHODS, redactUrl } from "./target.ts";
export { readNumericField } from "./field.ts";

/**
 * Fetches the JSON body and returns it parsed, with the host name of the URL (lower-case, no port) for
 * matching the schema's domain. Throws ApiError PROVIDER_UNAVAILABLE | PROVIDER_AUTH_FAILED |
 * PROVIDER_INVALID_RESPONSE | ZKTLS_PROOF_FAILED | INVALID_PARAMETER (bad or refused URL, method, header).
 */
export function fetchProviderJson(params: HttpProviderParams, config: ProviderFetchConfig): Promise<{ body: unknown; host: string }> {
  return fetchJson(params, config);
}
