/**
 * What a provider request may ask for, checked before any socket is opened: the method, the headers,
 * the URL's scheme and host, and the addresses the host resolves to (DECISIONS.md section 5).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { ApiError } from "../errors.ts";
import { refusedAddressClass } from "./address.ts";

/** GET reads; POST because some providers answer reads only to POST (GraphQL, search endpoints). */
export const ALLOWED_METHODS = ["GET", "POST"] as const;
export type ProviderMethod = (typeof ALLOWED_METHODS)[number];

const MAX_URL_LENGTH = 8192;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE_LENGTH = 8192;
// RFC 9110 token characters.
const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII, Latin-1 and tab: no CR, LF, NUL or other control characters that could split a request.
const HEADER_VALUE_RE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Headers the fetch owns: framing and connection management (a caller setting them could smuggle a
 * second request or confuse the body cap), the target (`Host` would send the vetted connection to a
 * different virtual host than the one checked) and the encoding the body reader understands.
 */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "accept-encoding",
]);

export const URL_EXPECTATION =
  "an https URL (plain http only for PROVIDER_ALLOWED_HOSTS) whose host is public or listed in PROVIDER_ALLOWED_HOSTS";

/** The URL as it may appear in errors and logs: no credentials, query or fragment (they may hold secrets). */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Host names compare lower-case, without IPv6 brackets or a trailing dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return h;
}

export function isAllowedHost(hostname: string, allowedHosts: readonly string[]): boolean {
  const host = normalizeHost(hostname);
  return allowedHosts.some((entry) => normalizeHost(entry) === host);
}

function invalidParameter(parameter: string, value: string, expected: string, message: string): ApiError {
  return new ApiError("INVALID_PARAMETER", message, { parameter, value, expected });
}

export function checkMethod(method: string): ProviderMethod {
  const upper = method.toUpperCase();
  const found = ALLOWED_METHODS.find((m) => m === upper);
  if (found) return found;
  const shown = HEADER_NAME_RE.test(method) && method.length <= 16 ? method : "(not a method)";
  throw invalidParameter("params.method", shown, ALLOWED_METHODS.join(" or "), "unsupported provider method");
}

/**
 * Validates caller headers and returns them with lower-case names. Error details name the header but
 * never show a value: values are where API keys and tokens travel.
 */
export function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) {
    throw invalidParameter("params.headers", `${entries.length} headers`, `at most ${MAX_HEADERS} headers`, "too many provider headers");
  }
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME_RE.test(name) || name.length > 256) {
      throw invalidParameter("params.headers", "(invalid header name)", "header names made of token characters", "invalid provider header name");
    }
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) {
      throw invalidParameter("params.headers", name, "no Host, Content-Length, Transfer-Encoding, connection or Accept-Encoding headers", `header ${name} cannot be set`);
    }
    if (typeof value !== "string" || !HEADER_VALUE_RE.test(value) || value.length > MAX_HEADER_VALUE_LENGTH) {
      throw invalidParameter("params.headers", name, `a string value without control characters, at most ${MAX_HEADER_VALUE_LENGTH} characters`, `invalid value for header ${name}`);
    }
    if (lower in out) {
      throw invalidParameter("params.headers", name, "each header once", `header ${name} given twice`);
    }
    out[lower] = value;
  }
  return out;
}

/** Parses the caller's URL and applies the scheme rule; the address rule needs DNS and comes later. */
export function checkUrl(raw: string, allowedHosts: readonly string[]): URL {
  let url: URL;
  try {
    if (raw.length > MAX_URL_LENGTH) throw new TypeError("too long");
    url = new URL(raw);
  } catch {
    throw invalidParameter("params.url", "(not a valid URL)", URL_EXPECTATION, "provider URL is not a valid absolute URL");
  }
  const problem = schemeProblem(url, allowedHosts);
  if (problem) throw invalidParameter("params.url", redactUrl(url), URL_EXPECTATION, problem);
  return url;
}

/** Why the URL's scheme is refused for its host, or `undefined`. */
export function schemeProblem(url: URL, allowedHosts: readonly string[]): string | undefined {
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") {
    return isAllowedHost(url.hostname, allowedHosts) ? undefined : "plain http is allowed only for hosts in PROVIDER_ALLOWED_HOSTS";
  }
  return "provider URL must use https";
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** `dns.lookup` with every address, as the operating system (hosts file included) resolves it. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses);
    });
  });

/** The outcome of vetting a host: the addresses to connect to, or why it is refused. */
export type Vetted = { ok: true; addresses: LookupAddress[] } | { ok: false; reason: string };

/**
 * Resolves the host (unless it is an IP literal) and checks every address: one refused address refuses
 * the host, since the connection could otherwise land on it. Allow-listed hosts skip the check but are
 * still pinned to the addresses resolved here. DNS failures are thrown for the caller to map.
 */
export async function vetHost(hostname: string, allowedHosts: readonly string[], resolve: Resolver): Promise<Vetted> {
  const host = normalizeHost(hostname);
  const family = isIP(host);
  const addresses: LookupAddress[] = family !== 0 ? [{ address: host, family }] : await resolve(host);
  if (addresses.length === 0) throw Object.assign(new Error("no addresses"), { code: "ENOTFOUND" });
  if (isAllowedHost(host, allowedHosts)) return { ok: true, addresses };
  for (const { address } of addresses) {
    if (refusedAddressClass(address) !== undefined) {
      // The message stays generic: which internal address a name maps to is not the caller's business.
      return { ok: false, reason: "the provider host is not a public address" };
    }
  }
  return { ok: true, addresses };
}
