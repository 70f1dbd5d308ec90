/**
 * The OpenAPI 3.1 description of every endpoint, served at GET /api/core/openapi.json. A test checks
 * that each route the app registers appears here, so the document cannot silently fall behind.
 */
import { API_ERROR_STATUS } from "./errors.ts";
import { RATE_LIMIT_GROUPS, type RateLimitGroup } from "./rate-limit.ts";

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Json => (description === undefined ? { type: "string" } : { type: "string", description });
const int = (description?: string): Json => (description === undefined ? { type: "integer" } : { type: "integer", description });
const obj = (properties: Record<string, Json>, required: string[] = Object.keys(properties)): Json => ({
  type: "object",
  properties,
  required,
});
const envelope = (data?: Json): Json =>
  data === undefined
    ? obj({ success: { const: true } })
    : obj({ success: { const: true }, data });

const address: Json = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" };
const id32: Json = { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" };

interface Operation {
  summary: string;
  group: RateLimitGroup | undefined;
  auth?: "admin" | "user";
  params?: { name: string; schema: Json; description: string }[];
  body?: Json;
  response: Json;
  errors: string[];
}

function operation(op: Operation): Json {
  const responses: Json = {
    "200": { description: "Success", content: { "application/json": { schema: op.response } } },
  };
  const codes = [...op.errors];
  if (op.auth !== undefined) codes.push("AUTH_MISSING", "AUTH_INVALID", "AUTH_INSUFFICIENT");
  if (op.body !== undefined) codes.push("INVALID_REQUEST");
  if (op.group !== undefined) codes.push("RATE_LIMITED");
  codes.push("INTERNAL_ERROR");
  const byStatus = new Map<number, Set<string>>();
  for (const code of codes) {
    const status = API_ERROR_STATUS[code as keyof typeof API_ERROR_STATUS];
    if (status === undefined) continue;
    if (!byStatus.has(status)) byStatus.set(status, new Set());
    byStatus.get(status)?.add(code);
  }
  for (const [status, set] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error: ${[...set].join(", ")}`,
      content: { "application/json": { schema: ref("Error") } },
    };
  }
  const out: Json = { summary: op.summary, responses };
  if (op.group !== undefined) {
    out["x-rate-limit"] = { group: op.group, limit: RATE_LIMIT_GROUPS[op.group], window: "60s" };
  }
  if (op.auth !== undefined) {
    out.security = [{ bearer: [] }];
    out["x-role"] = op.auth;
  }
  if (op.params !== undefined) {
    out.parameters = op.params.map((p) => ({ name: p.name, in: "path", required: true, schema: p.schema, description: p.description }));
  }
  if (op.body !== undefined) {
    out.requestBody = { required: true, content: { "application/json": { schema: op.body } } };
  }
  return out;
}

const bucketDefinition = obj({ boundaries: { type: "array", items: { type: "number" } }, labels: { type: "array", items: str() } });

export function openApiDocument(version: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Attestation API",
      version,
      description:
        "Attestations recorded through a Cartesi rollup. Every success body is {success: true, data} (except /healthcheck); every error is {success: false, error: {code, message, details?}}. Events: WebSocket at /ws.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: {
        Error: obj({
          success: { const: false },
          error: obj({ code: str(), message: str(), details: { type: "object" } }, ["code", "message"]),
        }),
        BucketDefinition: bucketDefinition,
        SchemaRegistration: obj(
          {
            provider: str("provider type, e.g. http"),
            flowType: str(),
            domain: str("provider host name"),
            bucketDefinitions: { type: "object", additionalProperties: ref("BucketDefinition") },
            dataKeys: { type: "array", items: str() },
            freshnessHalfLife: { type: "number", description: "seconds" },
            name: str(),
            description: str(),
          },
          ["provider", "flowType", "domain", "bucketDefinitions", "dataKeys", "freshnessHalfLife"],
        ),
      },
    },
    paths: {
      "/healthcheck": {
        get: operation({
          summary: "Liveness of the api (no envelope)",
          group: "health",
          response: obj({ status: str(), version: str(), core_enabled: { type: "boolean" } }),
          errors: [],
        }),
      },
      "/api/core/status": {
        get: operation({
          summary: "Whether the core is enabled and the rollup reachable",
          group: "health",
          response: envelope(obj({ enabled: { type: "boolean" }, rollupConnected: { type: "boolean" }, dappAddress: address })),
          errors: [],
        }),
      },
      "/api/core/health": {
        get: operation({
          summary: "Health of the attestor, the rollup and the chain: ok | degraded | down",
          group: "health",
          response: envelope(obj({ attestor: str(), rollup: str(), blockchain: str() })),
          errors: [],
        }),
      },
      "/api/core/schemas": {
        get: operation({
          summary: "All provider schemas",
          group: "schemas",
          response: envelope({
            type: "array",
            items: obj({ schema_id: id32, name: str(), description: str(), provider_type: str() }),
          }),
          errors: ["ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/schemas/{schemaId}": {
        get: operation({
          summary: "One provider schema with its bucket definitions",
          group: "schemas",
          params: [{ name: "schemaId", schema: str(), description: "schema id" }],
          response: envelope(
            obj({
              schema_id: id32,
              name: str(),
              description: str(),
              provider_type: str(),
              bucket_definitions: { type: "object", additionalProperties: ref("BucketDefinition") },
            }),
          ),
          errors: ["SCHEMA_NOT_FOUND", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/provider-schema": {
        post: operation({
          summary: "Register a provider schema (admin)",
          group: "admin",
          auth: "admin",
          body: ref("SchemaRegistration"),
          response: envelope(obj({ schema_id: id32 })),
          errors: ["ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
        }),
      },
      "/api/core/encryption-key": {
        post: operation({
          summary: "Register an encryption public key (admin)",
          group: "admin",
          auth: "admin",
          body: obj({ publicKey: str("base64 of a 32-byte NaCl public key"), algorithm: { const: "nacl-box" } }),
          response: envelope(obj({ keyId: id32 })),
          errors: ["INVALID_KEY_FORMAT", "ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
        }),
      },
      "/api/core/claim": {
        post: operation({
          summary: "Read a provider value, bucket it and attest it for the token's address",
          group: "attestations",
          auth: "user",
          body: obj(
            {
              provider: { const: "http" },
              params: obj({ url: str(), method: str(), headers: { type: "object", additionalProperties: str() } }, ["url"]),
              bucketDefinition: obj({
                field: str("dot path into the provider's JSON"),
                boundaries: { type: "array", items: { type: "number" } },
                labels: { type: "array", items: str() },
              }),
              schemaId: id32,
            },
            ["provider", "params", "bucketDefinition"],
          ),
          response: envelope(obj({ claimId: id32, txHash: id32, bucket: str() })),
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
        }),
      },
      "/api/core/attestation/{claimId}": {
        get: operation({
          summary: "One attestation",
          group: "attestations",
          params: [{ name: "claimId", schema: str(), description: "claim id (= attestation_id)" }],
          response: envelope(obj({ claimId: id32, provider: str(), bucket: str(), timestamp: int("Unix seconds"), owner: address })),
          errors: ["ATTESTATION_NOT_FOUND", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/attestation/{claimId}/data": {
        get: operation({
          summary:
            "Extension beyond the specification: an attestation's sealed data, for its owner or a requester holding a live grant for its schema (the token's sub is the requester); data is the opened JSON only when the api holds ENCRYPTION_SECRET_KEY",
          group: "attestations",
          auth: "user",
          params: [{ name: "claimId", schema: str(), description: "claim id (= attestation_id)" }],
          response: envelope(
            obj(
              {
                claimId: id32,
                schemaId: id32,
                owner: address,
                encrypted_data: str("0x hex: ephemeral public key (32) | nonce (24) | nacl.box ciphertext"),
                data: { type: "object", description: "the opened plaintext; present only when ENCRYPTION_SECRET_KEY is configured" },
              },
              ["claimId", "schemaId", "owner", "encrypted_data"],
            ),
          ),
          errors: ["ATTESTATION_NOT_FOUND", "NO_GRANT_FOUND", "GRANT_EXPIRED", "DECRYPTION_FAILED", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/attestation/{claimId}/proof": {
        get: operation({
          summary:
            "Extension (DECISIONS.md section 13): the attestation's notice and its v1 proof, ready for CartesiDApp.validateNotice(notice, proof) at applicationAddress; PROOF_NOT_READY (with Retry-After) while its epoch is not claimed",
          group: "attestations",
          params: [{ name: "claimId", schema: str(), description: "claim id (= attestation_id)" }],
          response: envelope(
            obj({
              claimId: id32,
              applicationAddress: address,
              inputIndex: int("index of the input that created it"),
              noticeIndex: int("index of its notice within the input"),
              notice: str("0x hex: the notice payload (UTF-8 JSON {event, data})"),
              proof: obj({
                context: str("0x hex: abi.encode(uint256 claim index in the History)"),
                validity: obj({
                  inputIndexWithinEpoch: int(),
                  outputIndexWithinInput: int(),
                  outputHashesRootHash: id32,
                  vouchersEpochRootHash: id32,
                  noticesEpochRootHash: id32,
                  machineStateHash: id32,
                  outputHashInOutputHashesSiblings: { type: "array", items: id32 },
                  outputHashesInEpochSiblings: { type: "array", items: id32 },
                }),
              }),
            }),
          ),
          errors: ["ATTESTATION_NOT_FOUND", "PROOF_NOT_READY", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/attestations/{address}": {
        get: operation({
          summary: "Attestations of an owner, in creation order",
          group: "attestations",
          params: [{ name: "address", schema: address, description: "owner address" }],
          response: envelope({
            type: "array",
            items: obj({ claimId: id32, provider: str(), bucket: str(), timestamp: int("Unix seconds") }),
          }),
          errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/grant": {
        post: operation({
          summary: "Grant a requester access to the token owner's data of one schema",
          group: "grants",
          auth: "user",
          body: obj({ requester: address, schemaId: id32, expiresAt: int("Unix seconds, in the future") }),
          response: envelope(obj({ grantId: id32, txHash: id32 })),
          errors: ["SCHEMA_NOT_FOUND", "ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
        }),
      },
      "/api/core/grant/{grantId}": {
        delete: operation({
          summary: "Revoke one of the token owner's grants",
          group: "grants",
          auth: "user",
          params: [{ name: "grantId", schema: str(), description: "grant id" }],
          response: envelope(),
          errors: ["NOT_OWNER", "NOT_FOUND", "ROLLUP_REJECTED", "ROLLUP_UNAVAILABLE", "INPUT_TX_FAILED", "RPC_UNAVAILABLE", "INSUFFICIENT_FUNDS", "NONCE_TOO_LOW"],
        }),
      },
      "/api/core/access/{owner}/{requester}": {
        get: operation({
          summary: "Whether a requester holds live grants from an owner (now = the api's clock)",
          group: "grants",
          params: [
            { name: "owner", schema: address, description: "data owner" },
            { name: "requester", schema: address, description: "requesting address" },
          ],
          response: envelope(
            obj({
              hasAccess: { type: "boolean" },
              grants: { type: "array", items: obj({ grantId: id32, schemaId: id32, expiresAt: int() }) },
            }),
          ),
          errors: ["INVALID_PARAMETER", "ROLLUP_UNAVAILABLE"],
        }),
      },
      "/api/core/auth/nonce": {
        get: operation({
          summary: "A single-use nonce for a Sign-In with Ethereum message (valid 10 minutes)",
          group: "auth",
          response: envelope(obj({ nonce: str(), expiresAt: int(), domain: str(), chainId: int() })),
          errors: [],
        }),
      },
      "/api/core/auth/login": {
        post: operation({
          summary: "Exchange a signed SIWE message for a user token",
          group: "auth",
          body: obj({ message: str("EIP-4361 message"), signature: str("0x-prefixed signature") }),
          response: envelope(obj({ token: str(), expiresAt: int() })),
          errors: ["AUTH_INVALID"],
        }),
      },
      "/api/core/openapi.json": {
        get: operation({
          summary: "This document",
          group: undefined,
          response: { type: "object" },
          errors: [],
        }),
      },
    },
  };
}
