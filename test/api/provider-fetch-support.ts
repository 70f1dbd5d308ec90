/**
 * Shared by the provider fetch tests (provider-fetch*.test.ts): the real local servers they fetch from
 * — https with a certificate for localhost from the test CA of test/support/tls.ts, plain http, a second
 * https origin, TLS 1.1 only, self-signed, wrong host name, https on ::1 and a server that answers bytes
 * that are not HTTP — each serving `/ok`, started by `startProviderServers()` before a file's tests and
 * closed after them. Also the base config, the internal `ca` seam trusting the test CA, and small helpers.
 * The servers are live bindings: read them only inside tests and hooks.
 */
import type { LookupAddress } from "node:dns";
import net from "node:net";
import { afterAll, beforeAll } from "vitest";
import { ApiError } from "../../api/errors.ts";
import type { HttpProviderParams, ProviderFetchConfig, ProviderFetchInternals } from "../../api/provider/fetch.ts";
import { DEFAULT_PROVIDER_MAX_BODY_BYTES } from "../../api/provider/index.ts";
import { type ProviderServer, TLS_1_1_ONLY, startProviderServer } from "../support/provider-server.ts";
import { type TestPki, createTestPki } from "../support/tls.ts";

let pki: TestPki;
export let secure: ProviderServer; // https, certificate for localhost from the test CA
export let plain: ProviderServer; // http
export let other: ProviderServer; // a second https origin, for cross-origin redirects
export let tls11: ProviderServer;
export let selfSigned: ProviderServer;
export let wrongName: ProviderServer;
export let v6: ProviderServer; // https on ::1
let garbage: net.Server; // answers anything with bytes that are not HTTP
export let garbagePort: number;

export const BASE: ProviderFetchConfig = { allowedHosts: ["localhost"], timeoutMs: 5_000, maxBodyBytes: DEFAULT_PROVIDER_MAX_BODY_BYTES };
export let internals: ProviderFetchInternals;

/** Starts the servers before the calling file's tests and closes them after. */
export function startProviderServers(): void {
  beforeAll(async () => {
    pki = createTestPki();
    internals = { ca: pki.ca.cert };
    secure = await startProviderServer({ tls: pki.localhost });
    plain = await startProviderServer();
    other = await startProviderServer({ tls: pki.localhost });
    tls11 = await startProviderServer({ tls: { ...pki.localhost, ...TLS_1_1_ONLY } });
    selfSigned = await startProviderServer({ tls: pki.selfSigned });
    wrongName = await startProviderServer({ tls: pki.wrongName });
    v6 = await startProviderServer({ tls: pki.localhost, host: "::1" });
    garbage = net.createServer((socket) => {
      // Reading keeps the socket flowing, so it sees the client's close and the server can shut down.
      socket.resume();
      socket.end("this is not HTTP at all\r\n\r\n");
    });
    await new Promise<void>((resolve) => garbage.listen(0, "127.0.0.1", resolve));
    garbagePort = (garbage.address() as net.AddressInfo).port;

    for (const server of [secure, plain, other, tls11, selfSigned, wrongName, v6]) {
      server.route("/ok", { kind: "json", value: { data: { balance: 42 } } });
    }
  });

  afterAll(async () => {
    await Promise.all([secure, plain, other, tls11, selfSigned, wrongName, v6].map((s) => s?.close()));
    await new Promise<void>((resolve) => (garbage ? garbage.close(() => resolve()) : resolve()));
    pki?.cleanup();
  });
}

export function get(url: string, headers: Record<string, string> = {}): HttpProviderParams {
  return { url, method: "GET", headers };
}

/** The ApiError a failing fetch throws (fails the test if it resolves or throws something else). */
export async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the fetch to fail");
}

/** A resolver that serves fixed answers and records which names it was asked for. */
export function fakeResolver(answers: Record<string, string[]>): { resolve: (host: string) => Promise<LookupAddress[]>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      const list = answers[host];
      if (!list) throw Object.assign(new Error(`no answer for ${host}`), { code: "ENOTFOUND" });
      return list.map((address) => ({ address, family: net.isIP(address) }));
    },
  };
}
