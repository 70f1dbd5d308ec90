/**
 * A receipt (issue 41, docs/receipts.md): an attestation the rollup accepted, signed at once by the operator's
 * receipt key as an EAS off-chain attestation: EIP-712, version 2 of eas-sdk's `Offchain` types, so that
 * eas-sdk's `verifyOffchainAttestationSignature` and EAS's tools read it. It is usable before its epoch is
 * claimed, and contradicts the operator if the rollup later proves otherwise (`npm run verify -- --receipt`).
 *
 * Its fields are the registry's for the same attestation (contracts/AttestationStore.sol getAttestation):
 * the schema id, the owner as recipient, the time, the expiry (0: never), revocable, and `data` in the
 * registry's DATA_SCHEMA. `refUID` carries the rollup's attestation id, which is also its uid in the
 * registry: EAS's own field for "the attestation this one refers to", readable by every EAS tool; the
 * receipt's own uid is eas-sdk's off-chain uid of these fields. The salt is derived from the attestation
 * id, and ECDSA signatures here are deterministic (RFC 6979), so a receipt asked for twice is the same bytes.
 */
import {
  encodeAbiParameters,
  encodePacked,
  getAddress,
  keccak256,
  concatHex,
  parseAbiParameters,
  recoverTypedDataAddress,
  stringToHex,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
} from "viem";
import { sign } from "viem/accounts";
import type { NoticeEvent } from "./wire.ts";

/** What a receipt is made from: the attestation as its `attestation:created` notice says it. */
export type ReceiptSource = Extract<NoticeEvent, { event: "attestation:created" }>["data"];
/** What a revocation receipt is made from besides the attestation: its `attestation:revoked` notice. */
export type RevocationSource = Extract<NoticeEvent, { event: "attestation:revoked" }>["data"];

/** The registry's EAS data layout (AttestationStore.DATA_SCHEMA). */
export const DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";
/** eas-sdk's EIP-712 domain name for off-chain attestations, and the EAS version our domain names. */
export const RECEIPT_DOMAIN_NAME = "EAS Attestation";
export const RECEIPT_DOMAIN_VERSION = "1.3.0";
/**
 * A revocation receipt's data: the receipt it revokes (the uid EAS's `revokeOffchain` would be given), the
 * revoked attestation's schema, and the revocation's notice. Its schema uid is EAS's for this layout (no
 * resolver, not revocable), so eas-sdk's SchemaEncoder decodes it like any EAS schema's.
 */
export const REVOCATION_DATA_SCHEMA = "bytes32 receipt,bytes32 schemaId,address revoker,string reason,bytes32 supersededBy";
export const REVOCATION_SCHEMA_UID: Hex = keccak256(encodePacked(["string", "address", "bool"], [REVOCATION_DATA_SCHEMA, zeroAddress, false]));
/** eas-sdk's OffchainAttestationVersion.Version2. */
export const RECEIPT_VERSION = 2;

/** eas-sdk's version 2 `Attest` type, field for field (its verifier compares the types exactly). */
export const RECEIPT_TYPES = {
  Attest: [
    { name: "version", type: "uint16" },
    { name: "schema", type: "bytes32" },
    { name: "recipient", type: "address" },
    { name: "time", type: "uint64" },
    { name: "expirationTime", type: "uint64" },
    { name: "revocable", type: "bool" },
    { name: "refUID", type: "bytes32" },
    { name: "data", type: "bytes" },
    { name: "salt", type: "bytes32" },
  ],
} as const;

export interface ReceiptMessage {
  version: number;
  schema: Hex;
  recipient: Address;
  time: number;
  expirationTime: number;
  revocable: boolean;
  refUID: Hex;
  data: Hex;
  salt: Hex;
}

/** A signed off-chain attestation as eas-sdk's `signOffchainAttestation` returns it. */
export interface Receipt {
  version: number;
  uid: Hex;
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  primaryType: "Attest";
  types: { Attest: { name: string; type: string }[] };
  message: ReceiptMessage;
  signature: { v: number; r: Hex; s: Hex };
}

/** Where a receipt's signature holds: the chain and the registry the attestation is recorded in. */
export interface ReceiptDomain {
  chainId: number;
  registry: Address;
}

/** The fields a receipt states, from the attestation (each also the registry's getAttestation's). */
export function receiptMessage(source: ReceiptSource): ReceiptMessage {
  return {
    version: RECEIPT_VERSION,
    schema: source.schema_id,
    recipient: getAddress(source.owner),
    time: source.timestamp,
    expirationTime: source.expires_at ?? 0,
    revocable: true,
    refUID: source.claimId,
    data: receiptData(source),
    salt: keccak256(encodePacked(["string", "bytes32"], ["rollup-attestation receipt", source.claimId])),
  };
}

/** A receipt's `data` alone (DATA_SCHEMA's encoding), as the index stores it: no salt, no checksum to compute. */
export function receiptData(source: ReceiptSource): Hex {
  const fields = Object.entries(source.bucket_values);
  if (fields.length !== 1) throw new Error(`an attestation with ${fields.length} bucketed fields has no receipt: DATA_SCHEMA holds one`);
  const [[field, bucket]] = fields as [[string, string]];
  const attestors = source.attestors ?? (source.attestor === undefined ? [] : [source.attestor]);
  return encodeAbiParameters(DATA_PARAMS, [source.provider, field, bucket, attestors[0] ?? zeroAddress, BigInt(source.freshness_half_life), attestors]);
}

/**
 * The fields a revocation receipt states: an off-chain attestation by the same signer, about the same
 * attestation (`refUID`, as its receipt's), at the revocation's time, that revokes the attestation's receipt
 * (`data`). Not revocable: the rollup never undoes a revocation.
 */
export function revocationReceiptMessage(attestation: ReceiptSource, revocation: RevocationSource): ReceiptMessage {
  return {
    version: RECEIPT_VERSION,
    schema: REVOCATION_SCHEMA_UID,
    recipient: getAddress(revocation.owner),
    time: revocation.revoked_at,
    expirationTime: 0,
    revocable: false,
    refUID: revocation.claimId,
    data: encodeAbiParameters(REVOCATION_PARAMS, [receiptUid(receiptMessage(attestation)), revocation.schema_id, getAddress(revocation.revoker), revocation.reason, revocation.superseded_by ?? zeroHash]),
    salt: keccak256(encodePacked(["string", "bytes32"], ["rollup-attestation revocation receipt", revocation.claimId])),
  };
}

/** Whether a receipt revokes an attestation's receipt rather than stating an attestation. */
export function isRevocationReceipt(receipt: Receipt): boolean {
  return receipt.message.schema.toLowerCase() === REVOCATION_SCHEMA_UID;
}

/** eas-sdk's `Offchain.getOffchainUID` for version 2 (its schema packed as the UTF-8 of its hex, as eas-sdk does). */
export function receiptUid(m: ReceiptMessage): Hex {
  return keccak256(
    encodePacked(
      ["uint16", "bytes", "address", "address", "uint64", "uint64", "bool", "bytes32", "bytes", "bytes32", "uint32"],
      [m.version, stringToHex(m.schema), m.recipient, zeroAddress, BigInt(m.time), BigInt(m.expirationTime), m.revocable, m.refUID, m.data, m.salt, 0],
    ),
  );
}

function typedData(domain: Receipt["domain"], message: ReceiptMessage) {
  return {
    domain,
    types: RECEIPT_TYPES,
    primaryType: "Attest" as const,
    message: { ...message, time: BigInt(message.time), expirationTime: BigInt(message.expirationTime) },
  };
}

export function receiptDomain(d: ReceiptDomain): Receipt["domain"] {
  return { name: RECEIPT_DOMAIN_NAME, version: RECEIPT_DOMAIN_VERSION, chainId: d.chainId, verifyingContract: getAddress(d.registry) };
}

const ATTEST_TYPEHASH = keccak256(stringToHex(`Attest(${RECEIPT_TYPES.Attest.map((f) => `${f.type} ${f.name}`).join(",")})`));
const DOMAIN_TYPEHASH = keccak256(stringToHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"));
const separators = new Map<string, Hex>();
// Parsed once: the write path signs with them on every claim.
const STRUCT_PARAMS = parseAbiParameters("bytes32, uint16, bytes32, address, uint64, uint64, bool, bytes32, bytes32, bytes32");
const DATA_PARAMS = parseAbiParameters(DATA_SCHEMA);
const REVOCATION_PARAMS = parseAbiParameters(REVOCATION_DATA_SCHEMA);

/**
 * The EIP-712 digest of a receipt, hashed by hand with the domain's separator kept: what viem's
 * hashTypedData computes (the verifier recovers with it), at a fraction of the cost on the write path.
 */
function receiptDigest(domain: Receipt["domain"], m: ReceiptMessage): Hex {
  const key = `${domain.chainId}:${domain.verifyingContract}:${domain.version}`;
  let separator = separators.get(key);
  if (separator === undefined) {
    separator = keccak256(
      encodeAbiParameters(parseAbiParameters("bytes32, bytes32, bytes32, uint256, address"), [DOMAIN_TYPEHASH, keccak256(stringToHex(domain.name)), keccak256(stringToHex(domain.version)), BigInt(domain.chainId), domain.verifyingContract]),
    );
    separators.set(key, separator);
  }
  const struct = keccak256(
    encodeAbiParameters(STRUCT_PARAMS, [
      ATTEST_TYPEHASH,
      m.version,
      m.schema,
      m.recipient,
      BigInt(m.time),
      BigInt(m.expirationTime),
      m.revocable,
      m.refUID,
      keccak256(m.data),
      m.salt,
    ]),
  );
  return keccak256(concatHex(["0x1901", separator, struct]));
}

/** Signs the attestation's receipt with `signerKey`. */
export async function signReceipt(source: ReceiptSource, signerKey: Hex, where: ReceiptDomain): Promise<Receipt> {
  return signReceiptMessage(receiptMessage(source), signerKey, where);
}

/** Signs the receipt of the attestation's revocation with `signerKey`. */
export async function signRevocationReceipt(attestation: ReceiptSource, revocation: RevocationSource, signerKey: Hex, where: ReceiptDomain): Promise<Receipt> {
  return signReceiptMessage(revocationReceiptMessage(attestation, revocation), signerKey, where);
}

async function signReceiptMessage(message: ReceiptMessage, signerKey: Hex, where: ReceiptDomain): Promise<Receipt> {
  const domain = receiptDomain(where);
  const { r, s, v, yParity } = await sign({ hash: receiptDigest(domain, message), privateKey: signerKey });
  const types = { Attest: RECEIPT_TYPES.Attest.map((f) => ({ name: f.name, type: f.type })) };
  return { version: RECEIPT_VERSION, uid: receiptUid(message), domain, primaryType: "Attest", types, message, signature: { v: Number(v ?? BigInt(27 + (yParity ?? 0))), r, s } };
}

/** Why a receipt does not hold as signed by `signer` for `where`, or undefined when it does. */
export async function receiptSignatureProblem(receipt: Receipt, signer: Address, where: ReceiptDomain): Promise<string | undefined> {
  const expected = receiptDomain(where);
  const d = receipt.domain;
  if (d.name !== expected.name || Number(d.chainId) !== expected.chainId || d.verifyingContract.toLowerCase() !== expected.verifyingContract.toLowerCase()) {
    return `its domain names ${d.name} on chain ${d.chainId} at ${d.verifyingContract}, not ${expected.name} on chain ${expected.chainId} at ${expected.verifyingContract}`;
  }
  if (receipt.uid !== receiptUid(receipt.message)) return `its uid ${receipt.uid} is not the uid of its fields (${receiptUid(receipt.message)}): a field was changed`;
  let recovered: Address;
  try {
    const signature = `${receipt.signature.r}${receipt.signature.s.slice(2)}${receipt.signature.v.toString(16).padStart(2, "0")}` as Hex;
    recovered = await recoverTypedDataAddress({ ...typedData({ ...d, chainId: Number(d.chainId) }, receipt.message), signature });
  } catch (error) {
    return `its signature does not parse: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (recovered.toLowerCase() !== signer.toLowerCase()) return `it is signed by ${recovered}, not by the operator's receipt signer ${getAddress(signer)}`;
  return undefined;
}

export interface FieldMismatch {
  field: keyof ReceiptMessage;
  receipt: unknown;
  proven: unknown;
}

/** The receipt's fields that differ from `expected` (what the proven notices make of them), by name. */
export function receiptMismatches(receipt: Receipt, expected: ReceiptMessage): FieldMismatch[] {
  const out: FieldMismatch[] = [];
  for (const field of Object.keys(expected) as (keyof ReceiptMessage)[]) {
    const a = receipt.message[field];
    const b = expected[field];
    const same = typeof a === "string" && typeof b === "string" ? a.toLowerCase() === b.toLowerCase() : a === b;
    if (!same) out.push({ field, receipt: a, proven: b });
  }
  return out;
}
