/**
 * The attestation API's error model (specification "Errors", DECISIONS.md section 7): every failure is
 * an `ApiError` carrying a detailed code and the `details` members the specification lists; this file is
 * the one place that knows which HTTP status each code gets.
 */
import { CodedError } from "../common/errors.ts";

export const API_ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_PARAMETER: 400,
  INVALID_KEY_FORMAT: 400,
  AUTH_MISSING: 401,
  AUTH_INVALID: 401,
  UNAUTHORIZED: 401,
  AUTH_INSUFFICIENT: 403,
  FORBIDDEN: 403,
  NOT_OWNER: 403,
  GRANT_EXPIRED: 403,
  /** Extension (DECISIONS.md section 16): the owner's signed consent did not check out, or a schema refuses a relayed grant. */
  CONSENT_REJECTED: 403,
  NOT_FOUND: 404,
  SCHEMA_NOT_FOUND: 404,
  ATTESTATION_NOT_FOUND: 404,
  NO_GRANT_FOUND: 404,
  NONCE_TOO_LOW: 409,
  /** Extension (DECISIONS.md section 17): the attestation was revoked already. */
  ALREADY_REVOKED: 409,
  /** Extension: a revocation's proof asked of an attestation that stands. */
  NOT_REVOKED: 404,
  ROLLUP_REJECTED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  DECRYPTION_FAILED: 500,
  PROVIDER_ERROR: 502,
  PROVIDER_UNAVAILABLE: 502,
  PROVIDER_AUTH_FAILED: 502,
  PROVIDER_INVALID_RESPONSE: 502,
  ZKTLS_PROOF_FAILED: 502,
  INPUT_TX_FAILED: 502,
  ROLLUP_ERROR: 503,
  ROLLUP_UNAVAILABLE: 503,
  RPC_UNAVAILABLE: 503,
  /** Extension (docs/index.md): the index of EAS's GraphQL cannot be read (the indexer or its database is away). */
  INDEX_UNAVAILABLE: 503,
  /** Extension (docs/index.md): the index has not reached the input the request names (X-Min-Input-Index); sent with Retry-After. */
  INDEX_BEHIND: 503,
  INSUFFICIENT_FUNDS: 503,
  ENCRYPTION_KEY_MISSING: 503,
  /** Extension (docs/consent.md): the schema seals to the owner's key, and the owner has registered none. */
  OWNER_KEY_MISSING: 409,
  /** Extension (DECISIONS.md section 13): the attestation's epoch is not claimed yet; sent with Retry-After. */
  PROOF_NOT_READY: 409,
  /** Extension (docs/receipts.md): no receipt can be signed for it (no registry known, or several bucketed fields). */
  RECEIPT_UNAVAILABLE: 409,
  /** Extension (docs/nullifiers.md): the claim's provider account already backs another owner of the schema. */
  ACCOUNT_ALREADY_BOUND: 409,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export class ApiError extends CodedError<ApiErrorCode> {
  override readonly name = "ApiError";
  /** Response headers that belong to the error (Retry-After, rate-limit state), set by the one error handler. */
  headers: Readonly<Record<string, string>> = {};

  withHeaders(headers: Record<string, string>): this {
    this.headers = { ...this.headers, ...headers };
    return this;
  }

  get status(): (typeof API_ERROR_STATUS)[ApiErrorCode] {
    return API_ERROR_STATUS[this.code];
  }
}

/** The wire body of every error response. */
export interface ApiErrorBody {
  success: false;
  error: { code: ApiErrorCode; message: string; details?: Record<string, unknown> };
}

export function errorBody(error: ApiError): ApiErrorBody {
  const body: ApiErrorBody = { success: false, error: { code: error.code, message: error.message } };
  if (error.details !== undefined) body.error.details = { ...error.details };
  return body;
}
