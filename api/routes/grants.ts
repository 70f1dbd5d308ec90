/** Endpoints 11–13: owners grant and revoke access per schema; anyone checks access. */
import { createRoute, z } from "@hono/zod-openapi";
import { addressSchema } from "../../common/address.ts";
import { writeIdOf } from "../../common/ids.ts";
import { nativeKeccakHex } from "../../common/native-keccak.ts";
import { consentDomain } from "../../common/consent.ts";
import type { Hex } from "viem";
import { requireRole, type AuthVariables } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import type { ApiServices } from "../services.ts";
import {
  addressOut,
  addressParam,
  emptyEnvelope,
  envelope,
  errorResponses,
  id32,
  idParam,
  jsonContent,
  jsonRequest,
  operationTraits,
  router,
  unixSeconds,
  type OperationTraits,
} from "../operations.ts";
import { HEX32_RE, hex32Schema, jsonBody } from "../validation.ts";

/** The owner's EIP-712 signature of a grant or a revoke (common/consent.ts): the rollup checks it, not the api. */
export const consentSchema = z
  .object({
    nonce: hex32Schema.openapi({ description: "32 random bytes, used once" }),
    deadline: z.number().int().nonnegative().openapi({ description: "Unix seconds after which the rollup refuses the signature (block time)" }),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "a 0x-prefixed 65-byte hex signature"),
  })
  .openapi("SignedConsent", {
    description: "extension: the owner's EIP-712 signature (domain: GET /api/core/consent/domain; types Grant and RevokeGrant, docs/consent.md); the grant is then recorded as signed",
  });

/** Content keys the owner sealed on its side for the requester's key (client/keys.ts), one per attestation. */
const sharedKeysSchema = z
  .array(
    z.object({
      attestationId: hex32Schema,
      sealedKey: z.string().regex(/^0x[0-9a-fA-F]{208}$/, "the 0x hex of a 104-byte sealed content key"),
    }),
  )
  .min(1)
  .max(256)
  .openapi({ description: "extension, for schemas that seal to the owner: content keys of the owner's attestations, sealed on its side to the requester's key" });

const grantSchema = z.object({
  requester: addressSchema,
  schemaId: hex32Schema,
  expiresAt: z.number().int().positive().openapi({ description: "Unix seconds, in the future" }),
  consent: consentSchema.optional(),
  keys: sharedKeysSchema.optional(),
});

const toSharedKeys = (keys: z.infer<typeof sharedKeysSchema>) => keys.map((k) => ({ attestation_id: k.attestationId.toLowerCase() as Hex, sealed_key: k.sealedKey.toLowerCase() as Hex }));

const consentKind = z.enum(["signed", "owner", "relayed"]).describe("extension: whose word made it — the owner's signature, the owner's own wallet, or the api's relay");

const WRITE_ERRORS = ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"] as const;
const grantTraits: OperationTraits = { group: "grants", auth: "user", body: true, errors: ["SCHEMA_NOT_FOUND", "CONSENT_REJECTED", ...WRITE_ERRORS] };
const revokeTraits: OperationTraits = { group: "grants", auth: "user", errors: ["NOT_OWNER", "NOT_FOUND", "CONSENT_REJECTED", ...WRITE_ERRORS] };
const accessTraits: OperationTraits = { group: "grants", errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"] };

export const grantRoute = createRoute({
  method: "post",
  path: "/api/core/grant",
  summary: "Grant a requester access to the token owner's data of one schema",
  ...operationTraits(grantTraits),
  request: jsonRequest(grantSchema),
  responses: {
    200: jsonContent(envelope(z.object({ grantId: id32, txHash: id32 })), "Granted"),
    ...errorResponses(grantTraits),
  },
});

export const revokeRoute = createRoute({
  method: "delete",
  path: "/api/core/grant/{grantId}",
  summary: "Revoke one of the token owner's grants",
  ...operationTraits(revokeTraits),
  request: {
    params: z.object({ grantId: idParam("grant id") }),
    body: { required: false, content: { "application/json": { schema: z.object({ consent: consentSchema.optional() }) } } },
  },
  responses: {
    200: jsonContent(emptyEnvelope, "Revoked"),
    ...errorResponses(revokeTraits),
  },
});

export const accessRoute = createRoute({
  method: "get",
  path: "/api/core/access/{owner}/{requester}",
  summary: "Whether a requester holds live grants from an owner (now = the api's clock)",
  ...operationTraits(accessTraits),
  request: {
    params: z.object({
      owner: addressParam.openapi({ description: "data owner" }),
      requester: addressParam.openapi({ description: "requesting address" }),
    }),
  },
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          hasAccess: z.boolean(),
          grants: z.array(z.object({ grantId: id32, schemaId: id32, expiresAt: unixSeconds, consent: consentKind })),
        }),
      ),
      "The live grants",
    ),
    ...errorResponses(accessTraits),
  },
});

const shareTraits: OperationTraits = { group: "grants", auth: "user", body: true, errors: ["NOT_OWNER", "NOT_FOUND", "ATTESTATION_NOT_FOUND", ...WRITE_ERRORS] };

export const shareKeysRoute = createRoute({
  method: "post",
  path: "/api/core/grant/{grantId}/keys",
  summary: "Extension: more content keys for one of the token owner's standing grants (attestations made after it); a revoked or expired grant takes none",
  ...operationTraits(shareTraits),
  request: { params: z.object({ grantId: idParam("grant id") }), ...jsonRequest(z.object({ keys: sharedKeysSchema })) },
  responses: {
    200: jsonContent(envelope(z.object({ grantId: id32, txHash: id32, shared: z.number().int() })), "Shared"),
    ...errorResponses(shareTraits),
  },
});

export const consentDomainRoute = createRoute({
  method: "get",
  path: "/api/core/consent/domain",
  summary:
    "Extension: the EIP-712 domain an owner signs a grant or a revoke in (this chain, this application); the types are Grant(address owner,address requester,bytes32 schemaId,uint64 expiresAt,bytes32 nonce,uint64 deadline) and RevokeGrant(address owner,bytes32 grantId,bytes32 nonce,uint64 deadline)",
  ...operationTraits({ group: "grants" }),
  responses: {
    200: jsonContent(envelope(z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: addressOut })), "The domain"),
    ...errorResponses({ group: "grants" }),
  },
});

const grantsOfTraits: OperationTraits = { group: "grants", errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"] };
/** Owners whose live grants `received` looks up, at most: each is one check_access query. */
const MAX_GRANTORS = 50;

export const grantsOfRoute = createRoute({
  method: "get",
  path: "/api/core/grants/{address}",
  summary: "Grants an address gave (unrevoked, expired included) and live grants it received (extension)",
  ...operationTraits(grantsOfTraits),
  request: { params: z.object({ address: addressParam.openapi({ description: "the address" }) }) },
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          given: z.array(z.object({ grantId: id32, requester: addressOut, schemaId: id32, createdAt: unixSeconds, expiresAt: unixSeconds, consent: consentKind })),
          received: z
            .array(z.object({ grantId: id32, owner: addressOut, schemaId: id32, expiresAt: unixSeconds, consent: consentKind }))
            .describe(`live grants from owners the api saw grant this address (grant notices), at most ${MAX_GRANTORS} owners`),
        }),
      ),
      "Grants given and received",
    ),
    ...errorResponses(grantsOfTraits),
  },
});

export function grantRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "grants", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");
  return router<{ Variables: AuthVariables }>()
    .openapi({ ...grantRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const { requester, schemaId, expiresAt, consent, keys } = c.req.valid("json");
      if (expiresAt <= services.now()) {
        throw new ApiError("INVALID_REQUEST", "expiresAt must be in the future", {
          field: "expiresAt",
          issue: "must be a Unix time (seconds) later than now",
        });
      }
      // The api's wallet relays as operator, naming the token's address as the owner; with the owner's
      // signature the rollup checks the consent itself and records the grant as signed.
      const submitted = await services.write(
        "grant_access",
        {
          requester,
          schema_id: schemaId,
          expires_at: expiresAt,
          owner: c.get("auth").sub,
          ...(consent === undefined ? {} : { consent: { nonce: consent.nonce, deadline: consent.deadline, signature: consent.signature as Hex } }),
          ...(keys === undefined ? {} : { keys: toSharedKeys(keys) }),
        },
        { schemaId },
      );
      return c.json(
        {
          success: true as const,
          data: { grantId: writeIdOf("grant_access", submitted.inputIndex, submitted.item, nativeKeccakHex), txHash: submitted.txHash },
        },
        200,
      );
    })
    .openapi({ ...revokeRoute, middleware: [limited, user] }, async (c) => {
      const { grantId } = c.req.valid("param");
      // Grant ids are hashes: anything else names no grant.
      if (!HEX32_RE.test(grantId)) throw new ApiError("NOT_FOUND", `Grant not found: ${grantId}`);
      // The body is optional (the specification's revoke has none): validated when sent, else undefined.
      const body = c.req.valid("json") as { consent?: z.infer<typeof consentSchema> } | undefined;
      const given = body?.consent;
      const consent = given === undefined ? undefined : { nonce: given.nonce as Hex, deadline: given.deadline, signature: given.signature as Hex };
      await services.write("revoke_grant", {
        grant_id: grantId.toLowerCase() as `0x${string}`,
        owner: c.get("auth").sub,
        ...(consent === undefined ? {} : { consent }),
      });
      return c.json({ success: true as const }, 200);
    })
    .openapi({ ...grantsOfRoute, middleware: [limited] }, async (c) => {
      const address = c.req.valid("param").address.toLowerCase();
      // Who granted to this address comes from the notices: one the request must see (a grant answered
      // before it, through any replica) is read first, beside the owner's own list.
      const [given] = await Promise.all([services.reader.queryAll("grants_by_owner", { owner: address }), services.catchUpNotices()]);
      const now = services.now();
      const received = [];
      for (const owner of services.catalog.grantorsOf(address).slice(0, MAX_GRANTORS)) {
        const access = await services.reader.query("check_access", { owner, requester: address, at: now });
        for (const g of access.grants) received.push({ grantId: g.grant_id, owner, schemaId: g.schema_id, expiresAt: g.expires_at, consent: g.consent });
      }
      return c.json(
        {
          success: true as const,
          data: {
            given: given.map((g) => ({ grantId: g.grant_id, requester: g.requester, schemaId: g.schema_id, createdAt: g.created_at, expiresAt: g.expires_at, consent: g.consent })),
            received,
          },
        },
        200,
      );
    })
    .openapi({ ...shareKeysRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const { grantId } = c.req.valid("param");
      if (!HEX32_RE.test(grantId)) throw new ApiError("NOT_FOUND", `Grant not found: ${grantId}`);
      const { keys } = c.req.valid("json");
      const submitted = await services.write("share_keys", { grant_id: grantId.toLowerCase() as Hex, keys: toSharedKeys(keys), owner: c.get("auth").sub });
      return c.json({ success: true as const, data: { grantId: grantId.toLowerCase(), txHash: submitted.txHash, shared: keys.length } }, 200);
    })
    .openapi({ ...consentDomainRoute, middleware: [limited] }, (c) => {
      const domain = consentDomain(services.config.chainId, services.config.dappAddress);
      return c.json({ success: true as const, data: { name: String(domain.name), version: String(domain.version), chainId: services.config.chainId, verifyingContract: services.config.dappAddress.toLowerCase() } }, 200);
    })
    .openapi({ ...accessRoute, middleware: [limited] }, async (c) => {
      const { owner, requester } = c.req.valid("param");
      const result = await services.reader.query("check_access", {
        owner: owner.toLowerCase(),
        requester: requester.toLowerCase(),
        at: services.now(),
      });
      return c.json(
        {
          success: true as const,
          data: {
            hasAccess: result.has_access,
            grants: result.grants.map((g) => ({ grantId: g.grant_id, schemaId: g.schema_id, expiresAt: g.expires_at, consent: g.consent })),
          },
        },
        200,
      );
    });
}
