/** Sign-In with Ethereum: a nonce, then a signed message for a user token (DECISIONS.md section 6). */
import { Hono } from "hono";
import { z } from "zod";
import { verifySiweLogin } from "../auth/siwe.ts";
import { DEFAULT_TOKEN_TTL_SECONDS, issueToken } from "../auth/tokens.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { jsonBody, limitBody } from "../validation.ts";

const loginSchema = z.object({
  message: z.string().min(1).max(8192),
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "expected a 0x-prefixed hex signature"),
});

export function authRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "auth", clientOf);
  return new Hono()
    .get("/auth/nonce", limited, (c) => {
      const { nonce, expiresAt } = services.nonces.issue();
      return c.json({
        success: true,
        data: { nonce, expiresAt, domain: requestDomain(c.req.url, c.req.header("host")), chainId: services.config.chainId },
      });
    })
    .post("/auth/login", limited, limitBody, jsonBody(loginSchema), async (c) => {
      const { message, signature } = c.get("body");
      const { address, messageExpiresAt } = await verifySiweLogin(
        {
          message,
          signature: signature as `0x${string}`,
          domain: requestDomain(c.req.url, c.req.header("host")),
          chainId: services.config.chainId,
        },
        services.nonces,
        services.now,
      );
      const now = services.now();
      // A token never outlives the message that earned it.
      const ttl =
        messageExpiresAt === undefined
          ? DEFAULT_TOKEN_TTL_SECONDS
          : Math.max(1, Math.min(DEFAULT_TOKEN_TTL_SECONDS, messageExpiresAt - now));
      const issued = await issueToken(services.config.jwtSecret, address, "user", ttl, now);
      return c.json({ success: true, data: issued });
    });
}

/** The authority the client used to reach the api: what its SIWE message's domain must be. */
function requestDomain(url: string, hostHeader: string | undefined): string {
  return hostHeader ?? new URL(url).host;
}
