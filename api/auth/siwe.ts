/**
 * Sign-In with Ethereum (EIP-4361) for users (DECISIONS.md section 6): the api hands out single-use
 * nonces; a login presents a SIWE message carrying one and the wallet's signature of it, and receives a
 * user token whose `sub` is the signing address.
 */
import { randomBytes } from "node:crypto";
import type { Address, Hex } from "viem";
import { verifyMessage } from "viem";
import { parseSiweMessage, validateSiweMessage } from "viem/siwe";
import { normalizeAddress } from "../../common/address.ts";
import { ApiError } from "../errors.ts";

export const NONCE_TTL_SECONDS = 10 * 60;
/** Nonces are unauthenticated to obtain, so the store is capped: the oldest are dropped first. */
const MAX_OUTSTANDING_NONCES = 10_000;

/** Issues and consumes login nonces: in this process (`NonceStore`) or in Redis, shared by replicas. */
export interface NonceKeeper {
  issue(): { nonce: string; expiresAt: number } | Promise<{ nonce: string; expiresAt: number }>;
  /** True once per issued, unexpired nonce. */
  consume(nonce: string): boolean | Promise<boolean>;
}

/** A fresh SIWE nonce: SIWE wants alphanumerics, at least 8; hex of 16 random bytes is both. */
export function newNonce(): string {
  return randomBytes(16).toString("hex");
}

export class NonceStore implements NonceKeeper {
  /** nonce → expiry (Unix seconds); a Map keeps insertion order, so the first key is the oldest. */
  private readonly nonces = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  issue(): { nonce: string; expiresAt: number } {
    this.evictExpired();
    while (this.nonces.size >= MAX_OUTSTANDING_NONCES) {
      const oldest = this.nonces.keys().next().value;
      if (oldest === undefined) break;
      this.nonces.delete(oldest);
    }
    const nonce = newNonce();
    const expiresAt = this.now() + NONCE_TTL_SECONDS;
    this.nonces.set(nonce, expiresAt);
    return { nonce, expiresAt };
  }

  /** True once per issued, unexpired nonce: a replayed login fails. */
  consume(nonce: string): boolean {
    const expiresAt = this.nonces.get(nonce);
    if (expiresAt === undefined) return false;
    this.nonces.delete(nonce);
    return expiresAt > this.now();
  }

  get size(): number {
    return this.nonces.size;
  }

  private evictExpired(): void {
    const now = this.now();
    for (const [nonce, expiresAt] of this.nonces) {
      if (expiresAt <= now) this.nonces.delete(nonce);
    }
  }
}

export interface SiweLoginInput {
  message: string;
  signature: Hex;
  /** The authority the client reached the api at (the Host header); the message must name it. */
  domain: string;
  chainId: number;
}

/** Returns the signer's lower-case address and the message's own expiry, or throws AUTH_INVALID. */
export async function verifySiweLogin(
  input: SiweLoginInput,
  nonces: NonceKeeper,
  now: () => number,
): Promise<{ address: Address; messageExpiresAt: number | undefined }> {
  const invalid = (why: string) => new ApiError("AUTH_INVALID", `Sign-in failed: ${why}`);
  const fields = parseSiweMessage(input.message);
  if (fields.address === undefined || fields.nonce === undefined) throw invalid("not a SIWE message");
  if (fields.chainId !== input.chainId) throw invalid(`the message must name chain ${input.chainId}`);
  const valid = validateSiweMessage({
    message: fields,
    domain: input.domain,
    time: new Date(now() * 1000),
  });
  if (!valid) throw invalid(`the message is expired, not yet valid or not for domain ${input.domain}`);
  let signed = false;
  try {
    // Plain ECDSA recovery: EOA wallets only, and no chain round trip on the login path.
    signed = await verifyMessage({ address: fields.address, message: input.message, signature: input.signature });
  } catch {
    signed = false;
  }
  if (!signed) throw invalid("the signature does not match the message's address");
  // Consumed only after the signature checks out, so a forged attempt cannot burn someone's nonce.
  if (!(await nonces.consume(fields.nonce))) throw invalid("unknown, expired or already used nonce");
  const messageExpiresAt =
    fields.expirationTime === undefined ? undefined : Math.floor(fields.expirationTime.getTime() / 1000);
  return { address: normalizeAddress(fields.address), messageExpiresAt };
}
