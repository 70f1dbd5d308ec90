/**
 * A typed client of the attestation API: one method per endpoint, returning the `data` of the success
 * envelope or throwing `AttestationApiError` with the wire's code, HTTP status and details. Plus a small
 * WebSocket helper for the event channel.
 */
import WebSocket from "ws";
import type { BucketDefinition } from "../common/buckets.ts";
import type { HealthStatus, InputParams, OutputValidityProof } from "../common/wire.ts";

export type { BucketDefinition, HealthStatus };
export type Hex = `0x${string}`;
export type Address = `0x${string}`;

export interface Healthcheck {
  status: string;
  version: string;
  core_enabled: boolean;
}
export interface CoreStatus {
  enabled: boolean;
  rollupConnected: boolean;
  dappAddress: Address;
}
export interface CoreHealth {
  attestor: HealthStatus;
  rollup: HealthStatus;
  blockchain: HealthStatus;
}
export interface SchemaListItem {
  schema_id: Hex;
  name: string;
  description: string;
  provider_type: string;
}
export interface Schema extends SchemaListItem {
  bucket_definitions: Record<string, BucketDefinition>;
}
/** The body of POST /api/core/provider-schema: the same fields as the dapp's `register_schema` input. */
export type SchemaRegistration = InputParams["register_schema"];
export interface ClaimRequest {
  provider: "http";
  params: { url: string; method: string; headers: Record<string, string> };
  bucketDefinition: BucketDefinition & { field: string };
  schemaId?: Hex;
}
export interface ClaimResult {
  claimId: Hex;
  txHash: Hex;
  bucket: string;
}
export interface Attestation {
  claimId: Hex;
  provider: string;
  bucket: string;
  timestamp: number;
  owner: Address;
}
export type AttestationListItem = Omit<Attestation, "owner">;
/** GET /api/core/attestation/:claimId/data (an extension beyond the specification). */
export interface AttestationData {
  claimId: Hex;
  schemaId: Hex;
  owner: Address;
  /** The sealed box as stored: 0x hex of ephemeral public key (32) | nonce (24) | ciphertext. */
  encrypted_data: Hex;
  /** The opened JSON: only when the api is configured with ENCRYPTION_SECRET_KEY. */
  data?: Record<string, unknown>;
}
/** GET /api/core/attestation/:claimId/proof (an extension): arguments for CartesiDApp.validateNotice. */
export interface AttestationProof {
  claimId: Hex;
  applicationAddress: Address;
  inputIndex: number;
  noticeIndex: number;
  notice: Hex;
  proof: { context: Hex; validity: OutputValidityProof };
}

export interface GrantRequest {
  requester: Address;
  schemaId: Hex;
  expiresAt: number;
}
export interface GrantResult {
  grantId: Hex;
  txHash: Hex;
}
export interface AccessCheck {
  hasAccess: boolean;
  grants: { grantId: Hex; schemaId: Hex; expiresAt: number }[];
}
export interface AuthNonce {
  nonce: string;
  expiresAt: number;
  domain: string;
  chainId: number;
}
export interface AuthToken {
  token: string;
  expiresAt: number;
}

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

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
}

export class AttestationClient {
  /** The headers of the last response, e.g. to read X-RateLimit-Remaining. */
  lastHeaders: Headers | undefined;

  constructor(private readonly options: ClientOptions) {}

  /** The same client acting with another bearer token. */
  withToken(token: string): AttestationClient {
    return new AttestationClient({ ...this.options, token });
  }

  withHeaders(headers: Record<string, string>): AttestationClient {
    return new AttestationClient({ ...this.options, headers: { ...this.options.headers, ...headers } });
  }

  /** One request, whatever its outcome: for callers that inspect statuses and headers themselves. */
  async raw(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: "application/json", ...this.options.headers, ...extraHeaders };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await fetch(`${this.options.baseUrl.replace(/\/+$/, "")}${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: handed back as text.
    }
    this.lastHeaders = response.headers;
    return { status: response.status, headers: response.headers, body: parsed };
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.raw(method, path, body);
    const value = response.body as { success?: boolean; data?: T } | ErrorBody | undefined;
    if (response.status >= 400 || value === undefined || (typeof value === "object" && value.success === false)) {
      const error = (value as ErrorBody | undefined)?.error;
      throw new AttestationApiError(
        error?.code ?? "HTTP_ERROR",
        response.status,
        error?.message ?? `HTTP ${response.status}`,
        error?.details,
        response.headers,
      );
    }
    return (value as { data: T }).data;
  }

  async healthcheck(): Promise<Healthcheck> {
    const response = await this.raw("GET", "/healthcheck");
    if (response.status !== 200) {
      const error = (response.body as ErrorBody | undefined)?.error;
      throw new AttestationApiError(error?.code ?? "HTTP_ERROR", response.status, error?.message ?? "", error?.details, response.headers);
    }
    return response.body as Healthcheck;
  }
  status(): Promise<CoreStatus> {
    return this.call("GET", "/api/core/status");
  }
  health(): Promise<CoreHealth> {
    return this.call("GET", "/api/core/health");
  }
  schemas(): Promise<SchemaListItem[]> {
    return this.call("GET", "/api/core/schemas");
  }
  schema(schemaId: string): Promise<Schema> {
    return this.call("GET", `/api/core/schemas/${encodeURIComponent(schemaId)}`);
  }
  registerSchema(registration: SchemaRegistration): Promise<{ schema_id: Hex }> {
    return this.call("POST", "/api/core/provider-schema", registration);
  }
  registerEncryptionKey(key: { publicKey: string; algorithm: "nacl-box" }): Promise<{ keyId: Hex }> {
    return this.call("POST", "/api/core/encryption-key", key);
  }
  claim(request: ClaimRequest): Promise<ClaimResult> {
    return this.call("POST", "/api/core/claim", request);
  }
  attestation(claimId: string): Promise<Attestation> {
    return this.call("GET", `/api/core/attestation/${encodeURIComponent(claimId)}`);
  }
  /** Needs a token: the token's address is the requester (the owner, or a holder of a live grant). */
  attestationData(claimId: string): Promise<AttestationData> {
    return this.call("GET", `/api/core/attestation/${encodeURIComponent(claimId)}/data`);
  }

  /** Throws AttestationApiError PROOF_NOT_READY (with retry_after) while the attestation's epoch is open. */
  attestationProof(claimId: string): Promise<AttestationProof> {
    return this.call("GET", `/api/core/attestation/${encodeURIComponent(claimId)}/proof`);
  }
  attestations(owner: string): Promise<AttestationListItem[]> {
    return this.call("GET", `/api/core/attestations/${encodeURIComponent(owner)}`);
  }
  grant(request: GrantRequest): Promise<GrantResult> {
    return this.call("POST", "/api/core/grant", request);
  }
  async revokeGrant(grantId: string): Promise<void> {
    await this.call("DELETE", `/api/core/grant/${encodeURIComponent(grantId)}`);
  }
  access(owner: string, requester: string): Promise<AccessCheck> {
    return this.call("GET", `/api/core/access/${encodeURIComponent(owner)}/${encodeURIComponent(requester)}`);
  }
  authNonce(): Promise<AuthNonce> {
    return this.call("GET", "/api/core/auth/nonce");
  }
  login(message: string, signature: Hex): Promise<AuthToken> {
    return this.call("POST", "/api/core/auth/login", { message, signature });
  }
  async openapi(): Promise<Record<string, unknown>> {
    return (await this.raw("GET", "/api/core/openapi.json")).body as Record<string, unknown>;
  }
}

// ---- WebSocket ----

export type EventName = "attestation:created" | "grant:created" | "grant:revoked" | "schema:registered";

export type ApiEvent =
  | { event: "attestation:created"; data: { claimId: Hex; owner: Address; provider: string } }
  | { event: "grant:created"; data: { grantId: Hex; owner: Address; requester: Address } }
  | { event: "grant:revoked"; data: { grantId: Hex; owner: Address } }
  | { event: "schema:registered"; data: { schema_id: Hex } }
  | { event: "subscribed"; data: { events: EventName[]; owner: Address | null } }
  | { event: "error"; data: { code: string; message: string } };

export interface EventStream {
  /** Every message received so far, in order. */
  readonly received: ApiEvent[];
  /** Resolves with the first message (already received or still to come) that matches. */
  waitFor(match: (event: ApiEvent) => boolean, timeoutMs?: number): Promise<ApiEvent>;
  send(message: unknown): void;
  close(): Promise<void>;
}

/** Opens the event channel; with `filter`, sends a subscribe message and waits for its acknowledgement. */
export async function connectEvents(
  wsUrl: string,
  filter?: { subscribe?: EventName[]; owner?: string },
): Promise<EventStream> {
  const socket = new WebSocket(wsUrl);
  const received: ApiEvent[] = [];
  const waiters = new Set<{ match: (e: ApiEvent) => boolean; resolve: (e: ApiEvent) => void }>();
  socket.on("message", (data) => {
    let event: ApiEvent;
    try {
      event = JSON.parse(String(data)) as ApiEvent;
    } catch {
      return;
    }
    received.push(event);
    for (const waiter of waiters) {
      if (waiter.match(event)) {
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const stream: EventStream = {
    received,
    waitFor(match, timeoutMs = 15_000) {
      const seen = received.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<ApiEvent>((resolve, reject) => {
        const waiter = {
          match,
          resolve: (event: ApiEvent) => {
            clearTimeout(timer);
            resolve(event);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching event within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    send(message) {
      socket.send(typeof message === "string" ? message : JSON.stringify(message));
    },
    close() {
      return new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once("close", () => resolve());
        socket.close();
      });
    },
  };
  if (filter !== undefined) {
    stream.send(filter);
    await stream.waitFor((e) => e.event === "subscribed" || e.event === "error");
  }
  return stream;
}
