import { encodeAbiParameters, keccak256, stringToBytes, type Hex } from "viem";
import type { BucketDefinition } from "./buckets.ts";
import { canonicalJson } from "./canonical.ts";
import type { ProofKind } from "./tls-claim.ts";

/** The content a schema id is derived from (DECISIONS.md section 3): registration fields, camelCase. */
export interface SchemaContent {
  provider: string;
  flowType: string;
  domain: string;
  bucketDefinitions: Record<string, BucketDefinition>;
  dataKeys: string[];
  freshnessHalfLife: number;
  /** "attestor" is part of the content; "none" (the default) is not, so unproven schemas keep their ids. */
  proof?: ProofKind;
  /** Part of the content when above 1 (the default), so single-attestor schemas keep their ids. */
  attestorQuorum?: number;
  /** Part of the content when given, so schemas whose attestations never expire keep their ids. */
  validityPeriod?: number;
  /** Part of the content when true, so schemas that take relayed grants keep their ids. */
  requireSignedConsent?: boolean;
  /** Part of the content unless "admin" (the default), so admin-sealed schemas keep their ids. */
  sealing?: "admin" | "owner" | "owner+admin";
  /**
   * Part of the content when given: a schema unique per account is another schema than the same one
   * without the rule (its attestations mean more), and schemas without it keep their ids.
   */
  accountIdField?: string;
}

export function schemaIdOf(content: SchemaContent): Hex {
  const { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife } = content;
  const base = { provider, flowType, domain, bucketDefinitions, dataKeys, freshnessHalfLife };
  const quorum = content.attestorQuorum !== undefined && content.attestorQuorum > 1 ? { attestorQuorum: content.attestorQuorum } : {};
  const validity = {
    ...(content.validityPeriod !== undefined ? { validityPeriod: content.validityPeriod } : {}),
    ...(content.requireSignedConsent === true ? { requireSignedConsent: true } : {}),
    ...(content.sealing !== undefined && content.sealing !== "admin" ? { sealing: content.sealing } : {}),
    ...(content.accountIdField !== undefined ? { accountIdField: content.accountIdField } : {}),
  };
  const canonical = canonicalJson(content.proof === "attestor" ? { ...base, proof: "attestor", ...quorum, ...validity } : { ...base, ...validity });
  return keccak256(stringToBytes(canonical));
}

export function keyIdOf(publicKey: Uint8Array): Hex {
  return keccak256(publicKey);
}

/** Kinds whose objects take their id from the input's position in the InputBox. */
export type PositionalKind = "create_attestation" | "grant_access";

/**
 * `keccak256(abi.encode(string kind, uint256 input_index))`: known to the api as soon as its
 * transaction's receipt shows the `InputAdded` index, before the rollup has processed the input.
 */
export function inputIdOf(kind: PositionalKind, inputIndex: number | bigint, hash: Keccak = keccak256): Hex {
  return hash(encodeAbiParameters([{ type: "string" }, { type: "uint256" }], [kind, BigInt(inputIndex)]));
}

/**
 * keccak256 of hex bytes: viem's pure-JS one by default (the dapp runs on riscv64 with nothing native);
 * host processes may pass a native one (common/native-keccak.ts), with the same result.
 */
export type Keccak = (data: Hex) => Hex;

/**
 * The id of an object made by item `item` (0-based) of a `batch` input (DECISIONS.md section 3):
 * `keccak256(abi.encode(string kind, uint256 input_index, uint256 item))`. Known to the api at the receipt too.
 */
export function itemIdOf(kind: PositionalKind, inputIndex: number | bigint, item: number, hash: Keccak = keccak256): Hex {
  return hash(encodeAbiParameters([{ type: "string" }, { type: "uint256" }, { type: "uint256" }], [kind, BigInt(inputIndex), BigInt(item)]));
}

/** The id of what a write made: the plain formula for a lone input, the item formula inside a batch. */
export function writeIdOf(kind: PositionalKind, inputIndex: number | bigint, item: number | null, hash: Keccak = keccak256): Hex {
  return item === null ? inputIdOf(kind, inputIndex, hash) : itemIdOf(kind, inputIndex, item, hash);
}
