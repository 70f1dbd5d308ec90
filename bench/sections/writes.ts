/**
 * What a write costs on the base layer (issues 13 and 37): gas per attestation of our inputs, one claim
 * and batches of 8, 32 and 128 claims, as JSON and as compact batches, and proven claims (quorum 1 and 3)
 * both ways, beside EAS's `attest` and `multiAttest` of the same sizes, deployed from EAS's published
 * bytecode (@ethereum-attestation-service/eas-contracts) on the same chain in the same run, carrying the
 * same fields (schema, owner, provider, the same sealed bytes, the bucket); where a compact batch's bytes
 * go; and other encodings of a batch of 32, priced by the chain (eth_estimateGas). `gasRows` makes the
 * writes section's gas figures on the whole stack's chain; its claims/s rows are measured through the api
 * (bench/sections/api.ts).
 */
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  parseAbiParameters,
  type Address,
  type Hex,
} from "viem";
import { hardhatAccount } from "../../devnode/hardhat-keys.ts";
import { hardhat } from "viem/chains";
import { compactBytes, compactSchemaOfDetail, type CompactBytes } from "../../common/compact-batch.ts";
import { hexToUtf8 } from "../../common/hex.ts";
import { SEALED_BOX_OVERHEAD } from "../../common/seal.ts";
import type { SchemaDetail } from "../../common/wire.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import type { TestStack } from "../../test/support/stack.ts";
import { benchClaim, benchClaims, benchCompactSchema, compactPayload, jsonPayload, payloadBytes, provenClaim, provenCompactSchema } from "../claim-writes.ts";
import { deployEas, ZERO_UID, type EasRequest } from "../eas.ts";
import { BENCH_SCHEMA_ID } from "../inputs.ts";
import { figure } from "../report.ts";
import type { BenchContext, SectionRows } from "./context.ts";

export const GAS_SIZES = [1, 8, 32, 128] as const;
export type GasSize = (typeof GAS_SIZES)[number];
/** Quorums of the proven rows: one attestor, and three (`npm start -- --attestors 3`). */
export const PROVEN_QUORUMS = [1, 3] as const;
export type ProvenQuorum = (typeof PROVEN_QUORUMS)[number];
/** The batch size of the headline row, the proven rows and the split. */
const HEADLINE = 32;

export interface WriteGas {
  /** Gas per attestation of JSON inputs: 1 is a lone create_attestation, n > 1 a JSON `batch` of n. */
  json: Record<GasSize, number>;
  /** Gas per attestation of compact batches of n (issue 37: what the api's group commit sends). */
  compact: Record<GasSize, number>;
  /** Payload bytes per attestation of the same inputs. */
  bytes: { json: Record<GasSize, number>; compact: Record<GasSize, number> };
  /** Proven claims (one signed claim per attestor of the quorum), batches of 32, both encodings. */
  proven: Record<ProvenQuorum, { json: number; compact: number; jsonBytes: number; compactBytes: number }>;
  /** Gas per attestation of EAS (1: attest; n > 1: multiAttest of n). */
  eas: Record<GasSize, number>;
  easDataBytes: number;
  /** How many transactions EAS needed per size (above 1 when a multiAttest exceeded the per-transaction gas cap). */
  easTransactions: Record<GasSize, number>;
  /** Where a compact batch of 32's bytes go, per attestation, and the sealed data's parts. */
  split: CompactBytes & { plaintext: number };
  /** Other encodings of a batch of 32, priced by eth_estimateGas. */
  encodings: { name: string; bytesPerItem: number; gasPerItem: number }[];
}

const EAS_SCHEMA = "bytes32 schemaId,address owner,string provider,bytes encryptedData,string bucketValues";

/** Encodings of a batch of 32 the bench prices besides the ones it sends, to see what each step bought. */
const ENCODINGS: { name: string; encode(first: number): Hex }[] = [
  { name: "JSON batch as before issue 37 (named plaintext, nonce sent: 116-byte seals)", encode: (first) => jsonPayload(benchClaims(HEADLINE, first, "before")) },
  {
    name: "every field ABI-encoded, (bytes32, address, string, bytes, string)[]",
    encode: (first) =>
      encodeAbiParameters(parseAbiParameters("(bytes32,address,string,bytes,string)[]"), [
        benchClaims(HEADLINE, first).map((i) => [i.params.schema_id, i.params.owner, i.params.provider, i.params.encrypted_data, JSON.stringify(i.params.bucket_values)] as const),
      ]),
  },
];

/**
 * Measures on the chain at `rpcUrl` (hardhat, its accounts unlocked): our inputs go from account #1 to the
 * application (its dapp judges them as any sender's: the gas is the chain's part only); EAS runs from #2.
 * `schemaIndex` is the bench schema's short index in the stack's rollup.
 */
export async function measureWriteGas(rpcUrl: string, inputBox: Address, dapp: Address, schemaIndex: number): Promise<WriteGas> {
  const chain = { ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } };
  const transport = http(rpcUrl, { retryCount: 0, timeout: 120_000 });
  const reader = createPublicClient({ chain, transport });
  const ours = createWalletClient({ chain, transport, account: hardhatAccount(1) });
  const attester = createWalletClient({ chain, transport, account: hardhatAccount(2) });
  const gasOf = async (hash: Hex) => {
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`write cost: transaction ${hash} reverted`);
    return receipt.gasUsed;
  };
  const addInput = async (payload: Hex) => Number(await gasOf(await ours.writeContract({ address: inputBox, abi: inputBoxAbi, functionName: "addInput", args: [dapp, payload] })));

  // ---- ours: each size in both encodings, the same claims; the first input warms the dapp's input array (its length slot) ----
  const schema = benchCompactSchema(schemaIndex);
  const json = {} as Record<GasSize, number>;
  const compact = {} as Record<GasSize, number>;
  const bytes = { json: {} as Record<GasSize, number>, compact: {} as Record<GasSize, number> };
  let split: WriteGas["split"] | undefined;
  await addInput(jsonPayload(benchClaims(1, 9_000_000)));
  let first = 9_000_001;
  for (const size of GAS_SIZES) {
    const items = benchClaims(size, first);
    first += size;
    const asJson = jsonPayload(items);
    const asCompact = compactPayload(items, schema);
    json[size] = (await addInput(asJson)) / size;
    compact[size] = (await addInput(asCompact.payload)) / size;
    bytes.json[size] = payloadBytes(asJson) / size;
    bytes.compact[size] = payloadBytes(asCompact.payload) / size;
    if (size === HEADLINE) {
      const per = Object.fromEntries(Object.entries(compactBytes(asCompact.payload, (index) => (index === schema.index ? schema : undefined))).map(([k, v]) => [k, v / size])) as unknown as CompactBytes;
      split = { ...per, plaintext: per.sealedData - SEALED_BOX_OVERHEAD };
    }
  }
  if (split === undefined) throw new Error("write cost: no batch of 32");

  // ---- proven claims: batches of 32 with one signed claim per attestor of the quorum ----
  const proven = {} as WriteGas["proven"];
  for (const quorum of PROVEN_QUORUMS) {
    const provenSchema = provenCompactSchema(schemaIndex, quorum);
    const items = [];
    for (let k = 0; k < HEADLINE; k++) items.push(await provenClaim(first + k, quorum, provenSchema));
    first += HEADLINE;
    const asJson = jsonPayload(items);
    const asCompact = compactPayload(items, provenSchema);
    proven[quorum] = {
      json: (await addInput(asJson)) / HEADLINE,
      compact: (await addInput(asCompact.payload)) / HEADLINE,
      jsonBytes: payloadBytes(asJson) / HEADLINE,
      compactBytes: payloadBytes(asCompact.payload) / HEADLINE,
    };
  }

  // ---- EAS on the same chain, the same fields ----
  const onChain = await deployEas(reader, attester, EAS_SCHEMA);
  const request = (i: number): EasRequest => {
    const p = benchClaim(i).params;
    return {
      recipient: p.owner,
      expirationTime: 0n,
      revocable: true,
      refUID: ZERO_UID,
      data: encodeAbiParameters(parseAbiParameters(EAS_SCHEMA), [p.schema_id, p.owner, p.provider, p.encrypted_data, JSON.stringify(p.bucket_values)]),
      value: 0n,
    };
  };
  const easDataBytes = (request(0).data.length - 2) / 2;
  const easPerItem = {} as Record<GasSize, number>;
  const easChunks = {} as Record<GasSize, number>;
  let at = 1;
  for (const size of GAS_SIZES) {
    const measured = await onChain.gasPerAttestation(size, request, at);
    at += size;
    easPerItem[size] = measured.gas;
    easChunks[size] = measured.transactions;
  }

  // ---- other encodings of a batch of 32, priced by the chain ----
  const encodings = [];
  for (const encoding of ENCODINGS) {
    const payload = encoding.encode(8_000_000);
    const gas = await reader.estimateGas({
      account: ours.account,
      to: inputBox,
      data: encodeFunctionData({ abi: inputBoxAbi, functionName: "addInput", args: [dapp, payload] }),
    });
    encodings.push({ name: encoding.name, bytesPerItem: payloadBytes(payload) / HEADLINE, gasPerItem: Number(gas) / HEADLINE });
  }

  return { json, compact, bytes, proven, eas: easPerItem, easDataBytes, easTransactions: easChunks, split, encodings };
}

/** The names of the writes section's gas figures (bench/run.ts expects every one). */
export function gasFigureName(n: GasSize, encoding: "json" | "compact"): string {
  if (encoding === "json") return n === 1 ? "gas per attestation, one claim" : `gas per attestation, JSON batch of ${n}`;
  return `gas per attestation, compact batch of ${n}`;
}

export function provenFigureName(quorum: ProvenQuorum, encoding: "json" | "compact"): string {
  return `gas per attestation, proven (quorum ${quorum}), ${encoding === "json" ? "JSON" : "compact"} batch of ${HEADLINE}`;
}

export const BYTES_FIGURE = `payload bytes per attestation, compact batch of ${HEADLINE}`;

export function gasFigureNames(): string[] {
  return [
    ...GAS_SIZES.flatMap((n) => [gasFigureName(n, "json"), gasFigureName(n, "compact")]),
    ...PROVEN_QUORUMS.flatMap((q) => [provenFigureName(q, "json"), provenFigureName(q, "compact")]),
    BYTES_FIGURE,
  ];
}

/** What a write costs on chain, beside EAS on the same chain: the gas figures and their notes. */
export async function gasRows(ctx: BenchContext, stack: TestStack): Promise<SectionRows> {
  const figures: SectionRows["figures"] = [];
  const detail = JSON.parse(hexToUtf8((await stack.inspect({ type: "provider_schema", params: { schema_id: BENCH_SCHEMA_ID, include_index: true } })).reports[0]?.payload ?? "0x")) as SchemaDetail;
  const gas = await measureWriteGas(stack.urls.rpc, stack.addresses.inputBox, stack.addresses.dapp, compactSchemaOfDetail(detail).index);
  const list = (r: Record<GasSize, number>) => GAS_SIZES.map((n) => `${n}: ${Math.round(r[n])}`).join(", ");
  ctx.log(`gas per attestation: JSON ${list(gas.json)}; compact ${list(gas.compact)}; EAS ${list(gas.eas)}`);
  const easName = (n: GasSize) => (n === 1 ? "EAS attest" : `EAS multiAttest of ${n}${gas.easTransactions[n] > 1 ? ` (${gas.easTransactions[n]} transactions)` : ""}`);
  const attest = { name: "EAS attest", value: gas.eas[1] };
  for (const n of GAS_SIZES) {
    figures.push(
      n === HEADLINE
        ? figure("writes", gasFigureName(n, "json"), "gas", gas.json[n], attest, { alt: { name: easName(n), value: gas.eas[n] }, target: { text: "<= 1/20 of EAS attest", met: (_v: number, r: number) => r <= 1 / 20 } })
        : figure("writes", gasFigureName(n, "json"), "gas", gas.json[n], { name: easName(n), value: gas.eas[n] }),
    );
  }
  for (const n of GAS_SIZES) {
    figures.push(
      n === HEADLINE
        ? figure("writes", gasFigureName(n, "compact"), "gas", gas.compact[n], attest, {
            alt: { name: easName(n), value: gas.eas[n] },
            target: { text: "<= 5,000 and <= 1/100 of EAS attest", met: (v: number, r: number) => v <= 5_000 && r <= 1 / 100 },
          })
        : figure("writes", gasFigureName(n, "compact"), "gas", gas.compact[n], { name: easName(n), value: gas.eas[n] }),
    );
  }
  for (const q of PROVEN_QUORUMS) {
    figures.push(
      figure("writes", provenFigureName(q, "json"), "gas", gas.proven[q].json, attest),
      figure("writes", provenFigureName(q, "compact"), "gas", gas.proven[q].compact, attest, { alt: { name: `the same in JSON`, value: gas.proven[q].json } }),
    );
  }
  figures.push(figure("writes", BYTES_FIGURE, "B", gas.bytes.compact[HEADLINE], { name: `JSON batch of ${HEADLINE}`, value: gas.bytes.json[HEADLINE] }));
  const s = gas.split;
  const round = (v: number) => (Math.round(v * 100) / 100).toString();
  const notes = [
    `writes: claims through the api (rate limits off, local provider) from 1, 16 and 64 clients; writes waiting for the wallet go as one compact batch (group commit). ` +
      `Gas per attestation, every input a real transaction on the stack's chain (EIP-7623 floor applied), claims as the api makes them (sealed box of the values, distinct owners): ` +
      `JSON ${list(gas.json)}; compact ${list(gas.compact)}; EAS ${list(gas.eas)} (schema "${EAS_SCHEMA}", ${gas.easDataBytes} data bytes, its published bytecode).` +
      (gas.easTransactions[128] > 1 ? ` EAS's multiAttest of 128 exceeds the 2^24 gas a transaction may use (EIP-7825): it took ${gas.easTransactions[128]} transactions.` : ""),
    `payload bytes per attestation: JSON ${list(gas.bytes.json)}; compact ${list(gas.bytes.compact)}. ` +
      `A compact batch of ${HEADLINE}, per attestation: header ${round(s.header)}, owner address ${round(s.addresses)}, item kind and length ${round(s.itemHeads)}, schema index ${round(s.schemaIndex)}, owner index ${round(s.owner)}, bucket ${round(s.bucket)}, ` +
      `sealed data ${round(s.sealedData)} (ephemeral key 32, tag 16, values ${round(s.plaintext)}).`,
    `proven claims, batches of ${HEADLINE}, gas (payload bytes) per attestation: ${PROVEN_QUORUMS.map((q) => `quorum ${q}: JSON ${Math.round(gas.proven[q].json)} (${Math.round(gas.proven[q].jsonBytes)} B), compact ${Math.round(gas.proven[q].compact)} (${Math.round(gas.proven[q].compactBytes)} B)`).join("; ")}.`,
    `other encodings of a batch of ${HEADLINE} (gas per claim, eth_estimateGas): ${gas.encodings.map((e) => `${e.name} ${Math.round(e.gasPerItem)} (${Math.round(e.bytesPerItem)} B)`).join("; ")}.`,
  ];
  return { figures, notes };
}
