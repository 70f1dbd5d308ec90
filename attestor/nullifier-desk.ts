// SPDX-License-Identifier: AGPL-3.0-only
/**
 * The attestor's part of a nullifier (docs/nullifiers.md, "The protocol", step 2), beside attestor-core's
 * claim protocol, which has no place for it:
 *
 * 1. Before the claim, the prover hands this attestor its blind r (`POST /nullifier/blind {"blind"}`): the
 *    desk keeps it under R = r·G for a few minutes. r is secret (with it, B gives P), so it never travels in
 *    the claim, whose context is published.
 * 2. When the claim's context binds a nullifier ({B, R, accountField}), the desk, before the claim is
 *    signed, takes the r kept under R, reads nothing itself but is given the account id the attestor read
 *    at accountField from the answer it witnessed, and evaluates its share (`evaluateNullifierShare`, which
 *    refuses unless B = r·P for that account and R = r·G). A refusal refuses the claim: no signature binds a
 *    B this attestor did not check.
 * 3. After the claim, the prover fetches the evaluation (`GET /nullifier/evaluation/<B>`): Z_i = k_i·B and
 *    its DLEQ proof, public once the claim is sent (they travel in the input).
 *
 * An attestor without a share (no NULLIFIER_SHARE_FILE) refuses every claim that binds a nullifier. What it
 * keeps is bounded in count and time (a stranger can post blinds, never get an evaluation of a B it did
 * not have signed), and it logs none of r, B's account or P.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Hex } from "viem";
import { blindCommitmentOf, blindOfHex, evaluateNullifierShare, NullifierError, type KeyShare, type ShareEvaluation } from "../common/nullifier.ts";
import type { Reading } from "../common/revealed-response.ts";
import type { NullifierBinding } from "../common/tls-claim.ts";

/** The provider P names: the TLS attestor's (a schema's `provider_type` already says whose accounts these are). */
export const NULLIFIER_PROVIDER = "https";
/** How long a blind waits for its claim, and an evaluation for its prover. */
export const DESK_TTL_MS = 10 * 60_000;
/** Most blinds, and most evaluations, kept at once: past it the oldest go. */
export const DESK_MAX_ENTRIES = 10_000;
const MAX_BODY_BYTES = 1_024;
const ELEMENT_RE = /^0x[0-9a-fA-F]{64}$/;
const EVALUATION_PATH = "/nullifier/evaluation/";

export interface NullifierDesk {
  /** The index of this attestor's share, or undefined when it holds none (and so evaluates nothing). */
  readonly index: number | undefined;
  /** Answers `POST /nullifier/blind` and `GET /nullifier/evaluation/<B>`; false for any other request. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
  /** Step 2: this attestor's evaluation for a claim that binds `binding`, of the account it read, or why not. */
  evaluate(binding: NullifierBinding, schemaId: Hex, accountId: string): Reading<ShareEvaluation>;
}

/** Insertion-ordered entries that expire, at most `max` of them. */
class Expiring<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number,
  ) {}
  set(key: string, value: T): void {
    this.entries.delete(key);
    while (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
  }
  take(key: string): T | undefined {
    const found = this.get(key);
    this.entries.delete(key);
    return found;
  }
  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
  res.end(text);
}

const refusal = (res: ServerResponse, status: number, code: string, message: string): void => answer(res, status, { error: { code, message } });

export function nullifierDesk(share: KeyShare | undefined, options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}): NullifierDesk {
  const ttl = options.ttlMs ?? DESK_TTL_MS;
  const max = options.maxEntries ?? DESK_MAX_ENTRIES;
  const now = options.now ?? Date.now;
  const blinds = new Expiring<bigint>(ttl, max, now);
  const evaluations = new Expiring<ShareEvaluation>(ttl, max, now);

  const takeBlind = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once("end", () => {
      if (size > MAX_BODY_BYTES) return refusal(res, 413, "BODY_TOO_LARGE", `the body is ${size} bytes; at most ${MAX_BODY_BYTES}`);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return refusal(res, 400, "INVALID_BODY", 'expected JSON: {"blind": "0x<64 hex digits>"}');
      }
      const text = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>).blind : undefined;
      const blind = typeof text === "string" ? blindOfHex(text) : undefined;
      if (blind === undefined) return refusal(res, 400, "INVALID_BLIND", "blind: expected a non-zero scalar, 0x and 64 hex digits (RFC 9497's SerializeScalar, little-endian)");
      const blindCommitment = blindCommitmentOf(blind);
      blinds.set(blindCommitment, blind);
      answer(res, 200, { blindCommitment, expiresInS: Math.floor(ttl / 1000) });
    });
    req.once("error", () => res.destroy());
  };

  return {
    index: share?.index,
    serve(req, res) {
      const url = req.url ?? "";
      const ours = url === "/nullifier/blind" || url.startsWith(EVALUATION_PATH);
      if (!ours) return false;
      if (share === undefined) {
        req.resume();
        refusal(res, 404, "NO_NULLIFIER_SHARE", "this attestor holds no nullifier share (NULLIFIER_SHARE_FILE)");
        return true;
      }
      if (url === "/nullifier/blind") {
        if (req.method !== "POST") {
          req.resume();
          refusal(res, 405, "METHOD_NOT_ALLOWED", "POST a blind here");
        } else takeBlind(req, res);
        return true;
      }
      req.resume();
      const blinded = url.slice(EVALUATION_PATH.length).toLowerCase();
      if (req.method !== "GET") refusal(res, 405, "METHOD_NOT_ALLOWED", "GET an evaluation here");
      else if (!ELEMENT_RE.test(blinded)) refusal(res, 400, "INVALID_BLINDED", "the path ends with B: 0x and 64 hex digits");
      else {
        const found = evaluations.get(blinded);
        if (found === undefined) refusal(res, 404, "NO_EVALUATION", "this attestor signed no claim binding this B lately (or its evaluation expired)");
        else answer(res, 200, found);
      }
      return true;
    },
    evaluate(binding, schemaId, accountId) {
      if (share === undefined) return { ok: false, reason: "this attestor holds no nullifier share, so it signs no claim that binds a nullifier" };
      const commitment = binding.blindCommitment.toLowerCase();
      // One claim per blind: a blind used once is spent, whether or not its claim is then signed.
      const blind = blinds.take(commitment);
      if (blind === undefined) return { ok: false, reason: "no blind was handed to this attestor for the claim's R (POST /nullifier/blind first), or it expired" };
      try {
        const evaluation = evaluateNullifierShare(share, { provider: NULLIFIER_PROVIDER, schemaId, accountId }, { blind, blinded: binding.blinded, blindCommitment: binding.blindCommitment });
        evaluations.set(binding.blinded.toLowerCase(), evaluation);
        return { ok: true, value: evaluation };
      } catch (error) {
        if (error instanceof NullifierError) return { ok: false, reason: `nullifier: ${error.message}` };
        throw error;
      }
    },
  };
}
