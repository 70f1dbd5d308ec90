/**
 * A typed client of the attestation API: one method per endpoint, returning the `data` of the success
 * envelope or throwing `AttestationApiError` with the wire's code, HTTP status and details. A thin layer
 * over openapi-fetch: the paths and every type come from client/schema.d.ts, generated from the api's
 * OpenAPI document (`npm run client:generate`). The WebSocket channel is client/events.ts, exported here too.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.d.ts";

export type { components, paths };
export type Hex = `0x${string}`;
export type Address = `0x${string}`;

/** The success body of an operation (its 200 response). */
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { "application/json": infer B } } };
}
  ? B
  : never;
/** The `data` of an operation's success envelope. */
type Data<P extends keyof paths, M extends keyof paths[P]> = Ok<P, M> extends { data: infer D } ? D : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

export type Healthcheck = Ok<"/healthcheck", "get">;
export type CoreStatus = Data<"/api/core/status", "get">;
export type CoreHealth = Data<"/api/core/health", "get">;
export type HealthStatus = CoreHealth["attestor"];
export type BucketDefinition = components["schemas"]["BucketDefinition"];
export type SchemaListItem = Data<"/api/core/schemas", "get">[number];
export type Schema = Data<"/api/core/schemas/{schemaId}", "get">;
export type SchemaRegistration = components["schemas"]["SchemaRegistration"];
export type ClaimRequest = Body<"/api/core/claim", "post">;
export type ClaimResult = Data<"/api/core/claim", "post">;
export type ProvenClaimRequest = Body<"/api/core/claim/proven", "post">;
export type Attestation = Data<"/api/core/attestation/{claimId}", "get">;
export type AttestationListItem = Data<"/api/core/attestations/{address}", "get">[number];
/** GET /api/core/attestation/:claimId/data (an extension beyond the specification). */
export type AttestationData = Data<"/api/core/attestation/{claimId}/data", "get">;
/**
 * GET /api/core/attestation/:claimId/proof (an extension): on Rollups v1 the arguments for
 * CartesiDApp.validateNotice, on Rollups v2 those for Application.validateOutput (`isV2Proof` tells them apart).
 */
export type AttestationProof = Data<"/api/core/attestation/{claimId}/proof", "get">;
/** The batch notice of an attestation's input (or its revocation's), its proof, and its place in it. */
export type BatchProof = Data<"/api/core/attestation/{claimId}/batch", "get">;
export type OnChainState = Data<"/api/core/attestation/{claimId}/onchain", "get">;
export type V2AttestationProof = Extract<AttestationProof, { output: string }>;
export type V1AttestationProof = Exclude<AttestationProof, V2AttestationProof>;

/** Whether a proof is a Rollups v2 one (`output` and `{outputIndex, outputHashesSiblings}`). */
export function isV2Proof(proof: AttestationProof): proof is V2AttestationProof {
  return "output" in proof;
}
export type RevocationRequest = Body<"/api/core/attestation/{claimId}/revoke", "post">;
export type RevocationResult = Data<"/api/core/attestation/{claimId}/revoke", "post">;
export type VerifyQuery = NonNullable<paths["/api/core/verify"]["get"]["parameters"]["query"]>;
export type VerifyResult = Data<"/api/core/verify", "get">;
export type GrantRequest = Body<"/api/core/grant", "post">;
export type SignedConsent = components["schemas"]["SignedConsent"];
export type ConsentDomain = Data<"/api/core/consent/domain", "get">;
export type GrantResult = Data<"/api/core/grant", "post">;
export type AccessCheck = Data<"/api/core/access/{owner}/{requester}", "get">;
export type AttestationInput = Data<"/api/core/attestation/{claimId}/input", "get">;
export type SignedReceipt = Data<"/api/core/attestation/{claimId}/receipt", "get">;
export type ReceiptVerdict = Data<"/api/core/verify/receipt", "post">;
export type GrantsOf = Data<"/api/core/grants/{address}", "get">;
/** `enabled` defaults to true (the generated component lists it as the server reads it, defaulted). */
export type AttestorRegistration = Omit<components["schemas"]["AttestorRegistration"], "enabled"> & { enabled?: boolean };
export type Attestor = Data<"/api/core/attestors", "get">[number];
export type AuthNonce = Data<"/api/core/auth/nonce", "get">;
export type AuthToken = Data<"/api/core/auth/login", "post">;
export type ErrorBody = components["schemas"]["Error"];

export class AttestationApiError extends Error {
  override readonly name = "AttestationApiError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    readonly headers: Headers,
  ) {
    super(`${code} (${status}): ${message}`);
  }
}

/** GraphQL's answer: the data, and the errors of what failed (each with its message and, where there is one, a code). */
export interface GraphqlResult<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface ClientOptions {
  baseUrl: string;
  token?: string;
  /** Sent with every request (e.g. X-Forwarded-For behind a trusted proxy). */
  headers?: Record<string, string>;
  /** The fetch every request goes through (tests pass one that checks each exchange against the document). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Read-your-writes across calls: the highest input index a write's answer named (`X-Input-Index`), sent as
   * `X-Min-Input-Index` on every later request, so a read never sees a state without this client's writes
   * whichever api replica or reader answers it. Shared by the clients `withToken`/`withHeaders` derive; pass
   * one to share it wider.
   */
  session?: ClientSession;
}

/** What a client and the clients derived from it have seen. */
export interface ClientSession {
  inputIndex: number | undefined;
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === "object" && value !== null && (value as { success?: unknown }).success === false;
}

export class AttestationClient {
  /** The headers of the last response, e.g. to read X-RateLimit-Remaining. */
  lastHeaders: Headers | undefined;
  private readonly api: Client<paths>;

  private readonly session: ClientSession;

  constructor(private readonly options: ClientOptions) {
    this.session = options.session ?? { inputIndex: undefined };
    this.options = { ...options, session: this.session };
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: this.headers(),
      fetch: (request: Request) => this.send(request),
    });
  }

  /** The same client acting with another bearer token. */
  withToken(token: string): AttestationClient {
    return new AttestationClient({ ...this.options, token });
  }

  withHeaders(headers: Record<string, string>): AttestationClient {
    return new AttestationClient({ ...this.options, headers: { ...this.options.headers, ...headers } });
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json", ...this.options.headers, ...extra };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    return headers;
  }

  /** The highest input index this client (and those derived from it) wrote at, or undefined before any write. */
  get inputIndexSeen(): number | undefined {
    return this.session.inputIndex;
  }

  private async send(request: Request): Promise<Response> {
    const seen = this.session.inputIndex;
    if (seen !== undefined) {
      // A caller's own X-Min-Input-Index is kept when it asks for more than the session has seen.
      const asked = Number(request.headers.get("x-min-input-index") ?? Number.NaN);
      if (!(Number.isSafeInteger(asked) && asked > seen)) request.headers.set("x-min-input-index", String(seen));
    }
    const response = await (this.options.fetch ?? fetch)(request);
    this.lastHeaders = response.headers;
    const wrote = Number(response.headers.get("x-input-index") ?? Number.NaN);
    // Compared with the session as it is now, not as it was when this request left: requests in flight
    // together answer in any order, and the mark only rises.
    const now = this.session.inputIndex;
    if (Number.isSafeInteger(wrote) && wrote >= 0 && (now === undefined || wrote > now)) this.session.inputIndex = wrote;
    return response;
  }

  /** One request, whatever its outcome: for callers that inspect statuses and headers (or send bad input). */
  async raw(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<RawResponse> {
    const headers = this.headers(extraHeaders);
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await this.send(
      new Request(`${this.options.baseUrl.replace(/\/+$/, "")}${path}`, {
        method,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
      }),
    );
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: handed back as text.
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  /** The success body of an openapi-fetch call, or its error body as an AttestationApiError. */
  private async ok<B>(pending: Promise<{ data?: B; error?: unknown; response: Response }>): Promise<B> {
    const { data, error, response } = await pending;
    if (data !== undefined && response.ok) return data;
    const wire = isErrorBody(error) ? error.error : undefined;
    throw new AttestationApiError(
      wire?.code ?? "HTTP_ERROR",
      response.status,
      wire?.message ?? `HTTP ${response.status}`,
      wire?.details,
      response.headers,
    );
  }

  /**
   * Extension (docs/graphql.md): EAS's GraphQL, answered from the index of the rollup's notices. It sees this
   * client's own writes (the session's X-Min-Input-Index), waiting for the index as docs/index.md says. A
   * query GraphQL refuses answers its `errors`; an index that cannot answer throws (INDEX_UNAVAILABLE,
   * INDEX_BEHIND).
   */
  async graphql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphqlResult<T>> {
    const { data, error, response } = await this.api.POST("/graphql", { body: { query, ...(variables === undefined ? {} : { variables }) } });
    if (response.status === 200 || (response.status === 400 && !isErrorBody(error))) return (data ?? error) as GraphqlResult<T>;
    return this.ok(Promise.resolve({ error, response }));
  }

  healthcheck(): Promise<Healthcheck> {
    return this.ok(this.api.GET("/healthcheck"));
  }
  async status(): Promise<CoreStatus> {
    return (await this.ok(this.api.GET("/api/core/status"))).data;
  }
  async health(): Promise<CoreHealth> {
    return (await this.ok(this.api.GET("/api/core/health"))).data;
  }
  async schemas(): Promise<SchemaListItem[]> {
    return (await this.ok(this.api.GET("/api/core/schemas"))).data;
  }
  async schema(schemaId: string): Promise<Schema> {
    return (await this.ok(this.api.GET("/api/core/schemas/{schemaId}", { params: { path: { schemaId } } }))).data;
  }
  async registerSchema(registration: SchemaRegistration): Promise<Data<"/api/core/provider-schema", "post">> {
    return (await this.ok(this.api.POST("/api/core/provider-schema", { body: registration }))).data;
  }
  async registerEncryptionKey(key: { publicKey: string; algorithm: "nacl-box" }): Promise<Data<"/api/core/encryption-key", "post">> {
    return (await this.ok(this.api.POST("/api/core/encryption-key", { body: key }))).data;
  }
  /** Extension: trust (or with `enabled: false`, stop trusting) a TLS attestor (admin). */
  async registerAttestor(registration: AttestorRegistration): Promise<Data<"/api/core/attestors", "post">> {
    return (await this.ok(this.api.POST("/api/core/attestors", { body: { enabled: true, ...registration } }))).data;
  }
  /** Extension: the TLS attestors the rollup trusts. */
  async attestors(): Promise<Attestor[]> {
    return (await this.ok(this.api.GET("/api/core/attestors"))).data;
  }
  /** Extension: register the nullifier key set the attestors hold in shares, or a re-sharing of it (admin; docs/nullifiers.md). */
  async registerNullifierKeys(registration: components["schemas"]["NullifierKeyRegistration"]): Promise<Data<"/api/core/nullifier-keys", "post">> {
    return (await this.ok(this.api.POST("/api/core/nullifier-keys", { body: registration }))).data;
  }
  /** Extension: the registered nullifier key set, public keys only (NOT_FOUND before one is registered). */
  async nullifierKeys(): Promise<Data<"/api/core/nullifier-keys", "get">> {
    return (await this.ok(this.api.GET("/api/core/nullifier-keys"))).data;
  }
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    return (await this.ok(this.api.POST("/api/core/claim", { body: request }))).data;
  }
  /**
   * Extension: record a claim proven and sealed on the user's side (client/prove.ts, `npm run prove`) for
   * the token's address. The api gets the signed range claims and the sealed data: no credential, no value.
   */
  async claimProven(request: ProvenClaimRequest): Promise<ClaimResult> {
    return (await this.ok(this.api.POST("/api/core/claim/proven", { body: request }))).data;
  }
  async attestation(claimId: string): Promise<Attestation> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}", { params: { path: { claimId } } }))).data;
  }
  /** Needs a token: the token's address is the requester (the owner, or a holder of a live grant). */
  async attestationData(claimId: string): Promise<AttestationData> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/data", { params: { path: { claimId } } }))).data;
  }
  /** Throws AttestationApiError PROOF_NOT_READY (with retry_after) while the attestation's epoch is open. */
  async attestationProof(claimId: string): Promise<AttestationProof> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/proof", { params: { path: { claimId } } }))).data;
  }
  /**
   * Extension: the batch notice of the input that made the attestation, its proof and the attestation's
   * place in it: what the registry's record(notice, proof) and checkAttestation(notice, proof, at) take.
   */
  async attestationBatch(claimId: string): Promise<BatchProof> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/batch", { params: { path: { claimId } } }))).data;
  }
  /** Extension: the batch notice of the input that revoked the attestation, and its proof; NOT_REVOKED while it stands. */
  async revocationBatch(claimId: string): Promise<BatchProof> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/revocation/batch", { params: { path: { claimId } } }))).data;
  }
  /** Extension: the attestation's state in the registry and the gate beside the application (docs/eas.md). */
  async onChain(claimId: string): Promise<OnChainState> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/onchain", { params: { path: { claimId } } }))).data;
  }
  /** Extension: the notice of the attestation's revocation and its proof; NOT_REVOKED while it stands. */
  async revocationProof(claimId: string): Promise<AttestationProof> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/revocation/proof", { params: { path: { claimId } } }))).data;
  }
  /**
   * Extension: revokes an attestation. A user token withdraws one of its own; an admin token revokes any.
   * `reason` is plain text (no quotes, backslashes or control characters); `supersededBy` names its successor.
   */
  async revokeAttestation(claimId: string, request: RevocationRequest = {}): Promise<RevocationResult> {
    return (await this.ok(this.api.POST("/api/core/attestation/{claimId}/revoke", { params: { path: { claimId } }, body: request }))).data;
  }
  /**
   * Extension: whether `owner` holds a valid attestation of `schemaId` meeting the minimums, at the api's
   * clock (or `at`), with the reasons when not and the base-layer proof of the one relied on when ready.
   */
  async verify(query: { owner: string; schemaId: string; minBucket?: string; bucketField?: string; minFreshness?: number; attestors?: string[]; at?: number }): Promise<VerifyResult> {
    const params: VerifyQuery = {
      owner: query.owner,
      schemaId: query.schemaId,
      ...(query.minBucket === undefined ? {} : { minBucket: query.minBucket }),
      ...(query.bucketField === undefined ? {} : { bucketField: query.bucketField }),
      ...(query.minFreshness === undefined ? {} : { minFreshness: String(query.minFreshness) }),
      ...(query.attestors === undefined ? {} : { attestor: query.attestors.join(",") }),
      ...(query.at === undefined ? {} : { at: String(query.at) }),
    };
    return (await this.ok(this.api.GET("/api/core/verify", { params: { query: params } }))).data;
  }
  async attestations(owner: string): Promise<AttestationListItem[]> {
    return (await this.ok(this.api.GET("/api/core/attestations/{address}", { params: { path: { address: owner as Address } } }))).data;
  }
  async grant(request: GrantRequest): Promise<GrantResult> {
    return (await this.ok(this.api.POST("/api/core/grant", { body: request }))).data;
  }
  /** With `consent` (client/consent.ts signs it), the rollup checks the owner's signature and records the revoke as signed. */
  async revokeGrant(grantId: string, consent?: SignedConsent): Promise<void> {
    await this.ok(this.api.DELETE("/api/core/grant/{grantId}", { params: { path: { grantId } }, ...(consent === undefined ? {} : { body: { consent } }) }));
  }
  /** Extension: registers the token owner's own NaCl key, with its signature (client/keys.ts signOwnerKey). */
  async registerOwnerKey(publicKey: string, consent: SignedConsent): Promise<Data<"/api/core/owner-key", "post">> {
    return (await this.ok(this.api.POST("/api/core/owner-key", { body: { publicKey, consent } }))).data;
  }
  /** Extension: an address's newest own key. */
  async ownerKey(address: string): Promise<Data<"/api/core/owner-key/{address}", "get">> {
    return (await this.ok(this.api.GET("/api/core/owner-key/{address}", { params: { path: { address: address as Address } } }))).data;
  }
  /** Extension: more content keys for one of the token owner's standing grants (client/keys.ts shareContentKeys). */
  async shareKeys(grantId: string, keys: { attestationId: Hex; sealedKey: Hex }[]): Promise<Data<"/api/core/grant/{grantId}/keys", "post">> {
    return (await this.ok(this.api.POST("/api/core/grant/{grantId}/keys", { params: { path: { grantId } }, body: { keys } }))).data;
  }
  /** Extension: the EIP-712 domain owners sign grants and revokes in (client/consent.ts). */
  async consentDomain(): Promise<ConsentDomain> {
    return (await this.ok(this.api.GET("/api/core/consent/domain"))).data;
  }
  async access(owner: string, requester: string): Promise<AccessCheck> {
    return (await this.ok(this.api.GET("/api/core/access/{owner}/{requester}", { params: { path: { owner: owner as Address, requester: requester as Address } } }))).data;
  }
  /** Extension: the input that created an attestation, its block and transaction. */
  async attestationInput(claimId: string): Promise<AttestationInput> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/input", { params: { path: { claimId: claimId as Hex } } }))).data;
  }
  /** Extension (docs/receipts.md): the attestation's receipt, an EAS off-chain attestation, and its signer. */
  async attestationReceipt(claimId: string): Promise<SignedReceipt> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/receipt", { params: { path: { claimId: claimId as Hex } } }))).data;
  }
  /** Extension (docs/receipts.md): the receipt of the attestation's revocation, and its signer. */
  async revocationReceipt(claimId: string): Promise<SignedReceipt> {
    return (await this.ok(this.api.GET("/api/core/attestation/{claimId}/revocation/receipt", { params: { path: { claimId: claimId as Hex } } }))).data;
  }
  /** Extension (docs/receipts.md): the api's verdict on a receipt (VALID, REVOKED, SIGNED, MISMATCH, INVALID, REFUSED). */
  async verifyReceipt(signed: SignedReceipt): Promise<ReceiptVerdict> {
    return (await this.ok(this.api.POST("/api/core/verify/receipt", { body: signed }))).data;
  }
  /** Extension: grants an address gave, and live grants it received. */
  async grantsOf(address: string): Promise<GrantsOf> {
    return (await this.ok(this.api.GET("/api/core/grants/{address}", { params: { path: { address: address as Address } } }))).data;
  }
  async authNonce(): Promise<AuthNonce> {
    return (await this.ok(this.api.GET("/api/core/auth/nonce"))).data;
  }
  async login(message: string, signature: Hex): Promise<AuthToken> {
    return (await this.ok(this.api.POST("/api/core/auth/login", { body: { message, signature } }))).data;
  }
  async openapi(): Promise<Record<string, unknown>> {
    return this.ok(this.api.GET("/api/core/openapi.json"));
  }
}

// The WebSocket channel: client/events.ts.
export * from "./events.ts";
