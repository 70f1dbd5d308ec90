/**
 * Helpers for the api's tests: a configuration from an environment (as the api reads it), free and
 * closed loopback ports, and tokens signed with the test secret.
 */
import { createServer } from "node:net";
import { privateKeyToAccount } from "viem/accounts";
import { AttestationApiError } from "../../client/index.ts";
import { issueToken, type TokenRole } from "../../api/auth/tokens.ts";

export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";
/** USER_A's key: signs SIWE messages in tests (users never send transactions: the api relays for them). */
export const USER_A_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a7412f4603b6b78690d";
export const USER_A = privateKeyToAccount(USER_A_KEY).address;
export const USER_B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/** A loopback port nothing listens on: connections to it are refused at once. */
export async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function tokenFor(role: TokenRole, subject: string, ttl = 3600, secret = TEST_JWT_SECRET): Promise<string> {
  return (await issueToken(new TextEncoder().encode(secret), subject, role, ttl)).token;
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export const JSON_HEADERS = { "content-type": "application/json" };

/** A valid `POST /api/core/provider-schema` body, for suites that check validation around it. */
export const PROVIDER_SCHEMA_BODY = {
  provider: "http",
  flowType: "balance",
  domain: "bank.example",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000], labels: ["low", "mid"] } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 3600,
};

export interface ErrorShape {
  success: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** The typed error a client call fails with; fails the test when the call succeeds or fails otherwise. */
export async function failure(promise: Promise<unknown>, what = ""): Promise<AttestationApiError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (error) {
    if (error instanceof AttestationApiError) return error;
    throw error;
  }
  throw new Error(`expected the call to fail${what === "" ? "" : ` (${what})`}, got ${JSON.stringify(result)}`);
}
