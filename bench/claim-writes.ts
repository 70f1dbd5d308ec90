/**
 * The claims the writes and advance figures put on chain and through the dapp, made as the api makes them
 * (issue 37): the plaintext `[currency, balance]` sealed in a sealed box for a registered key, and for a
 * proven claim one signed range claim per attestor of the quorum, with a 16-byte nonce and attestor-core's
 * provider hash in its context. And their payloads: a lone JSON input, a JSON
 * `batch`, a compact batch (common/compact-batch.ts).
 */
import nacl from "tweetnacl";
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { canonicalJson } from "../common/canonical.ts";
import { compactSchemaOf, encodeCompactBatch, type CompactSchema, type EncodedBatch } from "../common/compact-batch.ts";
import { jsonToHex } from "../common/hex.ts";
import { schemaIdOf } from "../common/ids.ts";
import { binRange } from "../common/range-pattern.ts";
import { sealAnonymous, sealForKey } from "../common/seal.ts";
import { contentSchemaOf, sealedContent } from "../common/sealed-content.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type TlsProof } from "../common/tls-claim.ts";
import type { InputParams } from "../common/wire.ts";
import { BENCH_SCHEMA, BENCH_SCHEMA_ID, bucketLabel, fedOwner } from "./inputs.ts";

export type ClaimItem = { type: "create_attestation"; params: InputParams["create_attestation"] };

/** The key claims are sealed to (its secret is a constant: the bench opens nothing). */
const recipient = Buffer.from(nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(0x42)).publicKey).toString("base64");
const FIELD = "data.balance";
const CONTENT = contentSchemaOf(BENCH_SCHEMA);
const VALUES = { low: 50.5, mid: 512.5, high: 5120.25 } as const;

/** The bench schema as a compact batch names it, at the index the rollup gave it. */
export function benchCompactSchema(index: number): CompactSchema {
  return compactSchemaOf(index, BENCH_SCHEMA_ID, BENCH_SCHEMA.provider, BENCH_SCHEMA.domain, BENCH_SCHEMA.bucketDefinitions);
}

/** The bench schema proven by a quorum of attestors: its own id, at the index after the bench schema's. */
export function provenCompactSchema(benchIndex: number, quorum: number): CompactSchema {
  const content = { ...BENCH_SCHEMA, proof: "attestor" as const, ...(quorum > 1 ? { attestorQuorum: quorum } : {}) };
  return compactSchemaOf(benchIndex + quorum, schemaIdOf(content), BENCH_SCHEMA.provider, BENCH_SCHEMA.domain, BENCH_SCHEMA.bucketDefinitions);
}

/** Claim `i` as the api writes it: its owner, its bucket, and the sealed values of a matching answer. */
export function benchClaim(i: number, form: "now" | "before" = "now"): ClaimItem {
  const label = bucketLabel(i);
  const value = VALUES[label];
  const body = { data: { balance: value, currency: "EUR" } };
  // "before": what issue 37 replaced, the named object in the nonce-carrying box (116 bytes).
  const encrypted =
    form === "now"
      ? sealAnonymous(sealedContent(body, CONTENT, FIELD, value), recipient)
      : sealForKey(new TextEncoder().encode(JSON.stringify({ "data.currency": "EUR", [FIELD]: value })), recipient);
  return { type: "create_attestation", params: { schema_id: BENCH_SCHEMA_ID, owner: fedOwner(i * 10), provider: BENCH_SCHEMA.provider, encrypted_data: encrypted, bucket_values: { [FIELD]: label } } };
}

export function benchClaims(count: number, first: number, form: "now" | "before" = "now"): ClaimItem[] {
  return Array.from({ length: count }, (_, k) => benchClaim(first + k, form));
}

const attestors = Array.from({ length: 3 }, (_, k) => privateKeyToAccount(`0x${(k + 0x31).toString(16).repeat(32)}` as Hex));
/** The key a prover asks the attestors with (the claims' owner); the api's provers keep one each. */
const prover = privateKeyToAccount(`0x${"77".repeat(32)}`).address.toLowerCase() as Address;

/** Claim `i` proven by `quorum` attestors, as the api relays it: one signed range claim each. */
export async function provenClaim(i: number, quorum: number, schema: CompactSchema): Promise<ClaimItem> {
  const base = benchClaim(i);
  const label = base.params.bucket_values[FIELD] as string;
  const definition = BENCH_SCHEMA.bucketDefinitions[FIELD];
  const range = definition === undefined ? undefined : binRange(definition, label);
  if (range === undefined) throw new Error(`bench: no range for ${label}`);
  const parameters = canonicalJson(claimParameters({ url: "https://bench.example/api/balance.json", method: "GET", field: FIELD, range }));
  // attestor-core's provider hash: keccak256 of the parameters (a compact batch rebuilds it).
  const providerHash = keccak256(stringToBytes(parameters));
  const proofs: TlsProof[] = [];
  for (const attestor of attestors.slice(0, quorum)) {
    const nonce = `0x${Buffer.from(nacl.randomBytes(16)).toString("hex")}` as Hex;
    const context = canonicalJson({ ...claimContext(base.params.owner, schema.schemaId, nonce), providerHash });
    const claim = { provider: "http", parameters, owner: prover, timestampS: Math.floor(Date.now() / 1000), context };
    const identifier = claimIdentifier(claim);
    const signed = { ...claim, identifier, epoch: 1 };
    proofs.push({ claim: signed, signature: await attestor.signMessage({ message: claimSignText(signed, identifier) }) });
  }
  return { type: "create_attestation", params: { ...base.params, schema_id: schema.schemaId, proofs } };
}

/** A lone JSON input for one item, a JSON `batch` for more (what the api sent for a group before issue 37). */
export function jsonPayload(items: readonly ClaimItem[]): Hex {
  return items.length === 1 ? jsonToHex(items[0]) : jsonToHex({ type: "batch", params: { items } });
}

/** The compact batch of the items (what the api's group commit sends), every one compact or the bench fails. */
export function compactPayload(items: readonly ClaimItem[], schema: CompactSchema): EncodedBatch {
  const encoded = encodeCompactBatch(items.map((item) => ({ item, schema })));
  if (encoded.compactItems !== items.length) throw new Error(`bench: ${items.length - encoded.compactItems} of ${items.length} claims did not travel compact`);
  return encoded;
}

/** Payload bytes of a hex payload. */
export function payloadBytes(payload: Hex): number {
  return (payload.length - 2) / 2;
}
