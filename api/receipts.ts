/**
 * Receipts (docs/receipts.md): each attestation the rollup accepted, signed by the operator's receipt key
 * as an EAS off-chain attestation (common/receipt.ts) whose domain names this chain and the registry. Made
 * from what the rollup holds, never from what a request said, so one is never issued for an input the dapp
 * rejected; the same attestation always gets the same receipt.
 */
import { zeroAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { receiptDomain, signReceipt, signRevocationReceipt, type Receipt, type ReceiptSource, type RevocationSource } from "../common/receipt.ts";
import type { AttestationView, RevocationView, SchemaDetail } from "../common/wire.ts";
import { ApiError } from "./errors.ts";

export interface SignedReceipt {
  /** The address that signed it: what eas-sdk's verifyOffchainAttestationSignature is given. */
  signer: Address;
  receipt: Receipt;
}

export class ReceiptSigner {
  readonly signer: Address;

  constructor(
    private readonly key: Hex,
    /** The chain and the registry the receipts' domain names; undefined when the api knows no registry. */
    private readonly where: { chainId: number; registry: Address } | undefined,
  ) {
    // Lower case, as the api serves every address; a verifier's checksum makes no difference to eas-sdk.
    this.signer = privateKeyToAccount(key).address.toLowerCase() as Address;
  }

  /** The signer, and the chain and registry its receipts name (undefined without a registry). */
  published(): { signer: Address; where: { chainId: number; registry: Address } | undefined } {
    return { signer: this.signer, where: this.where };
  }

  /** What a verifier is told: the signer, and the domain its receipts hold in (null without a registry). */
  describe(): { signer: Address; domain: Receipt["domain"] | null } {
    return { signer: this.signer, domain: this.where === undefined ? null : receiptDomain(this.where) };
  }

  /** The receipt of an attestation as the rollup holds it (its view and its schema's detail). */
  async sign(view: AttestationView, schema: SchemaDetail): Promise<SignedReceipt> {
    const where = this.signable();
    return { signer: this.signer, receipt: await signReceipt(this.source(view, schema), this.key, where) };
  }

  /** The receipt of the revocation of an attestation the rollup holds revoked (docs/receipts.md). */
  async signRevocation(view: AttestationView, schema: SchemaDetail): Promise<SignedReceipt> {
    const where = this.signable();
    const source = this.source(view, schema);
    const { revocation } = view;
    if (revocation === null) throw new ApiError("NOT_REVOKED", "The attestation has not been revoked", { claim_id: view.attestation_id });
    return { signer: this.signer, receipt: await signRevocationReceipt(source, revocationSourceOf(view, revocation), this.key, where) };
  }

  private signable(): { chainId: number; registry: Address } {
    if (this.where === undefined) {
      throw new ApiError("RECEIPT_UNAVAILABLE", "This api knows no registry for a receipt's domain to name (set REGISTRY_ADDRESS and GATE_ADDRESS)", { reason: "no registry" });
    }
    return this.where;
  }

  private source(view: AttestationView, schema: SchemaDetail): ReceiptSource {
    const fields = Object.keys(view.bucket_values).length;
    if (fields !== 1) {
      throw new ApiError("RECEIPT_UNAVAILABLE", `The attestation has ${fields} bucketed fields: a receipt's data, as the registry's, holds one`, { reason: "fields", claim_id: view.attestation_id });
    }
    return receiptSourceOf(view, schema);
  }
}

/** An attestation as its notice states it, from what the rollup's reads answer (its view and its schema). */
export function receiptSourceOf(view: AttestationView, schema: SchemaDetail): ReceiptSource {
  return {
    claimId: view.attestation_id,
    owner: view.owner,
    provider: schema.provider_type,
    schema_id: view.schema_id,
    bucket_values: view.bucket_values,
    attester: view.attester ?? zeroAddress,
    timestamp: view.timestamp,
    expires_at: view.expires_at,
    freshness_half_life: schema.freshness_half_life,
    attestors: view.attestors,
  };
}

/** A revoked attestation's revocation as its notice states it, from the rollup's read of the attestation. */
export function revocationSourceOf(view: AttestationView, revocation: RevocationView): RevocationSource {
  return {
    claimId: view.attestation_id,
    owner: view.owner,
    schema_id: view.schema_id,
    revoker: revocation.revoker,
    revoked_at: revocation.revoked_at,
    reason: revocation.reason,
    superseded_by: revocation.superseded_by,
  };
}
