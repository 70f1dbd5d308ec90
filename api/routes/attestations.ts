/**
 * Endpoints 8–10: claims (fetch a provider value, bucket it, seal it, record it through the rollup) and
 * attestation reads.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { messageOf } from "../../common/errors.ts";
import { inputTransaction } from "../rollup/chain-reader.ts";
import type { Hex } from "viem";
import { bucketDefinitionProblem, bucketOf, sameBucketDefinition, type BucketDefinition } from "../../common/buckets.ts";
import { writeIdOf } from "../../common/ids.ts";
import { nativeKeccakHex } from "../../common/native-keccak.ts";
import { PROOF_MODES, type ProofKind } from "../../common/tls-claim.ts";
import type { AttestationView } from "../../common/wire.ts";
import type { AuthVariables } from "../auth/middleware.ts";
import { requireRole } from "../auth/middleware.ts";
import { ApiError } from "../errors.ts";
import {
  DEFAULT_PROVIDER_MAX_BODY_BYTES,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  fetchProviderJson,
  readNumericField,
} from "../provider/index.ts";
import { fetchProven, type ProvenFetch } from "../provider/proven.ts";
import { rateLimit, type ClientAddressOf } from "../rate-limit.ts";
import { sealForKey } from "../seal.ts";
import type { ApiServices } from "../services.ts";
import {
  addressOut,
  addressParam,
  claimIdParams,
  envelope,
  errorResponses,
  id32,
  jsonContent,
  jsonRequest,
  operationTraits,
  router,
  unixSeconds,
  type OperationTraits,
} from "../operations.ts";
import { HEX32_RE, hex32Schema, invalidParameter, jsonBody } from "../validation.ts";

const claimSchema = z.object({
  provider: z.string().min(1).openapi({ description: 'the provider type; only "http" is supported' }),
  params: z.object({
    url: z.string().min(1),
    method: z.string().min(1).default("GET"),
    headers: z.record(z.string(), z.string()).default({}),
  }),
  bucketDefinition: z
    .object({
      field: z.string().min(1).openapi({ description: "dot path into the provider's JSON" }),
      boundaries: z.array(z.number()),
      labels: z.array(z.string()),
    })
    .superRefine((def, ctx) => {
      const problem = bucketDefinitionProblem(def);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    }),
  schemaId: hex32Schema.optional(),
  proofMode: z
    .enum(PROOF_MODES)
    .optional()
    .openapi({
      description:
        'extension, for schemas that require proof: "reveal" lets the attestor read the whole response (fast); "zk" shows it only the field and proves the rest in zero knowledge (slower). Default: the api\'s ATTESTOR_MODE',
    }),
});

const claimTraits: OperationTraits = {
  group: "attestations",
  auth: "user",
  body: true,
  errors: [
    "SCHEMA_NOT_FOUND",
    "ENCRYPTION_KEY_MISSING",
    "INVALID_PARAMETER",
    "PROVIDER_UNAVAILABLE",
    "PROVIDER_AUTH_FAILED",
    "PROVIDER_INVALID_RESPONSE",
    "ZKTLS_PROOF_FAILED",
    "ROLLUP_UNAVAILABLE",
    "ROLLUP_REJECTED",
    "INPUT_TX_FAILED",
    "RPC_UNAVAILABLE",
    "INSUFFICIENT_FUNDS",
    "NONCE_TOO_LOW",
  ],
};

export const claimRoute = createRoute({
  method: "post",
  path: "/api/core/claim",
  summary: "Read a provider value, bucket it and attest it for the token's address",
  ...operationTraits(claimTraits),
  request: jsonRequest(claimSchema),
  responses: {
    200: jsonContent(envelope(z.object({ claimId: id32, txHash: id32, bucket: z.string() })), "Claimed"),
    ...errorResponses(claimTraits),
  },
});

const attestationTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE"] };

export const attestationRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}",
  summary: "One attestation",
  ...operationTraits(attestationTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          provider: z.string(),
          bucket: z.string(),
          timestamp: unixSeconds,
          owner: addressOut,
          // Extensions: where the attestation comes from, so a reader can find its schema, input and notice.
          schemaId: id32,
          inputIndex: z.number().int().nonnegative(),
          itemIndex: z.number().int().nonnegative().nullable().describe("its position in a batch input, null when its input was not a batch"),
          attestor: addressOut.nullable().describe("the TLS attestor whose signed claim the rollup checked, null when the value was not proven"),
        }),
      ),
      "The attestation (schemaId, inputIndex, itemIndex and attestor are extensions)",
    ),
    ...errorResponses(attestationTraits),
  },
});

const inputTraits: OperationTraits = { group: "attestations", errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE", "RPC_UNAVAILABLE"] };

export const attestationInputRoute = createRoute({
  method: "get",
  path: "/api/core/attestation/{claimId}/input",
  summary: "Extension: the input that created the attestation, its block and the transaction that added it to the InputBox",
  ...operationTraits(inputTraits),
  request: claimIdParams,
  responses: {
    200: jsonContent(
      envelope(
        z.object({
          claimId: id32,
          inputIndex: z.number().int().nonnegative(),
          itemIndex: z.number().int().nonnegative().nullable(),
          blockNumber: z.number().int().nonnegative(),
          txHash: id32,
        }),
      ),
      "The attestation's input",
    ),
    ...errorResponses(inputTraits),
  },
});

const byOwnerTraits: OperationTraits = { group: "attestations", errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"] };

export const attestationsByOwnerRoute = createRoute({
  method: "get",
  path: "/api/core/attestations/{address}",
  summary: "Attestations of an owner, in creation order",
  ...operationTraits(byOwnerTraits),
  request: { params: z.object({ address: addressParam.openapi({ description: "owner address" }) }) },
  responses: {
    200: jsonContent(
      envelope(z.array(z.object({ claimId: id32, provider: z.string(), bucket: z.string(), timestamp: unixSeconds }))),
      "The owner's attestations",
    ),
    ...errorResponses(byOwnerTraits),
  },
});

/** The single bucket label of an attestation (claims through this api always bucket one field). */
function bucketLabel(view: AttestationView): string {
  return Object.values(view.bucket_values)[0] ?? "";
}

/** Any JSON value at a dot path, or null when absent: data keys are sealed as found, whatever their type. */
function valueAtPath(body: unknown, path: string): unknown {
  let current: unknown = body;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? null : current;
}

interface ChosenSchema {
  schemaId: Hex;
  definition: BucketDefinition;
  dataKeys: string[];
  proof: ProofKind;
}

export function attestationRoutes(services: ApiServices, clientOf: ClientAddressOf) {
  const limited = rateLimit(services.limiter, "attestations", clientOf);
  const user = requireRole(services.config.jwtSecret, "user");

  /**
   * Reads the notices the follower has not read yet. The follower polls every NOTICE_POLL_MS, so a claim
   * uses what it knows and catches up only when that lacks something (a schema or key registered a
   * moment ago, through another replica or straight to the InputBox): a claim no longer waits on a
   * notices query of its own. A node that cannot be read leaves what we already know.
   */
  const catchUp = (): Promise<void> => services.follower.sync().catch(() => undefined);

  /** The schema for a claim: the one named, else the most recent one for this provider and host that buckets `field`. */
  async function chooseSchema(provider: string, host: string, field: string, schemaId: Hex | undefined) {
    if (schemaId !== undefined) {
      const schema = await services.reader.query("provider_schema", { schema_id: schemaId });
      // The rollup has it, so its notice exists: the domain check below must not be skipped for want of it.
      if (services.catalog.schemaContent(schemaId) === undefined) await catchUp();
      if (schema.provider_type !== provider) {
        throw new ApiError("INVALID_REQUEST", `Schema ${schemaId} is for provider ${schema.provider_type}`, {
          field: "provider",
          issue: `schema ${schemaId} expects provider ${schema.provider_type}`,
        });
      }
      const domain = services.catalog.schemaContent(schemaId)?.domain;
      if (domain !== undefined && domain !== host) {
        throw new ApiError("INVALID_REQUEST", `The URL's host is not the schema's domain ${domain}`, {
          field: "params.url",
          issue: `host must be ${domain}`,
        });
      }
      const definition = schema.bucket_definitions[field];
      if (definition === undefined) throw noDefinition(schemaId, field);
      return { schemaId, definition, dataKeys: schema.data_keys, proof: schema.proof } satisfies ChosenSchema;
    }
    let candidates = services.catalog.schemasFor(provider, host);
    if (!candidates.some((s) => s.content.bucketDefinitions[field] !== undefined)) {
      await catchUp();
      candidates = services.catalog.schemasFor(provider, host);
    }
    const latest = candidates[candidates.length - 1];
    if (latest === undefined) {
      throw new ApiError("SCHEMA_NOT_FOUND", `No ${provider} schema is registered for ${host}`, {
        schema_id: null,
        provider,
        domain: host,
      });
    }
    const chosen = [...candidates].reverse().find((s) => s.content.bucketDefinitions[field] !== undefined);
    const definition = chosen?.content.bucketDefinitions[field];
    if (chosen === undefined || definition === undefined) throw noDefinition(latest.schemaId, field);
    return { schemaId: chosen.schemaId, definition, dataKeys: chosen.content.dataKeys, proof: chosen.content.proof ?? "none" } satisfies ChosenSchema;
  }

  return router<{ Variables: AuthVariables }>()
    .openapi({ ...claimRoute, middleware: [limited, user, jsonBody] }, async (c) => {
      const body = c.req.valid("json");
      const owner = c.get("auth").sub;
      if (body.provider !== "http") {
        throw new ApiError("INVALID_REQUEST", `Unsupported provider ${body.provider}`, {
          field: "provider",
          issue: 'only provider "http" is supported',
        });
      }
      let host: string;
      try {
        host = new URL(body.params.url).hostname.toLowerCase().replace(/^\[|\]$/g, "");
      } catch {
        // The same answer the provider fetch gives for a URL it cannot parse.
        throw invalidParameter("params.url", "(not a valid URL)", "an absolute http(s) URL");
      }
      const { field, boundaries, labels } = body.bucketDefinition;
      const schema = await chooseSchema(body.provider, host, field, body.schemaId);
      if (!sameBucketDefinition({ boundaries, labels }, schema.definition)) {
        throw new ApiError("INVALID_REQUEST", `bucketDefinition differs from schema ${schema.schemaId}'s for ${field}`, {
          field: "bucketDefinition",
          issue: `must equal the schema's definition for ${field}`,
        });
      }
      if (services.catalog.latestKey === undefined) await catchUp();
      const key = services.catalog.latestKey;
      if (key === undefined) throw new ApiError("ENCRYPTION_KEY_MISSING", "No encryption key is registered");
      // A schema that requires proof gets its value through the TLS attestor, with the signed claim to show.
      let fetched: { body: unknown };
      let value: number;
      let proven: ProvenFetch | undefined;
      if (schema.proof === "attestor") {
        proven = await fetchProven(
          {
            url: body.params.url,
            method: body.params.method,
            headers: body.params.headers,
            field,
            owner,
            schemaId: schema.schemaId,
            ...(body.proofMode === undefined ? {} : { mode: body.proofMode }),
          },
          {
            pool: services.attestor,
            allowedHosts: services.config.providerAllowedHosts,
            registeredAttestors: services.registeredAttestors,
          },
        );
        fetched = proven;
        value = proven.value;
      } else {
        fetched = await fetchProviderJson(
          { url: body.params.url, method: body.params.method, headers: body.params.headers },
          {
            allowedHosts: services.config.providerAllowedHosts,
            timeoutMs: DEFAULT_PROVIDER_TIMEOUT_MS,
            maxBodyBytes: DEFAULT_PROVIDER_MAX_BODY_BYTES,
          },
        );
        value = readNumericField(fetched.body, field);
      }
      const bucket = bucketOf(value, schema.definition);
      if (bucket === undefined) {
        // Never echo the value: it is private, only its bucket is ever published.
        throw new ApiError("PROVIDER_INVALID_RESPONSE", "The provider's value falls outside every bucket", {
          expected: `a value within the buckets of ${field}`,
          received: "a value outside every bucket",
        });
      }
      const sealedContent: Record<string, unknown> = {};
      for (const dataKey of schema.dataKeys) sealedContent[dataKey] = valueAtPath(fetched.body, dataKey);
      sealedContent[field] = value;
      const encrypted = sealForKey(new TextEncoder().encode(JSON.stringify(sealedContent)), key.publicKey);
      const submitted = await services.write(
        "create_attestation",
        {
          schema_id: schema.schemaId,
          owner,
          provider: body.provider,
          encrypted_data: encrypted,
          bucket_values: { [field]: bucket },
          ...(proven === undefined ? {} : { proof: proven.proof }),
        },
        { schemaId: schema.schemaId },
      );
      const claimId = writeIdOf("create_attestation", submitted.inputIndex, submitted.item, nativeKeccakHex);
      // The line that ties the request to its input and its notice (the notice's claimId).
      services.logger.info(
        {
          reqId: c.get("requestId"),
          claimId,
          inputIndex: submitted.inputIndex,
          item: submitted.item,
          txHash: submitted.txHash,
          schemaId: schema.schemaId,
          ...(proven === undefined ? {} : { attestor: proven.attestor, mode: proven.mode }),
        },
        "claim recorded",
      );
      return c.json({ success: true as const, data: { claimId, txHash: submitted.txHash, bucket } }, 200);
    })
    .openapi({ ...attestationRoute, middleware: [limited] }, async (c) => {
      const { claimId } = c.req.valid("param");
      // Ids are hashes: anything else names no attestation, answered without a round trip.
      if (!HEX32_RE.test(claimId)) {
        throw new ApiError("ATTESTATION_NOT_FOUND", "Attestation not found", { claim_id: claimId });
      }
      const view = await services.reader.query("attestation", { attestation_id: claimId.toLowerCase() });
      return c.json(
        {
          success: true as const,
          data: {
            claimId: view.attestation_id,
            provider: await services.providerTypeOf(view.schema_id),
            bucket: bucketLabel(view),
            timestamp: view.timestamp,
            owner: view.owner,
            schemaId: view.schema_id,
            inputIndex: view.input_index,
            itemIndex: view.item_index,
            attestor: view.attestor,
          },
        },
        200,
      );
    })
    .openapi({ ...attestationInputRoute, middleware: [limited] }, async (c) => {
      const { claimId } = c.req.valid("param");
      if (!HEX32_RE.test(claimId)) throw new ApiError("ATTESTATION_NOT_FOUND", "Attestation not found", { claim_id: claimId });
      const view = await services.reader.query("attestation", { attestation_id: claimId.toLowerCase() });
      let blockNumber: number;
      try {
        blockNumber = await services.node.inputBlock(view.input_index);
      } catch (error) {
        throw new ApiError("ROLLUP_UNAVAILABLE", "The rollup's reader does not answer", { url: services.node.url, error: messageOf(error) });
      }
      let txHash: Hex | undefined;
      try {
        txHash = await inputTransaction(services.submitter.publicClient, services.config.inputBoxAddress, services.config.dappAddress, view.input_index, blockNumber, services.config.rollups);
      } catch (error) {
        throw new ApiError("RPC_UNAVAILABLE", `The chain's JSON-RPC does not answer: ${messageOf(error)}`, { url: services.config.rpcUrl });
      }
      if (txHash === undefined) {
        throw new ApiError("RPC_UNAVAILABLE", `The chain has no InputAdded log for the attestation's input in block ${blockNumber}`, { url: services.config.rpcUrl });
      }
      return c.json(
        { success: true as const, data: { claimId: view.attestation_id, inputIndex: view.input_index, itemIndex: view.item_index, blockNumber, txHash } },
        200,
      );
    })
    .openapi({ ...attestationsByOwnerRoute, middleware: [limited] }, async (c) => {
      const owner = c.req.valid("param").address.toLowerCase();
      const items = await services.reader.queryAll("attestations_by_owner", { owner });
      const data = [];
      for (const item of items) {
        data.push({
          claimId: item.attestation_id,
          provider: await services.providerTypeOf(item.schema_id),
          bucket: bucketLabel(item),
          timestamp: item.timestamp,
        });
      }
      return c.json({ success: true as const, data }, 200);
    });
}

function noDefinition(schemaId: Hex, field: string): ApiError {
  return new ApiError("INVALID_REQUEST", `Schema ${schemaId} has no bucket definition for ${field}`, {
    field: "bucketDefinition.field",
    issue: `schema ${schemaId} defines no bucket for ${field}`,
  });
}
