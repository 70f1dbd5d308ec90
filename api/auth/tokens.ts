/**
 * Bearer tokens (DECISIONS.md section 6): HS256 JWTs with `sub` (lower-case address), `role` and `exp`.
 * Only HS256 is accepted, so `alg: none` and algorithm-confusion tokens fail verification.
 */
import { jwtVerify, SignJWT } from "jose";
import type { Address } from "viem";
import { isAddress, normalizeAddress } from "../../common/address.ts";
import { ApiError } from "../errors.ts";

export const TOKEN_ROLES = ["admin", "user"] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

export interface TokenClaims {
  sub: Address;
  role: TokenRole;
  /** Unix seconds. */
  exp: number;
}

export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export async function issueToken(
  secret: Uint8Array,
  subject: string,
  role: TokenRole,
  ttlSeconds: number = DEFAULT_TOKEN_TTL_SECONDS,
  now: number = Math.floor(Date.now() / 1000),
): Promise<{ token: string; expiresAt: number }> {
  if (!isAddress(subject)) throw new TypeError(`token subject must be an address, got ${subject}`);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new TypeError("token ttl must be a positive integer");
  const expiresAt = now + ttlSeconds;
  const token = await new SignJWT({ role })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(normalizeAddress(subject))
    .setIssuedAt(now)
    .setExpirationTime(expiresAt)
    .sign(secret);
  return { token, expiresAt };
}

/** Verifies signature, algorithm, expiry and claim shapes; any failure is AUTH_INVALID (never why, to the client). */
export async function verifyToken(secret: Uint8Array, token: string): Promise<TokenClaims> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ["HS256"], requiredClaims: ["sub", "exp"] });
    const { sub, role, exp } = payload;
    if (typeof sub !== "string" || !isAddress(sub)) throw new Error("sub is not an address");
    if (role !== "admin" && role !== "user") throw new Error("unknown role");
    if (typeof exp !== "number") throw new Error("exp missing");
    return { sub: normalizeAddress(sub), role, exp };
  } catch (error) {
    throw new ApiError("AUTH_INVALID", "The bearer token is malformed, expired or badly signed", undefined, {
      cause: error,
    });
  }
}
