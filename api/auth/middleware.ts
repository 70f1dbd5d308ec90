/**
 * Route middleware that demands a bearer token of a role. Roles nest: an admin token also passes where a
 * user token is required, acting as its own `sub` (documented in docs/api.md).
 */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import { verifyToken, type TokenClaims, type TokenRole } from "./tokens.ts";

export interface AuthVariables {
  auth: TokenClaims;
}

export function requireRole(secret: Uint8Array, role: TokenRole) {
  return createMiddleware<{ Variables: AuthVariables }>(async (c, next) => {
    const header = c.req.header("authorization");
    if (header === undefined || header.trim() === "") {
      throw new ApiError("AUTH_MISSING", "This call needs an Authorization: Bearer <token> header");
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) throw new ApiError("AUTH_INVALID", "The Authorization header is not of the form Bearer <token>");
    const claims = await verifyToken(secret, match[1] as string);
    if (role === "admin" && claims.role !== "admin") {
      throw new ApiError("AUTH_INSUFFICIENT", "This call needs an admin token");
    }
    c.set("auth", claims);
    await next();
  });
}
