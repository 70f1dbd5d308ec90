/** The explorer's only source of data: the api's public endpoints (same origin) and the rate-limit headers they carry. */

export interface RateState {
  limit: number;
  remaining: number;
  resetAt: number;
  path: string;
}

/** The last rate-limit headers seen per endpoint group path, shown on the node view. */
export const rateStates = new Map<string, RateState>();

/** An error answered by the api: its code and message are shown as they are. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Envelope<T> {
  success: boolean;
  data?: T;
  error?: { code: string; message: string };
}

export async function getRaw(path: string): Promise<Response> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
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

/** GET an enveloped endpoint and return its data, or throw the api's error. */
export async function get<T>(path: string): Promise<T> {
  const response = await getRaw(path);
  let body: Envelope<T>;
  try {
    body = (await response.json()) as Envelope<T>;
  } catch {
    throw new ApiFailure(response.status, "BAD_RESPONSE", `${path} answered HTTP ${response.status} without JSON`);
  }
  if (!response.ok || body.success !== true || body.data === undefined) {
    throw new ApiFailure(response.status, body.error?.code ?? "ERROR", body.error?.message ?? `HTTP ${response.status}`);
  }
  return body.data;
}

/** GET a plain JSON endpoint (no envelope). */
export async function getPlain<T>(path: string): Promise<T> {
  const response = await getRaw(path);
  if (!response.ok) throw new ApiFailure(response.status, "ERROR", `${path} answered HTTP ${response.status}`);
  return (await response.json()) as T;
}
