/**
 * The example consumer contracts (contracts/) of the stack's Rollups version deployed on its chain, and the
 * fields and proofs they take, read from the notices the rollup emitted.
 */
import { createWalletClient, hexToString, http, type Address, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { z } from "zod";
import { isV2Proof, type AttestationProof } from "../../client/index.ts";
import { compiledContract } from "../../contracts/compile.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { contractProof } from "../../devnode/v1/proofs.ts";
import type { TestStack } from "./stack.ts";

/** Account #9: no other test sends from it, so its nonces are its own. */
export function deployerWallet(stack: TestStack) {
  return createWalletClient({ transport: http(stack.urls.rpc), account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 9 }) });
}

/** Deploys a contract of contracts/ by name; with its abi, the wallet that deployed it, and a reader. */
export async function deployContract(stack: TestStack, name: string, args: readonly unknown[]) {
  const { abi, bytecode } = compiledContract(name);
  const wallet = deployerWallet(stack);
  const reader = stack.client.publicClient;
  const deployed = await reader.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode, args, chain: null }) });
  if (deployed.status !== "success" || deployed.contractAddress == null) throw new Error(`deploying ${name} failed (transaction ${deployed.transactionHash})`);
  return { address: deployed.contractAddress, abi, wallet, reader };
}

/** AttestationGate (v1) or AttestationGateV2, bound to `application`. */
export function deployAttestationGate(stack: TestStack, application: Address) {
  return deployContract(stack, stack.rollups === "v2" ? "AttestationGateV2" : "AttestationGate", [application]);
}

/** AttestationRegistryV1 or AttestationRegistryV2 (the IEAS read surface), bound to `application`. */
export function deployAttestationRegistry(stack: TestStack, application: Address) {
  return deployContract(stack, stack.rollups === "v2" ? "AttestationRegistryV2" : "AttestationRegistryV1", [application]);
}

/** The `Attestation` struct of contracts/AttestationNotice.sol, as viem encodes it. */
export interface NoticeAttestation {
  claimId: Hex;
  owner: Address;
  provider: string;
  schemaId: Hex;
  field: string;
  bucket: string;
  attestor: Address;
  attester: Address;
  timestamp: bigint;
  expiresAt: bigint;
  halfLife: bigint;
}

/** The `Revocation` struct of contracts/AttestationNotice.sol, as viem encodes it. */
export interface NoticeRevocation {
  claimId: Hex;
  owner: Address;
  schemaId: Hex;
  revoker: Address;
  revokedAt: bigint;
  reason: string;
  supersededBy: Hex;
}

const ZERO_ADDRESS: Address = `0x${"00".repeat(20)}`;
const ZERO_ID: Hex = `0x${"00".repeat(32)}`;
const id = z.string().regex(/^0x[0-9a-f]{64}$/).transform((v) => v as Hex);
const address = z.string().regex(/^0x[0-9a-f]{40}$/).transform((v) => v as Address);
const seconds = z.int().nonnegative();

// Strict: a notice with a key the contracts do not rebuild (a quorum's `attestors`) cannot be recorded.
const createdNotice = z.strictObject({
  event: z.literal("attestation:created"),
  data: z.strictObject({
    claimId: id,
    owner: address,
    provider: z.string(),
    schema_id: id,
    bucket_values: z.record(z.string(), z.string()).refine((v) => Object.keys(v).length === 1, "one bucketed field (as the api makes them)"),
    attestor: address.optional(),
    attester: address,
    timestamp: seconds,
    expires_at: seconds.nullable(),
    freshness_half_life: z.number().refine(Number.isInteger, "a whole number of seconds: a fractional half-life cannot be rebuilt on chain"),
  }),
});

const revokedNotice = z.strictObject({
  event: z.literal("attestation:revoked"),
  data: z.strictObject({
    claimId: id,
    owner: address,
    schema_id: id,
    revoker: address,
    revoked_at: seconds,
    reason: z.string(),
    superseded_by: id.nullable(),
  }),
});

/** The fields of an `attestation:created` notice (hex of its JSON), for the contracts' `record`. */
export function attestationFields(notice: Hex): NoticeAttestation {
  const { data } = createdNotice.parse(JSON.parse(hexToString(notice)));
  const [[field, bucket]] = Object.entries(data.bucket_values) as [[string, string]];
  return {
    claimId: data.claimId,
    owner: data.owner,
    provider: data.provider,
    schemaId: data.schema_id,
    field,
    bucket,
    attestor: data.attestor ?? ZERO_ADDRESS,
    attester: data.attester,
    timestamp: BigInt(data.timestamp),
    expiresAt: BigInt(data.expires_at ?? 0),
    halfLife: BigInt(data.freshness_half_life),
  };
}

/** The fields of an `attestation:revoked` notice (hex of its JSON), for the contracts' `revoke`. */
export function revocationFields(notice: Hex): NoticeRevocation {
  const { data } = revokedNotice.parse(JSON.parse(hexToString(notice)));
  return {
    claimId: data.claimId,
    owner: data.owner,
    schemaId: data.schema_id,
    revoker: data.revoker,
    revokedAt: BigInt(data.revoked_at),
    reason: data.reason,
    supersededBy: data.superseded_by ?? ZERO_ID,
  };
}

/** The proof argument of `record`/`revoke`: v1's `Proof` for validateNotice, or v2's `OutputValidityProof`. */
export function noticeProofArgument(found: AttestationProof) {
  return isV2Proof(found)
    ? { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings as Hex[] }
    : contractProof(found.proof.validity, found.proof.context as Hex);
}
