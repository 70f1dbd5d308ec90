/** Sign-In with Ethereum: a nonce, then a signed message for a user token (DECISIONS.md section 6). */
import { createRoute, z } from "@hono/zod-openapi";
import { verifySiweLogin } from "../auth/siwe.ts";
import { DEFAULT_TOKEN_TTL_SECONDS, issueToken } from "../auth/tokens.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { envelope, errorResponses, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { jsonBody } from "../validation.ts";

const loginSchema = z.object({
  message: z.string().min(1).max(8192).openapi({ description: "EIP-4361 message" }),
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "expected a 0x-prefixed hex signature"),
});

const nonceTraits: OperationTraits = { group: "auth" };
const loginTraits: OperationTraits = { group: "auth", body: true, errors: ["AUTH_INVALID"] };

export const nonceRoute = createRoute({
  method: "get",
  path: "/api/core/auth/nonce",
  summary: "A single-use nonce for a Sign-In with Ethereum message (valid 10 minutes)",
  ...operationTraits(nonceTraits),
  responses: {
    200: jsonContent(envelope(z.object({ nonce: z.string(), expiresAt: unixSeconds, domain: z.string(), chainId: z.number().int() })), "A nonce"),
    ...errorResponses(nonceTraits),
  },
});

export const loginRoute = createRoute({
  method: "post",
  path: "/api/core/auth/login",
  summary: "Exchange a signed SIWE message for a user token",
  ...operationTraits(loginTraits),
  request: jsonRequest(loginSchema),
  responses: {
    200: jsonContent(envelope(z.object({ token: z.string(), expiresAt: unixSeconds })), "A user token"),
    ...errorResponses(loginTraits),
  },
});

export function authRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "auth", clientOf);
  return router()
    .openapi({ ...nonceRoute, middleware: [limited] }, async (c) => {
      const { nonce, expiresAt } = await services.nonces.issue();
      return c.json(
        {
          success: true as const,
          data: { nonce, expiresAt, domain: requestDomain(c.req.url, c.req.header("host")), chainId: services.config.chainId },
        },
        200,
      );
    })
    .openapi({ ...loginRoute, middleware: [limited, jsonBody] }, async (c) => {
      const { message, signature } = c.req.valid("json");
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
      return c.json({ success: true as const, data: issued }, 200);
    });
}

/** The authority the client used to reach the api: what its SIWE message's domain must be. */
function requestDomain(url: string, hostHeader: string | undefined): string {
  return hostHeader ?? new URL(url).host;
}
