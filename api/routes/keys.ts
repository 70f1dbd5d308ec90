/**
 * Extensions (docs/consent.md): an owner's own NaCl key. `POST /owner-key` registers the token owner's key
 * with its EIP-712 signature (the rollup refuses it on the api's word alone); `GET /owner-key/:address`
 * reads an address's newest key, what the owner's data and the content keys shared with it are sealed to.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Hex } from "viem";
import { keyIdOf } from "../../common/ids.ts";
import { requireRole, type AuthVariables } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import { addressOut, addressParam, envelope, errorResponses, id32, jsonContent, jsonRequest, operationTraits, router, unixSeconds, type OperationTraits } from "../operations.ts";
import { jsonBody } from "../validation.ts";
import { consentSchema } from "./grants.ts";

const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;
const WRITE_ERRORS = ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"] as const;
const registerTraits: OperationTraits = { group: "grants", auth: "user", body: true, errors: ["INVALID_KEY_FORMAT", "CONSENT_REJECTED", ...WRITE_ERRORS] };
const readTraits: OperationTraits = { group: "grants", errors: ["INVALID_PARAMETER", "NOT_FOUND", "ROLLUP_UNAVAILABLE"] };

export const registerOwnerKeyRoute = createRoute({
  method: "post",
  path: "/api/core/owner-key",
  summary:
    "Extension: register the token owner's own NaCl public key, with its EIP-712 signature of OwnerKey(address owner,bytes32 keyId,bytes32 nonce,uint64 deadline) (keyId = keccak256 of the key's 32 bytes); data of schemas that seal to the owner is sealed to it",
  ...operationTraits(registerTraits),
  request: jsonRequest(
    z.object({
      publicKey: z.string().openapi({ description: "base64 of a 32-byte NaCl (X25519) public key" }),
      consent: consentSchema,
    }),
  ),
  responses: {
    200: jsonContent(envelope(z.object({ keyId: id32, txHash: id32 })), "Registered"),
    ...errorResponses(registerTraits),
  },
});

export const ownerKeyRoute = createRoute({
  method: "get",
  path: "/api/core/owner-key/{address}",
  summary: "Extension: an address's newest own key (what its data and the content keys shared with it are sealed to)",
  ...operationTraits(readTraits),
  request: { params: z.object({ address: addressParam.openapi({ description: "the key's owner" }) }) },
  responses: {
    200: jsonContent(envelope(z.object({ owner: addressOut, keyId: id32, publicKey: z.string(), algorithm: z.literal("nacl-box"), createdAt: unixSeconds })), "The key"),
    ...errorResponses(readTraits),
  },
});

export function keyRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "grants", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");
  return router<{ Variables: AuthVariables }>()
    .openapi({ ...registerOwnerKeyRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const { publicKey, consent } = c.req.valid("json");
      if (!BASE64_KEY.test(publicKey) || Buffer.from(publicKey, "base64").toString("base64") !== publicKey) {
        throw new ApiError("INVALID_KEY_FORMAT", "The key is not a base64-encoded NaCl public key", { expected: "a base64-encoded 32-byte NaCl public key", received: "not 32 bytes of base64" });
      }
      const submitted = await services.write("register_owner_key", {
        public_key: publicKey,
        algorithm: "nacl-box",
        owner: c.get("auth").sub,
        consent: { nonce: consent.nonce as Hex, deadline: consent.deadline, signature: consent.signature as Hex },
      });
      return c.json({ success: true as const, data: { keyId: keyIdOf(new Uint8Array(Buffer.from(publicKey, "base64"))), txHash: submitted.txHash } }, 200);
    })
    .openapi({ ...ownerKeyRoute, middleware: [limited] }, async (c) => {
      const owner = c.req.valid("param").address.toLowerCase();
      const key = await services.reader.query("owner_key", { owner });
      return c.json({ success: true as const, data: { owner: key.owner, keyId: key.key_id, publicKey: key.public_key, algorithm: key.algorithm, createdAt: key.created_at } }, 200);
    });
}
