/**
 * The rollup's side of nullifiers (issue 52, docs/nullifiers.md): one provider account backs one owner of
 * a schema unique per account. A proven claim of such a schema carries its nullifier's published parts;
 * here they are judged against the registered key set and the claim's signed contexts, and the nullifier
 * is bound to the claim's owner. Every refusal is an InputRejection made in this file: `NULLIFIER_REJECTED`
 * with a message starting `nullifier: `, or `ACCOUNT_ALREADY_BOUND`. The dapp never sees the account id or
 * P, so no message can hold them.
 */
import type { Address, Hex } from "viem";
import { bytesToHex } from "../common/hex.ts";
import { verifyNullifier, type NullifierKeys, type PublishedNullifier } from "../common/nullifier.ts";
import { decodeElement, type Element } from "../common/oprf-ristretto255.ts";
import { nullifierBindingProblem, type TlsProof } from "../common/tls-claim.ts";
import { hexToBuffer } from "./db/bytes.ts";
import type { StoredNullifierKeys } from "./db/nullifier-store.ts";
import type { Store } from "./db/store.ts";
import { InputRejection } from "./errors.ts";

const refuse = (message: string): InputRejection => new InputRejection("NULLIFIER_REJECTED", `nullifier: ${message}`);

/** The stored key set as verifyNullifier takes it: its elements were checked by checkKeySet when registered. */
export function registeredKeys(stored: StoredNullifierKeys): NullifierKeys {
  const element = (bytes: Buffer, what: string): Element => {
    const decoded = decodeElement(new Uint8Array(bytes));
    // Stored only after checkKeySet accepted it: a row that does not decode is a broken database.
    if (decoded === undefined) throw new Error(`the stored nullifier key set's ${what} is not an element`);
    return decoded;
  };
  return {
    threshold: stored.threshold,
    groupKey: element(stored.groupKey, "group key"),
    commitments: new Map(stored.shares.map((share) => [share.shareIndex, element(share.commitment, `commitment ${share.shareIndex}`)])),
  };
}

export interface ClaimNullifier {
  schemaId: Hex;
  /** The schema's `accountIdField`: the field every signed context must say the account was read at. */
  accountIdField: string;
  /** The claim's signed proofs, already checked (dapp/proof.ts), and their signers in the same order. */
  proofs: readonly Pick<TlsProof, "claim">[];
  signers: readonly Address[];
  published: PublishedNullifier | undefined;
}

/**
 * The nullifier a proven claim of a schema unique per account establishes, or a refusal. In order:
 * it is there; every signed context binds exactly its B and R (else parts copied from another claim would
 * pass) and the schema's account field (else the attestors read the account elsewhere); every share whose index is registered is held by one of the claim's signers (a signer checked B
 * against the account it saw; a share from elsewhere vouches for nothing); then verifyNullifier's checks.
 */
export function checkClaimNullifier(store: Store, claim: ClaimNullifier): Hex {
  const { published } = claim;
  if (published === undefined) throw refuse(`schema ${claim.schemaId} is unique per account: a proven claim must carry its nullifier`);
  const stored = store.nullifierKeys();
  // register_schema refuses a unique schema before a key set exists, and a key set is never removed.
  if (stored === undefined) throw refuse("no nullifier key set is registered");
  claim.proofs.forEach(({ claim: signed }, i) => {
    const problem = nullifierBindingProblem(signed.context, published, claim.accountIdField);
    if (problem !== undefined) throw refuse(`${claim.proofs.length > 1 ? `claim ${i + 1}` : "the claim"}: ${problem}`);
  });
  const holders = new Map(stored.shares.map((share) => [share.shareIndex, bytesToHex(share.attestor) as Address]));
  const signers = new Set(claim.signers.map((signer) => signer.toLowerCase()));
  for (const { index } of published.shares) {
    const holder = holders.get(index);
    if (holder !== undefined && !signers.has(holder)) {
      throw refuse(`share ${index} is held by attestor ${holder}, which did not sign this claim: shares count only from the claim's signers`);
    }
  }
  const verdict = verifyNullifier(published, registeredKeys(stored));
  if (!verdict.ok) throw refuse(`${verdict.message} (${verdict.reason})`);
  return verdict.nullifier;
}

/**
 * Binds the nullifier to `owner`, or accepts the same owner again (a refresh). Another owner is refused,
 * also after every attestation of the account was revoked: were the account freed, it could back owners
 * in turn (docs/nullifiers.md, "Revocation and the nullifier").
 */
export function bindNullifier(store: Store, binding: { schemaId: Hex; nullifier: Hex; owner: Address; attestationId: Hex; inputIndex: number }): void {
  const schemaId = hexToBuffer(binding.schemaId);
  const nullifier = hexToBuffer(binding.nullifier);
  const owner = hexToBuffer(binding.owner);
  const bound = store.nullifierOwner(schemaId, nullifier);
  if (bound === undefined) {
    store.bindNullifier({ schemaId, nullifier, owner, attestationId: hexToBuffer(binding.attestationId), inputIndex: binding.inputIndex });
    return;
  }
  if (!bound.equals(owner)) {
    throw new InputRejection(
      "ACCOUNT_ALREADY_BOUND",
      `nullifier: this provider account already backs another owner under schema ${binding.schemaId}: one account backs one owner, and a revocation does not free it`,
    );
  }
}
