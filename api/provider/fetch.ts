/**
 * The provider exchange (DECISIONS.md section 5): vet the target, connect to the vetted address only,
 * TLS 1.2 or later, at most 3 redirects each vetted again, one deadline for the whole exchange, a body
 * cap, and errors that name what went wrong without echoing secrets or internal addresses.
 */
import type { LookupAddress } from "node:dns";
import http, { type IncomingMessage, type RequestOptions } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { ApiError } from "../errors.ts";
import {
  type ProviderMethod,
  type Resolver,
  type Vetted,
  URL_EXPECTATION,
  checkHeaders,
  checkMethod,
  checkUrl,
  normalizeHost,
  redactUrl,
  schemeProblem,
  systemResolver,
  vetHost,
} from "./target.ts";

export const DEFAULT_PROVIDER_MAX_BODY_BYTES = 1024 * 1024;
export const MAX_PROVIDER_REDIRECTS = 3;

export interface ProviderFetchConfig {
  allowedHosts: string[];
  timeoutMs: number;
  maxBodyBytes: number;
}

export interface HttpProviderParams {
  url: string;
  method: string;
  headers: Record<string, string>;
}

/**
 * Test seams, deliberately not part of `ProviderFetchConfig`: production trusts Node's store (plus
 * NODE_EXTRA_CA_CERTS) and the system resolver.
 */
export interface ProviderFetchInternals {
  /** Trust exactly these CA certificates (PEM) instead of Node's store. */
  ca?: string | Buffer;
  /** Replaces `dns.lookup`, to simulate names that resolve to chosen addresses. */
  resolve?: Resolver;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TLS_VERSION_RE = /alert protocol version|unsupported protocol|no protocols available|version too low/i;
const TLS_CERT_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "INVALID_CA",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A fixed phrase for a socket-level failure, or `{tlsVersion: true}` when the handshake could not agree
 * on TLS 1.2 or later. Node's own messages carry the connected address (`connect ECONNREFUSED
 * 10.1.2.3:443`), internal detail the caller must not see.
 */
function describeNetworkError(error: unknown): string | { tlsVersion: true } {
  const code = errnoCode(error);
  const message = error instanceof Error ? error.message : "";
  if (TLS_VERSION_RE.test(message)) return { tlsVersion: true };
  if (code !== undefined && TLS_CERT_CODES.has(code)) return `TLS certificate of the provider is not trusted (${code})`;
  let phrase: string;
  if (code === "ECONNREFUSED") phrase = "connection refused";
  else if (code === "ECONNRESET" && message === "socket hang up") phrase = "connection closed before a response";
  else if (code === "ECONNRESET" || code === "EPIPE") phrase = "connection reset";
  else if (code === "ETIMEDOUT") phrase = "connection timed out";
  else if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL" || code === "EAI_NODATA") phrase = "host name not found";
  else if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL") phrase = "host unreachable";
  else if (code?.startsWith("HPE_")) phrase = "malformed HTTP response";
  else if (code === "EPROTO" || code?.startsWith("ERR_SSL_") || code?.startsWith("ERR_TLS_")) phrase = "TLS handshake failed";
  else phrase = "request failed";
  return phrase;
}

/** Hands net.connect the addresses vetted before, so a second DNS answer (rebinding) is never used. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const first = usable[0];
    if (first === undefined) {
      callback(Object.assign(new Error("no vetted address of the requested family"), { code: "ENOTFOUND" }), "", 0);
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

/** Rejects when the signal aborts first; DNS look-ups have no signal of their own. */
function beforeDeadline<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

interface Hop {
  url: URL;
  method: ProviderMethod;
  headers: Record<string, string>;
  addresses: LookupAddress[];
}

/**
 * Keep-alive connections, pooled per origin **and** per set of vetted addresses: an agent connects only
 * to the addresses its key names (its lookup is pinned to them), so a pooled socket is one a fresh
 * vetting of the same host would allow, and a changed DNS answer gets another agent. Reusing connections
 * spares a connect (and a TLS handshake) per claim. Bounded: the oldest agents are closed first.
 */
const agents = new Map<string, http.Agent>();
const MAX_AGENTS = 256;
const caIds = new WeakMap<object, number>();
let nextCaId = 0;

function caKey(ca: string | Buffer | undefined): string {
  if (ca === undefined) return "system";
  if (typeof ca === "string") return `pem:${ca.length}:${ca.slice(0, 64)}:${ca.slice(-64)}`;
  let id = caIds.get(ca);
  if (id === undefined) caIds.set(ca, (id = nextCaId++));
  return `buffer:${id}`;
}

function agentFor(url: URL, addresses: LookupAddress[], internals: ProviderFetchInternals): http.Agent {
  const pinned = addresses.map((a) => `${a.family}/${a.address}`).sort().join(",");
  const key = `${url.protocol}//${url.host}|${pinned}|${caKey(internals.ca)}`;
  let agent = agents.get(key);
  if (agent !== undefined) {
    // Most recently used last, so eviction takes the least recently used.
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  // As many idle sockets kept as may be busy: with fewer, every burst of concurrent claims closed the
  // spare ones and the next burst opened them again (TCP connects were ~4% of the api's CPU at 64 clients).
  const common = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, lookup: pinnedLookup(addresses) };
  agent =
    url.protocol === "https:"
      ? new https.Agent({
          ...common,
          minVersion: "TLSv1.2",
          // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot switch verification off.
          rejectUnauthorized: true,
          ...(internals.ca !== undefined ? { ca: internals.ca } : {}),
        })
      : new http.Agent(common);
  agents.set(key, agent);
  while (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, http.Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

/** Sends one request and resolves with the response once its head has arrived. */
function exchange(hop: Hop, signal: AbortSignal, internals: ProviderFetchInternals): Promise<IncomingMessage> {
  const { url } = hop;
  const options: RequestOptions = {
    host: normalizeHost(url.hostname),
    port: url.port === "" ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: hop.method,
    headers: {
      accept: "application/json",
      "user-agent": "rollup-attestation-provider-fetch",
      ...hop.headers,
      "accept-encoding": "identity",
    },
    agent: agentFor(url, hop.addresses, internals),
    signal,
  };
  if (url.username !== "" || url.password !== "") {
    options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  }
  const attempt = (): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const request = url.protocol === "https:" ? https.request(options) : http.request(options);
      request.once("response", resolve);
      request.once("error", (error: NodeJS.ErrnoException) => {
        // Node leaves the socket open after some failures (a response that is not HTTP); close it.
        request.destroy();
        // A pooled connection the server closed while it sat idle: the request never reached it. Sent again
        // once on a new connection, for methods that may be repeated.
        if (request.reusedSocket && error.code === "ECONNRESET" && hop.method === "GET" && !signal.aborted) {
          resolve(attemptFresh());
          return;
        }
        reject(error);
      });
      request.end();
    });
  const attemptFresh = (): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const fresh = { ...options, agent: false as const, lookup: pinnedLookup(hop.addresses) };
      const tls = { minVersion: "TLSv1.2" as const, rejectUnauthorized: true, ...(internals.ca !== undefined ? { ca: internals.ca } : {}) };
      const request = url.protocol === "https:" ? https.request({ ...fresh, ...tls }) : http.request(fresh);
      request.once("response", resolve);
      request.once("error", (error) => {
        request.destroy();
        reject(error);
      });
      request.end();
    });
  return attempt();
}

function bodyTooLarge(maxBodyBytes: number): ApiError {
  return new ApiError("PROVIDER_INVALID_RESPONSE", "provider response body exceeds the size limit", {
    expected: `a body of at most ${maxBodyBytes} bytes`,
    received: `more than ${maxBodyBytes} bytes`,
  });
}

/** Reads the body, stopping (and closing the connection) as soon as it passes the cap. */
async function readCapped(response: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  const declared = Number(response.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBodyBytes) {
    response.destroy();
    throw bodyTooLarge(maxBodyBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > maxBodyBytes) {
      response.destroy();
      throw bodyTooLarge(maxBodyBytes);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const MEDIA_TYPE_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,62}$/;

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}

/**
 * Parses the body as JSON whatever the content type claims (many APIs label JSON `text/plain`); when it
 * does not parse, names the content type if it was not a JSON type, else says the JSON is invalid.
 */
function parseJsonBody(body: Buffer, contentType: string | undefined): unknown {
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const invalid = (received: string) =>
    new ApiError("PROVIDER_INVALID_RESPONSE", "provider response is not JSON", { expected: "JSON body", received });
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalid("invalid JSON");
  }
  if (text.trim() === "") throw invalid("empty body");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid(MEDIA_TYPE_RE.test(mediaType) && !isJsonMediaType(mediaType) ? mediaType : "invalid JSON");
  }
}

/** Where a redirect points, with the request to send there; `undefined` when it is not a usable redirect. */
function nextHop(current: Hop, response: IncomingMessage): Omit<Hop, "addresses"> | undefined {
  const location = response.headers.location;
  if (location === undefined || location === "") return undefined;
  let url: URL;
  try {
    url = new URL(location, current.url);
  } catch {
    return undefined;
  }
  const status = response.statusCode ?? 0;
  // As browsers do: 303 always, and 301/302 after POST, continue as GET; 307/308 keep the method.
  const method = status === 303 || ((status === 301 || status === 302) && current.method === "POST") ? "GET" : current.method;
  // Another origin gets none of the caller's headers nor URL credentials: any of them may be a secret
  // meant only for the host the caller named (API keys travel in custom headers, not only Authorization).
  const sameOrigin = url.origin === current.url.origin;
  if (!sameOrigin) {
    url.username = "";
    url.password = "";
  }
  return { url, method, headers: sameOrigin ? current.headers : {} };
}

export async function fetchJson(
  params: HttpProviderParams,
  config: ProviderFetchConfig,
  internals: ProviderFetchInternals = {},
): Promise<{ body: unknown; host: string }> {
  const method = checkMethod(params.method);
  const headers = checkHeaders(params.headers);
  const firstUrl = checkUrl(params.url, config.allowedHosts);
  const shownUrl = redactUrl(firstUrl);
  const resolve = internals.resolve ?? systemResolver;
  const unavailable = (error: string, cause?: unknown) =>
    new ApiError("PROVIDER_UNAVAILABLE", `provider unavailable: ${error}`, { provider: "http", url: shownUrl, error }, { cause });
  const timedOut = (cause?: unknown) => unavailable(`no complete answer within ${config.timeoutMs} ms`, cause);

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("provider deadline")), config.timeoutMs);
  const { signal } = controller;
  try {
    let hop: Omit<Hop, "addresses"> = { url: firstUrl, method, headers };
    for (let redirects = 0; ; redirects++) {
      let vetted: Vetted;
      try {
        vetted = await beforeDeadline(vetHost(hop.url.hostname, config.allowedHosts, resolve), signal);
      } catch (error) {
        if (signal.aborted) throw timedOut();
        throw unavailable("host name not found", error);
      }
      if (!vetted.ok) {
        if (redirects === 0) {
          throw new ApiError("INVALID_PARAMETER", `provider URL refused: ${vetted.reason}`, {
            parameter: "params.url",
            value: shownUrl,
            expected: URL_EXPECTATION,
          });
        }
        throw unavailable("provider redirected to a target that is not allowed");
      }
      const current: Hop = { ...hop, addresses: vetted.addresses };

      let response: IncomingMessage;
      try {
        response = await exchange(current, signal, internals);
      } catch (error) {
        if (signal.aborted) throw timedOut(error);
        const described = describeNetworkError(error);
        if (typeof described !== "string") {
          const reason = "provider does not offer TLS 1.2 or later";
          throw new ApiError("ZKTLS_PROOF_FAILED", reason, { reason }, { cause: error });
        }
        throw unavailable(described, error);
      }

      const status = response.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status)) {
        response.destroy();
        const next = nextHop(current, response);
        if (next === undefined) throw unavailable(`HTTP ${status} without a usable Location`);
        if (redirects >= MAX_PROVIDER_REDIRECTS) throw unavailable(`more than ${MAX_PROVIDER_REDIRECTS} redirects`);
        if (schemeProblem(next.url, config.allowedHosts) !== undefined) {
          throw unavailable("provider redirected to a target that is not allowed");
        }
        hop = next;
        continue;
      }
      if (status === 401 || status === 403) {
        response.destroy();
        throw new ApiError("PROVIDER_AUTH_FAILED", `provider refused the request (HTTP ${status})`, { provider: "http", status });
      }
      if (status < 200 || status > 299) {
        response.destroy();
        throw unavailable(`HTTP ${status}`);
      }

      let body: Buffer;
      try {
        body = await readCapped(response, config.maxBodyBytes);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        if (signal.aborted) throw timedOut(error);
        throw unavailable("connection closed while reading the body", error);
      }
      return { body: parseJsonBody(body, response.headers["content-type"]), host: normalizeHost(firstUrl.hostname) };
    }
  } finally {
    clearTimeout(timer);
  }
}
