/**
 * The owner's own wallet (any EIP-1193 provider in the browser, such as MetaMask) acting through this
 * page: Sign-In with Ethereum for a user token, then EIP-712 consent to a grant or a revoke
 * (common/consent.ts), which the api relays and the rollup checks. The page never holds a key: the wallet
 * signs. The token lives in this object only, in the page's memory, and goes with the page.
 */
import { bytesToHex, stringToHex, type Address, type Hex } from "viem";
import { createSiweMessage } from "viem/siwe";
import { CONSENT_TYPES, type GrantConsent, type RevokeConsent } from "../common/consent.ts";
import { get, send } from "./api.ts";

/** EIP-1193: what a browser wallet injects as `window.ethereum`. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  on?(event: string, listener: (...args: unknown[]) => void): void;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

/** The wallet refused or failed a request (EIP-1193 codes such as 4001, or ours: WRONG_CHAIN, NO_ACCOUNT, BAD_ANSWER). */
export class WalletError extends Error {
  override readonly name = "WalletError";
  constructor(
    readonly code: number | string,
    message: string,
  ) {
    super(message);
  }
}

export interface ConsentDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

interface SignedConsent {
  nonce: Hex;
  deadline: number;
  signature: Hex;
}

/** EIP-712's domain type for this domain's four fields, which eth_signTypedData_v4 wants spelled out. */
const EIP712_DOMAIN = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;

/** A signature is good for an hour: long enough for the api's relay to land, as client/consent.ts does. */
const CONSENT_TTL_SECONDS = 3600;
/** The page's token lasts an hour at most (the SIWE message's expiry caps it): a forgotten tab holds little. */
const SIGN_IN_TTL_SECONDS = 3600;
/** A token this close to its expiry is replaced before use, so a request never dies of it mid-way. */
const TOKEN_MARGIN_SECONDS = 60;

const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The wallet's own error (EIP-1193 `{code, message}`) in words a user can act on; `what` names the request. */
function walletError(error: unknown, what: string): WalletError {
  if (error instanceof WalletError) return error;
  const { code, message } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" && message !== "" ? message : String(error);
  if (code === 4001) return new WalletError(4001, `You declined ${what} in your wallet.`);
  const known = typeof code === "number" || typeof code === "string" ? code : "WALLET_ERROR";
  return new WalletError(known, `Your wallet did not complete ${what}: ${text} (code ${known}).`);
}

export class OwnerWallet {
  private connected: Address | undefined;
  private session: { account: Address; token: string; expiresAt: number } | undefined;
  /** The view on screen, told when the wallet switches accounts under it (one view at a time). */
  onChange: (() => void) | undefined;

  constructor(private readonly provider: Eip1193Provider) {
    provider.on?.("accountsChanged", (accounts: unknown) => {
      const [first] = Array.isArray(accounts) ? accounts : [];
      this.connected = typeof first === "string" ? (first.toLowerCase() as Address) : undefined;
      // A token speaks for the account that signed in, not for whoever the wallet shows now.
      this.session = undefined;
      this.onChange?.();
    });
  }

  /** The connected account (lower-case), if the user connected in this page. */
  get account(): Address | undefined {
    return this.connected;
  }

  /** Whether this page holds a live token for the connected account. */
  private get signedIn(): boolean {
    return this.session !== undefined && this.session.account === this.connected && this.session.expiresAt - TOKEN_MARGIN_SECONDS > nowSeconds();
  }

  /** Asks the wallet for its account (eth_requestAccounts): the user approves the page in the wallet. */
  async connect(): Promise<Address> {
    const accounts = await this.ask("eth_requestAccounts", [], "the connection of this page");
    const [first] = Array.isArray(accounts) ? accounts : [];
    if (typeof first !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(first)) throw new WalletError("NO_ACCOUNT", "The wallet shared no account with this page.");
    this.connected = first.toLowerCase() as Address;
    if (this.session?.account !== this.connected) this.session = undefined;
    return this.connected;
  }

  /** The owner grants `requester` access to its data of one schema, with its signature of the Grant. */
  async grant(grant: { requester: Address; schemaId: Hex; expiresAt: number }): Promise<{ grantId: Hex; txHash: Hex }> {
    const owner = this.owner();
    const token = await this.token();
    const message: GrantConsent = {
      owner,
      requester: grant.requester.toLowerCase() as Address,
      schemaId: grant.schemaId.toLowerCase() as Hex,
      expiresAt: grant.expiresAt,
      ...freshNonce(),
    };
    const consent = await this.signConsent("Grant", message, "the grant's signature");
    const granted = await send<{ grantId: Hex; txHash: Hex }>("POST", "/api/core/grant", {
      token,
      body: { requester: message.requester, schemaId: message.schemaId, expiresAt: message.expiresAt, consent },
    });
    if (granted === undefined) throw new WalletError("BAD_ANSWER", "The api granted but answered no grant id.");
    return granted;
  }

  /** The owner revokes one of its grants, with its signature of the RevokeGrant. */
  async revoke(grantId: Hex): Promise<void> {
    const owner = this.owner();
    const token = await this.token();
    const message: RevokeConsent = { owner, grantId: grantId.toLowerCase() as Hex, ...freshNonce() };
    const consent = await this.signConsent("RevokeGrant", message, "the revoke's signature");
    await send("DELETE", `/api/core/grant/${message.grantId}`, { token, body: { consent } });
  }

  private owner(): Address {
    if (this.connected === undefined) throw new WalletError("NO_ACCOUNT", "Connect your wallet first.");
    return this.connected;
  }

  /** The page's token for the connected account, signing in (SIWE, personal_sign) when it has none. */
  private async token(): Promise<string> {
    const account = this.owner();
    if (this.signedIn && this.session !== undefined) return this.session.token;
    this.session = undefined;
    const { nonce, domain, chainId } = await get<{ nonce: string; domain: string; chainId: number }>("/api/core/auth/nonce");
    const message = createSiweMessage({
      address: account,
      chainId,
      domain,
      nonce,
      uri: location.origin,
      version: "1",
      statement: "Sign in to the attestation explorer to grant or revoke access to your data.",
      expirationTime: new Date((nowSeconds() + SIGN_IN_TTL_SECONDS) * 1000),
    });
    // personal_sign takes the message as hex of its UTF-8 bytes, then the account.
    const signature = await this.ask("personal_sign", [stringToHex(message), account], "the sign-in");
    if (typeof signature !== "string" || !SIGNATURE_RE.test(signature)) throw new WalletError("BAD_ANSWER", "The wallet answered the sign-in with something that is not a signature.");
    const issued = await send<{ token: string; expiresAt: number }>("POST", "/api/core/auth/login", { body: { message, signature } });
    if (issued === undefined) throw new WalletError("BAD_ANSWER", "The api signed you in but answered no token.");
    this.session = { account, token: issued.token, expiresAt: issued.expiresAt };
    return issued.token;
  }

  /** Signs one consent in the rollup's domain (eth_signTypedData_v4), on the chain that domain names. */
  private async signConsent<K extends "Grant" | "RevokeGrant">(
    primaryType: K,
    message: K extends "Grant" ? GrantConsent : RevokeConsent,
    what: string,
  ): Promise<SignedConsent> {
    const domain = await get<ConsentDomain>("/api/core/consent/domain");
    const chain = await this.ask("eth_chainId", [], "the request for its chain id");
    // Wallets such as MetaMask refuse typed data for another chain than their own, with a vaguer message.
    if (typeof chain === "string" && Number.parseInt(chain, 16) !== domain.chainId) {
      throw new WalletError("WRONG_CHAIN", `Your wallet is on chain ${Number.parseInt(chain, 16)}, but consent is signed for the rollup's chain ${domain.chainId}: switch your wallet to chain ${domain.chainId} and try again.`);
    }
    const typed = {
      types: { EIP712Domain: EIP712_DOMAIN, [primaryType]: CONSENT_TYPES[primaryType] },
      domain,
      primaryType,
      // Unix seconds fit a JSON number exactly; the wallet encodes them as uint64.
      message,
    };
    const signature = await this.ask("eth_signTypedData_v4", [this.owner(), JSON.stringify(typed)], what);
    if (typeof signature !== "string" || !SIGNATURE_RE.test(signature)) throw new WalletError("BAD_ANSWER", `The wallet answered ${what} with something that is not a signature.`);
    return { nonce: message.nonce, deadline: message.deadline, signature: signature as Hex };
  }

  private async ask(method: string, params: unknown[], what: string): Promise<unknown> {
    try {
      return await this.provider.request({ method, params });
    } catch (error) {
      throw walletError(error, what);
    }
  }
}

/** A nonce used once (32 random bytes) and the deadline after which the rollup refuses the signature. */
function freshNonce(): { nonce: Hex; deadline: number } {
  return { nonce: bytesToHex(crypto.getRandomValues(new Uint8Array(32))), deadline: nowSeconds() + CONSENT_TTL_SECONDS };
}
