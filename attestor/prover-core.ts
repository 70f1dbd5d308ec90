// SPDX-License-Identifier: AGPL-3.0-only
/**
 * A prover: the client side of Reclaim's attestor-core, in a process of its own (the api forks it for
 * claims it makes, `npm run prove` on the user's machine; both talk to it over Node's IPC channel,
 * common/prover-protocol.ts). It opens the TLS session to the provider through an attestor, reads the
 * answer, picks the bucket the field's value lies in, and asks the attestor to sign that the value lies
 * in that bucket's range (common/tls-claim.ts): the value is never extracted into the claim. In the `zk`
 * mode it hides every value of the answer but the proven one, and proves in zero knowledge (Stwo) what it
 * hid. One request at a time: Stwo proves synchronously and holds this process's event loop.
 *
 * `serveProver` takes the plan of what to reveal as a parameter so that a test can run a prover that lies
 * (test/support/lying-prover.ts); attestor/prover.ts runs the honest one.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { resourceUsage } from "node:process";
import type { Address, Hex } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { z } from "zod";
import type { BucketDefinition } from "../common/buckets.ts";
import type { ProveFailureKind, ProveRequest, ProveResult, ProverReady } from "../common/prover-protocol.ts";
import { binRange, bucketOfSpelling, type DecimalRange } from "../common/range-pattern.ts";
import { readAccountId, readField, revealPlan, type FieldToken, type Span } from "../common/revealed-response.ts";
import { claimContext, claimParameters, NULLIFIER_CONTEXT_KEY, type ProviderParameters, type RangeStatement, type TlsClaim } from "../common/tls-claim.ts";
import { bytesToHex } from "../common/hex.ts";
import { blindCommitmentOf, blindOfHex, nullifierElement, type ShareEvaluation } from "../common/nullifier.ts";
import { encodeElement } from "../common/oprf-ristretto255.ts";
import { NULLIFIER_PROVIDER } from "./nullifier-desk.ts";
import { keyInDataDir } from "./config.ts";
import { parseHttpResponse } from "./http-response.ts";
import { trustExtraRoots } from "./roots.ts";
import { stwoOperators, type Algorithm, type LegacyZkOperator } from "./zk-operators.ts";

const require = createRequire(import.meta.url);

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
interface HttpProvider {
  additionalClientOptions(params: object): Record<string, unknown>;
  getResponseRedactions(opts: { response: Uint8Array; params: object }): { fromIndex: number; toIndex: number }[];
}

/**
 * What a prover shows the attestor, and which bucket it claims. The honest plan shows the whole answer
 * (`reveal`) or its skeleton and the proven value (`zk`, common/revealed-response.ts), and claims the
 * bucket the value lies in. A test's lying prover changes either.
 */
export interface ProverPlan {
  /** The spans of the answer to hide (none: the attestor gets the TLS keys and reads everything). */
  hide(answer: string, field: string, mode: ProveRequest["mode"], accountField?: string): Span[];
  /** The label to claim for the field's token, or undefined when the value is in no bucket. */
  label(token: FieldToken, definition: BucketDefinition): string | undefined;
  /** The account to blind for a nullifier, given the one read from the answer (the honest plan's: that one). */
  account?(read: string): string;
  /** What to ask the attestor to sign for the label's range: the parameters and the statement named in the context (the honest plan's when left out). */
  ask?(request: ClaimAsk): { parameters: ProviderParameters; statement: RangeStatement | undefined };
}

/** What a claim is about once the bucket is known. */
export interface ClaimAsk {
  url: string;
  method: "GET" | "POST";
  field: string;
  range: DecimalRange;
}

export const honestPlan: ProverPlan = {
  hide(answer, field, mode, accountField) {
    if (mode === "reveal") return [];
    const plan = revealPlan(answer, field, accountField);
    if (!plan.ok) throw new ProveError("extraction", `extraction failed: ${plan.reason}`);
    return plan.value;
  },
  label: (token, definition) => bucketOfSpelling(token.spelling, definition),
};

/** The canonical statement for the claim's field and range, named in the context as well. */
function honestAsk(claim: ClaimAsk): { parameters: ProviderParameters; statement: RangeStatement } {
  return { parameters: claimParameters(claim), statement: { field: claim.field, range: claim.range } };
}

/** A failure this process understood, with the kind the caller maps to an error code. */
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
 * Stwo proves a ChaCha20 record in well under a second and an AES one in several (docs/provider.md), and
 * the cipher suite is the client's to offer: a claim offers ChaCha20 alone first, and everything when the
 * provider has no ChaCha20 (TLS 1.2 sessions are proven record by record even in the `reveal` mode).
 */
const CHACHA_SUITES = ["TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"];

/** The server's application data records as the prover decrypted them, joined (latin1: one char a byte). */
function answerFrom(attestorCore: AttestorClientModule, transcript: TranscriptEntry[], tlsVersion: string): string {
  const chunks = transcript
    .filter((e) => e.sender === "server" && e.message.plaintext !== undefined && attestorCore.isApplicationData(e.message, tlsVersion))
    .map((e) => {
      const plaintext = e.message.plaintext as Uint8Array;
      // A TLS 1.3 record's plaintext ends with its inner content type, which is not data.
      return tlsVersion === "TLS1_3" ? plaintext.subarray(0, -1) : plaintext;
    });
  return Buffer.concat(chunks).toString("latin1");
}

/**
 * attestor-core's errors carry a code only for some cases: ERROR_NETWORK_ERROR is this process's own
 * WebSocket to the attestor; what the attestor met on its side (the provider refusing the connection, a TLS
 * alert, our attestor's own check of what it saw) comes back as text. Anything may be thrown.
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
  if (code === "ERROR_INVALID_CLAIM" || code === "ERROR_BAD_REQUEST" || code === "ERROR_AUTHENTICATION_FAILED" || /didn't match|range statement/i.test(message)) {
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

/** The attestor's desk (attestor/nullifier-desk.ts) on its claim port: `ws://host:port/ws` → `http://host:port`. */
function deskUrl(attestorUrl: string, path: string): string {
  const url = new URL(attestorUrl);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  url.pathname = path;
  return url.toString();
}

/** Hands the claim's blind r to the attestor before the claim (never in it: the context is published). */
async function handBlind(attestorUrl: string, blindText: Hex): Promise<bigint> {
  const blind = blindOfHex(blindText);
  if (blind === undefined) throw new ProveError("internal", "the nullifier's blind is not a non-zero scalar");
  const answer = await deskCall(deskUrl(attestorUrl, "/nullifier/blind"), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ blind: blindText }) });
  if ((answer as { blindCommitment?: unknown }).blindCommitment !== blindCommitmentOf(blind)) throw new ProveError("refused", "the attestor answered the blind with another commitment");
  return blind;
}

/** The attestor's evaluation for the B its signed claim binds. */
async function fetchEvaluation(attestorUrl: string, blinded: Hex): Promise<ShareEvaluation> {
  const answer = await deskCall(deskUrl(attestorUrl, `/nullifier/evaluation/${blinded}`), {});
  const parsed = z.object({ index: z.number().int(), evaluation: z.string().regex(/^0x[0-9a-f]{64}$/), proof: z.string().regex(/^0x[0-9a-f]{128}$/) }).safeParse(answer);
  if (!parsed.success) throw new ProveError("refused", "the attestor's nullifier evaluation is malformed");
  return parsed.data as ShareEvaluation;
}

async function deskCall(url: string, init: RequestInit): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new ProveError("attestor_unreachable", `the attestor's nullifier desk: ${error instanceof Error ? error.message : String(error)}`);
  }
  const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  if (!response.ok) throw new ProveError("refused", `the attestor's nullifier desk answered HTTP ${response.status}: ${body?.error?.message ?? "no reason"}`);
  return body;
}

/** Runs this process as a prover: reads its configuration, then answers ProveRequests over IPC. */
export function serveProver(plan: ProverPlan): void {
  const env = z
    .object({
      PROVER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex private key").optional(),
      ATTESTOR_CA_FILES: z.string().default(""),
      DATA_DIR: z.string().min(1).default(".data"),
      LOG_LEVEL: z.string().default("error"),
    })
    .parse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== "")));
  process.env.LOG_LEVEL = env.LOG_LEVEL;
  trustExtraRoots(env.ATTESTOR_CA_FILES);
  const privateKey = (env.PROVER_PRIVATE_KEY ?? keyInDataDir(env.DATA_DIR, "prover-key")) as Hex;
  const attestorCore = require("@reclaimprotocol/attestor-core") as AttestorClientModule;
  const zkOperators = stwoOperators();
  const httpProvider = (require("@reclaimprotocol/attestor-core/lib/providers") as { providers: { http: HttpProvider } }).providers.http;

  // One claim at a time in this process, so one setting of each holds for the claim under way.
  let offeredSuites: string[] | undefined;
  let current: { request: ProveRequest } | undefined;
  const defaultClientOptions = httpProvider.additionalClientOptions.bind(httpProvider);
  httpProvider.additionalClientOptions = (params) => {
    const options = defaultClientOptions(params);
    return offeredSuites === undefined ? options : { ...options, cipherSuites: offeredSuites };
  };
  // attestor-core would hide by its own reading of the JSON path; what the attestor sees is ours to plan.
  httpProvider.getResponseRedactions = ({ response }) => {
    if (current === undefined) return [];
    const answer = Buffer.from(response).toString("latin1");
    return plan.hide(answer, current.request.field, current.request.mode, current.request.nullifier?.accountField).map((s) => ({ fromIndex: s.from, toIndex: s.to }));
  };

  async function prove(request: ProveRequest): Promise<ProveResult> {
    const alerts = alertRecorder();
    const started = performance.now();
    let response: { status: number; body: string } | undefined;
    let label: string | undefined;
    let tlsVersion = "";
    current = { request };
    try {
      // Until the answer is in, the bucket is unknown: the first bin stands in, and is replaced below.
      const first = binRange(request.definition, request.definition.labels[0] as string);
      if (first === undefined) throw new ProveError("internal", "the bucket definition has no first bin");
      // attestor-core serializes the context after updateProviderParams: the statement is added there.
      const context: Record<string, unknown> = claimContext(request.owner, request.schemaId, `0x${randomBytes(16).toString("hex")}`);
      const blind = request.nullifier === undefined ? undefined : await handBlind(request.attestorUrl, request.nullifier.blind);
      const result = await attestorCore.createClaimOnAttestor({
        name: "http",
        params: claimParameters({ url: request.url, method: request.method, field: request.field, range: first }),
        secretParams: { headers: request.headers },
        context,
        ownerPrivateKey: privateKey,
        client: { url: request.attestorUrl },
        zkEngine: "snarkjs",
        // Given in both modes: on TLS 1.2 attestor-core proves every record, even when nothing is hidden.
        zkOperators,
        // One attempt: the caller decides about retries, and a retry would fetch the provider again.
        maxRetries: 1,
        logger: alerts.logger,
        // Runs once the provider has answered and before anything is proven: a bad answer stops here, and
        // the statement is fixed to the bucket the value lies in.
        async updateProviderParams(transcript, version) {
          tlsVersion = version;
          const answer = answerFrom(attestorCore, transcript, version);
          response = parseHttpResponse(Buffer.from(answer, "latin1"));
          if (response.status < 200 || response.status > 299) {
            throw new ProveError("provider_status", `the provider answered HTTP ${response.status}`, response.status);
          }
          const token = readField(answer, request.field);
          if (!token.ok) throw new ProveError("extraction", `extraction failed: ${token.reason}`);
          label = plan.label(token.value, request.definition);
          const range = label === undefined ? undefined : binRange(request.definition, label);
          if (range === undefined) throw new ProveError("outside", "the provider's value falls outside every bucket");
          const asked = (plan.ask ?? honestAsk)({ url: request.url, method: request.method, field: request.field, range });
          if (asked.statement === undefined) delete context.statement;
          else context.statement = claimContext(request.owner, request.schemaId, undefined, asked.statement).statement;
          if (request.nullifier !== undefined && blind !== undefined) {
            const account = readAccountId(answer, request.nullifier.accountField);
            if (!account.ok) throw new ProveError("extraction", `the account for the nullifier: ${account.reason}`);
            const accountId = plan.account?.(account.value) ?? account.value;
            const blinded = bytesToHex(encodeElement(nullifierElement({ provider: NULLIFIER_PROVIDER, schemaId: request.schemaId, accountId }).multiply(blind)));
            context[NULLIFIER_CONTEXT_KEY] = claimContext(request.owner, request.schemaId, undefined, undefined, { blinded, blindCommitment: blindCommitmentOf(blind), accountField: request.nullifier.accountField })[NULLIFIER_CONTEXT_KEY];
          }
          return { params: asked.parameters, secretParams: {} };
        },
      });
      if (result.error?.message || !result.claim || !result.signatures) {
        throw new ProveError("refused", `the attestor refused the claim: ${result.error?.message ?? "no claim returned"}`);
      }
      if (response === undefined || label === undefined) throw new ProveError("internal", "the provider's answer was never seen");
      const binding = context[NULLIFIER_CONTEXT_KEY] as { blinded: Hex } | undefined;
      const nullifier = binding === undefined ? undefined : await fetchEvaluation(request.attestorUrl, binding.blinded);
      return {
        id: request.id,
        ok: true,
        claim: result.claim,
        signature: `0x${Buffer.from(result.signatures.claimSignature).toString("hex")}` as Hex,
        attestor: result.signatures.attestorAddress as Address,
        label,
        response,
        tlsVersion,
        ms: performance.now() - started,
        maxRssBytes: resourceUsage().maxRSS * 1024,
        ...(nullifier === undefined ? {} : { nullifier }),
      };
    } catch (error) {
      const alert = alerts.alert();
      const failure = classify(alert !== undefined && !(error instanceof ProveError) ? new Error(`Fatal alert: ${alert}`) : error);
      return { id: request.id, ok: false, kind: failure.kind, reason: failure.message, ...(failure.status === undefined ? {} : { status: failure.status }) };
    } finally {
      current = undefined;
    }
  }

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

  if (process.send === undefined) {
    console.error("a prover runs as a child process: it talks to its parent over Node's IPC channel");
    process.exit(2);
  }
  const send = process.send.bind(process);
  process.on("message", (request: ProveRequest) => {
    void proveFast(request).then((result) => send(result));
  });
  // The parent owns this process: when its channel closes, there is no one left to answer.
  process.on("disconnect", () => process.exit(0));
  const ready: ProverReady = { ready: true, address: privateKeyToAddress(privateKey) };
  send(ready);
}
