// SPDX-License-Identifier: AGPL-3.0-only
/**
 * A prover: the client side of Reclaim's attestor-core, in a process of its own that the api forks
 * (api/provider/attestor.ts) and talks to over Node's IPC channel (common/prover-protocol.ts). It opens
 * the TLS session to the provider through the attestor, reads the answer, proves what it redacts (the `zk`
 * mode, with Stwo) and returns the attestor's signed claim. One request at a time: Stwo proves
 * synchronously and holds this process's event loop, never the api's.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { resourceUsage } from "node:process";
import type { Address, Hex } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { z } from "zod";
import type { ProveFailureKind, ProveRequest, ProveResult, ProverReady } from "../common/prover-protocol.ts";
import { claimContext, claimParameters, type TlsClaim } from "../common/tls-claim.ts";
import { keyInDataDir } from "./config.ts";
import { parseHttpResponse, type HttpResponse } from "./http-response.ts";
import { trustExtraRoots } from "./roots.ts";
import { stwoOperators, type Algorithm, type LegacyZkOperator } from "./zk-operators.ts";

const require = createRequire(import.meta.url);

const env = z
  .object({
    ATTESTOR_URL: z.string().regex(/^wss?:\/\//, "expected a ws:// or wss:// URL"),
    PROVER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key").optional(),
    ATTESTOR_CA_FILES: z.string().default(""),
    DATA_DIR: z.string().min(1).default(".data"),
    LOG_LEVEL: z.string().default("error"),
  })
  .parse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== "")));

process.env.LOG_LEVEL = env.LOG_LEVEL;
trustExtraRoots(env.ATTESTOR_CA_FILES);
const privateKey = (env.PROVER_PRIVATE_KEY ?? keyInDataDir(env.DATA_DIR, "prover-key")) as Hex;

interface TranscriptEntry {
  sender: "client" | "server";
  message: { type: "plaintext" | "ciphertext"; plaintext?: Uint8Array; contentType?: string; data: Uint8Array };
}
interface ClaimTunnelResponse {
  claim?: TlsClaim;
  error?: { code?: string | number; message?: string };
  signatures?: { claimSignature: Uint8Array; attestorAddress: string };
}
interface AttestorClientModule {
  createClaimOnAttestor(opts: {
    name: "http";
    params: object;
    secretParams: { headers: Record<string, string> };
    context: object;
    ownerPrivateKey: string;
    client: { url: string };
    zkEngine: "snarkjs";
    zkOperators?: Record<Algorithm, LegacyZkOperator>;
    maxRetries: number;
    logger: ClaimLogger;
    updateProviderParams(transcript: TranscriptEntry[], tlsVersion: string): Promise<{ params: object; secretParams: object }>;
  }): Promise<ClaimTunnelResponse>;
  isApplicationData(packet: TranscriptEntry["message"], tlsVersion: string): boolean;
}
const attestorCore = require("@reclaimprotocol/attestor-core") as AttestorClientModule;
const zkOperators = stwoOperators();

/**
 * Stwo proves a ChaCha20 record in well under a second and an AES one in several (docs/provider.md), and
 * the cipher suite is the client's to offer: a claim offers ChaCha20 alone first, and everything when the
 * provider has no ChaCha20 (TLS 1.2 sessions are proven record by record even in the `reveal` mode). The attestor only tunnels bytes, so it has no say; this process makes
 * one claim at a time, so one setting holds for the claim under way.
 */
const CHACHA_SUITES = ["TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"];
let offeredSuites: string[] | undefined;
const httpProvider = (require("@reclaimprotocol/attestor-core/lib/providers") as {
  providers: { http: { additionalClientOptions(params: object): Record<string, unknown> } };
}).providers.http;
const defaultClientOptions = httpProvider.additionalClientOptions.bind(httpProvider);
httpProvider.additionalClientOptions = (params) => {
  const options = defaultClientOptions(params);
  return offeredSuites === undefined ? options : { ...options, cipherSuites: offeredSuites };
};

/** A failure this process understood, with the kind the api maps to an error code. */
class ProveError extends Error {
  constructor(
    readonly kind: ProveFailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The provider's answer as the prover decrypted it: the server's application data records, in order (a
 * TLS 1.3 record's plaintext ends with its inner content type, which is not data).
 */
function responseFrom(transcript: TranscriptEntry[], tlsVersion: string): HttpResponse {
  const chunks = transcript
    .filter((e) => e.sender === "server" && e.message.plaintext !== undefined && attestorCore.isApplicationData(e.message, tlsVersion))
    .map((e) => {
      const plaintext = e.message.plaintext as Uint8Array;
      return tlsVersion === "TLS1_3" ? plaintext.subarray(0, -1) : plaintext;
    });
  return parseHttpResponse(Buffer.concat(chunks));
}

/** The field's value as JSON holds it, checked before any proof is made (a proof of nothing costs seconds). */
function assertFieldPresent(body: string, field: string): void {
  let node: unknown;
  try {
    node = JSON.parse(body);
  } catch {
    throw new ProveError("extraction", "extraction failed: the provider's body is not JSON");
  }
  for (const key of field.split(".")) {
    if (node === null || typeof node !== "object" || Array.isArray(node) || !Object.hasOwn(node, key)) {
      throw new ProveError("extraction", `extraction failed: no value at ${field}`);
    }
    node = (node as Record<string, unknown>)[key];
  }
  const numeric = typeof node === "number" || (typeof node === "string" && /^-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/.test(node));
  if (!numeric) throw new ProveError("extraction", `extraction failed: the value at ${field} is not a number`);
}

/**
 * attestor-core's errors carry a code only for some cases: ERROR_NETWORK_ERROR is this process's own
 * WebSocket to the attestor; what the attestor met on its side (the provider refusing the connection, a TLS
 * alert) comes back as text. Anything may be thrown, `undefined` included.
 */
function classify(error: unknown): ProveError {
  if (error instanceof ProveError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = error !== null && typeof error === "object" && "code" in error ? String(error.code) : "";
  if (code === "ERROR_NETWORK_ERROR") return new ProveError("attestor_unreachable", `attestor unreachable: ${message}`);
  if (/PROTOCOL_VERSION|protocol version|HANDSHAKE_FAILURE|Fatal alert|certificate|cipher suite/i.test(message)) {
    return new ProveError("tls", `TLS with the provider failed (TLS 1.2 or later is required): ${message}`);
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|stream ended before/i.test(message)) {
    return new ProveError("provider_unreachable", `the attestor could not reach the provider: ${message}`);
  }
  if (/regex|didn't match|jsonPath/i.test(message)) return new ProveError("extraction", `extraction failed: ${message}`);
  if (code === "ERROR_INVALID_CLAIM" || code === "ERROR_BAD_REQUEST" || code === "ERROR_AUTHENTICATION_FAILED") {
    return new ProveError("refused", `the attestor refused the claim: ${message}`);
  }
  return new ProveError("internal", message === "undefined" ? "the attestor client failed without a reason" : message);
}

/** What attestor-core logs while a claim runs; kept quiet, but a fatal TLS alert is remembered. */
interface ClaimLogger {
  trace(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  fatal(...args: unknown[]): void;
  child(bindings: object): ClaimLogger;
}

/**
 * attestor-core sometimes rejects with nothing at all when the provider ends the handshake with an alert;
 * its TLS library logs the alert first, so the logger is where the reason is found.
 */
function alertRecorder(): { logger: ClaimLogger; alert(): string | undefined } {
  let alert: string | undefined;
  const quiet = (): void => {};
  const record = (first: unknown): void => {
    if (first !== null && typeof first === "object" && "description" in first && "level" in first && first.level === "FATAL") {
      alert = String(first.description);
    }
  };
  const logger: ClaimLogger = { trace: quiet, debug: quiet, info: quiet, warn: record, error: record, fatal: record, child: () => logger };
  return { logger, alert: () => alert };
}

async function prove(request: ProveRequest): Promise<ProveResult> {
  const alerts = alertRecorder();
  const started = performance.now();
  let response: HttpResponse | undefined;
  let tlsVersion = "";
  try {
    const result = await attestorCore.createClaimOnAttestor({
      name: "http",
      params: claimParameters(request),
      secretParams: { headers: request.headers },
      context: claimContext(request.owner, request.schemaId, `0x${randomBytes(16).toString("hex")}`),
      ownerPrivateKey: privateKey,
      client: { url: env.ATTESTOR_URL },
      zkEngine: "snarkjs",
      // Given in both modes: on TLS 1.2 attestor-core proves every record, even when nothing is redacted.
      zkOperators,
      // One attempt: the api decides about retries, and a retry would fetch the provider again.
      maxRetries: 1,
      logger: alerts.logger,
      // Runs once the provider has answered and before anything is proven: a bad answer stops here.
      async updateProviderParams(transcript, version) {
        tlsVersion = version;
        response = responseFrom(transcript, version);
        if (response.status < 200 || response.status > 299) {
          throw new ProveError("provider_status", `the provider answered HTTP ${response.status}`, response.status);
        }
        assertFieldPresent(response.body, request.field);
        return { params: {}, secretParams: {} };
      },
    });
    if (result.error?.message || !result.claim || !result.signatures) {
      throw new ProveError("refused", `the attestor refused the claim: ${result.error?.message ?? "no claim returned"}`);
    }
    if (response === undefined) throw new ProveError("internal", "the provider's answer was never seen");
    return {
      id: request.id,
      ok: true,
      claim: result.claim,
      signature: `0x${Buffer.from(result.signatures.claimSignature).toString("hex")}` as Hex,
      attestor: result.signatures.attestorAddress as Address,
      response,
      tlsVersion,
      ms: performance.now() - started,
      maxRssBytes: resourceUsage().maxRSS * 1024,
    };
  } catch (error) {
    const alert = alerts.alert();
    const failure = classify(alert !== undefined && !(error instanceof ProveError) ? new Error(`Fatal alert: ${alert}`) : error);
    return { id: request.id, ok: false, kind: failure.kind, reason: failure.message, ...(failure.status === undefined ? {} : { status: failure.status }) };
  }
}

if (process.send === undefined) {
  console.error("attestor/prover.ts runs as a child of the api (it talks over Node's IPC channel)");
  process.exit(2);
}
const send = process.send.bind(process);
async function proveFast(request: ProveRequest): Promise<ProveResult> {
  offeredSuites = CHACHA_SUITES;
  try {
    const first = await prove(request);
    if (first.ok || first.kind !== "tls") return first;
  } finally {
    offeredSuites = undefined;
  }
  return prove(request);
}

process.on("message", (request: ProveRequest) => {
  void proveFast(request).then((result) => send(result));
});
// The api owns this process: when its channel closes, there is no one left to answer.
process.on("disconnect", () => process.exit(0));
const ready: ProverReady = { ready: true, address: privateKeyToAddress(privateKey) };
send(ready);
