/**
 * The explorer's only source of data: the api's public endpoints (same origin) and the rate-limit headers
 * they carry. Its only writes are an owner's grants and revokes, each carrying the owner's wallet signature.
 */

export interface RateState {
  limit: number;
  remaining: number;
  resetAt: number;
  path: string;
}

/** The last rate-limit headers seen per endpoint group path, shown on the node view. */
export const rateStates = new Map<string, RateState>();

/** An error answered by the api: its code, message and details are shown as they are. */
export class ApiFailure extends Error {
  override readonly name = "ApiFailure";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface Envelope<T> {
  success: boolean;
  data?: T;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

async function request(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const response = await fetch(path, { ...init, headers: { accept: "application/json", ...init.headers } });
  const limit = response.headers.get("x-ratelimit-limit");
  if (limit !== null) {
    rateStates.set(path.replace(/0x[0-9a-fA-F]+/g, ":id"), {
      limit: Number(limit),
      remaining: Number(response.headers.get("x-ratelimit-remaining") ?? "0"),
      resetAt: Number(response.headers.get("x-ratelimit-reset") ?? "0"),
      path,
    });
  }
  return response;
}

export function getRaw(path: string): Promise<Response> {
  return request(path);
}

async function unwrap<T>(path: string, response: Response): Promise<Envelope<T>> {
  try {
    return (await response.json()) as Envelope<T>;
  } catch {
    throw new ApiFailure(response.status, "BAD_RESPONSE", `${path} answered HTTP ${response.status} without JSON`);
  }
}

function failureOf(response: Response, body: Envelope<unknown>): ApiFailure {
  return new ApiFailure(response.status, body.error?.code ?? "ERROR", body.error?.message ?? `HTTP ${response.status}`, body.error?.details ?? {});
}

/** GET an enveloped endpoint and return its data, or throw the api's error. */
export async function get<T>(path: string): Promise<T> {
  const response = await request(path);
  const body = await unwrap<T>(path, response);
  if (!response.ok || body.success !== true || body.data === undefined) throw failureOf(response, body);
  return body.data;
}

/**
 * Send a JSON body to an enveloped endpoint, with a user token when one is given (the caller holds it in
 * memory: nothing here stores it). Resolves to the data, or undefined for an answer with none.
 */
export async function send<T>(method: "POST" | "DELETE", path: string, options: { token?: string; body?: unknown } = {}): Promise<T | undefined> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await request(path, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const body = await unwrap<T>(path, response);
  if (!response.ok || body.success !== true) throw failureOf(response, body);
  return body.data;
}

/** GET a plain JSON endpoint (no envelope). */
export async function getPlain<T>(path: string): Promise<T> {
  const response = await getRaw(path);
  if (!response.ok) throw new ApiFailure(response.status, "ERROR", `${path} answered HTTP ${response.status}`);
  return (await response.json()) as T;
}
