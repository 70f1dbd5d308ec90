/**
 * What a write costs on the base layer (issue 13): gas per attestation of our inputs (one claim alone, and
 * batches of 8, 32 and 128 claims) beside EAS's `attest` and `multiAttest` of the same sizes, deployed
 * from EAS's published bytecode (@ethereum-attestation-service/eas-contracts) on the same chain in the same
 * run, carrying the same fields (schema, owner, provider, the same sealed bytes, the bucket). And what the
 * payload encoding costs: the same batch of 32 in other encodings, priced by the chain (eth_estimateGas).
 * `gasRows` makes the writes section's gas figures from it, on the whole stack's chain; the claims/s rows
 * of the same section are measured through the api (bench/sections/api.ts).
 */
import easArtifact from "@ethereum-attestation-service/eas-contracts/artifacts/contracts/EAS.sol/EAS.json" with { type: "json" };
import registryArtifact from "@ethereum-attestation-service/eas-contracts/artifacts/contracts/SchemaRegistry.sol/SchemaRegistry.json" with { type: "json" };
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  parseAbiParameters,
  parseEventLogs,
  type Abi,
  type Address,
  type Hex,
} from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { jsonToHex } from "../../common/hex.ts";
import type { InputParams } from "../../common/wire.ts";
import { DEFAULTS } from "../../devnode/config.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import type { TestStack } from "../../test/support/stack.ts";
import { attestationParams, fedOwner } from "../inputs.ts";
import { figure } from "../report.ts";
import type { BenchContext, SectionRows } from "./context.ts";

export const GAS_SIZES = [1, 8, 32, 128] as const;
export type GasSize = (typeof GAS_SIZES)[number];

export interface WriteGas {
  /** Gas per attestation of our input (1: a lone create_attestation; n > 1: a batch of n). */
  ours: Record<GasSize, number>;
  /** Gas per attestation of EAS (1: attest; n > 1: multiAttest of n). */
  eas: Record<GasSize, number>;
  /** Payload bytes per attestation of our inputs and EAS's attestation data bytes. */
  payloadBytes: Record<GasSize, number>;
  easDataBytes: number;
  /** Gas per attestation of a batch of 32 in each encoding the bench prices (see ENCODINGS). */
  encodings: { name: string; bytesPerItem: number; gasPerItem: number }[];
  /** How many transactions EAS needed per size (above 1 when a multiAttest exceeded the per-transaction gas cap). */
  easTransactions: Record<GasSize, number>;
}

const EAS_SCHEMA = "bytes32 schemaId,address owner,string provider,bytes encryptedData,string bucketValues";
const ZERO_UID = `0x${"0".repeat(64)}` as Hex;

/** The claim inputs of the bench, as the api writes them. */
function claimItems(count: number, first: number): { type: "create_attestation"; params: InputParams["create_attestation"] }[] {
  return Array.from({ length: count }, (_, k) => ({ type: "create_attestation" as const, params: attestationParams(first + k, fedOwner(first + k)) }));
}

function ourPayload(count: number, first: number): Hex {
  const items = claimItems(count, first);
  return count === 1 ? jsonToHex(items[0]) : jsonToHex({ type: "batch", params: { items } });
}

/**
 * Encodings of the same batch the bench prices, to see what compaction would buy:
 * - json: what the api sends (DECISIONS.md section 2);
 * - json, base64 sealed data: `encrypted_data` as base64 instead of hex;
 * - abi: every field in binary, `abi.encode` of (bytes32, address, string, bytes, string)[] — the most a
 *   binary format could save.
 */
const ENCODINGS: { name: string; encode(items: ReturnType<typeof claimItems>): Hex }[] = [
  { name: "json (what the api sends)", encode: (items) => jsonToHex({ type: "batch", params: { items } }) },
  {
    name: "json, sealed data as base64",
    encode: (items) =>
      jsonToHex({
        type: "batch",
        params: {
          items: items.map((i) => ({ ...i, params: { ...i.params, encrypted_data: Buffer.from(i.params.encrypted_data.slice(2), "hex").toString("base64") } })),
        },
      }),
  },
  {
    name: "abi-encoded binary",
    encode: (items) =>
      encodeAbiParameters(parseAbiParameters("(bytes32,address,string,bytes,string)[]"), [
        items.map((i) => [i.params.schema_id, i.params.owner, i.params.provider, i.params.encrypted_data, JSON.stringify(i.params.bucket_values)] as const),
      ]),
  },
];

/** The per-transaction gas cap of EIP-7825 (Osaka), enforced by the local chain. */
const TRANSACTION_GAS_CAP = 16_777_216n;

/**
 * Measures on the chain at `rpcUrl` (hardhat, its accounts unlocked): our inputs go from account #1 to the
 * application (its dapp judges them as any sender's: the gas is the chain's part only); EAS runs from #2.
 */
export async function measureWriteGas(rpcUrl: string, inputBox: Address, dapp: Address): Promise<WriteGas> {
  const chain = { ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } };
  const transport = http(rpcUrl, { retryCount: 0, timeout: 120_000 });
  const reader = createPublicClient({ chain, transport });
  const ours = createWalletClient({ chain, transport, account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 1 }) });
  const attester = createWalletClient({ chain, transport, account: mnemonicToAccount(DEFAULTS.mnemonic, { addressIndex: 2 }) });
  const gasOf = async (hash: Hex) => {
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`write cost: transaction ${hash} reverted`);
    return receipt.gasUsed;
  };

  // ---- ours: one input per size; the first one warms the dapp's input array (its length slot) ----
  const oursPerItem = {} as Record<GasSize, number>;
  const payloadBytes = {} as Record<GasSize, number>;
  await gasOf(await ours.writeContract({ address: inputBox, abi: inputBoxAbi, functionName: "addInput", args: [dapp, ourPayload(1, 9_000_000)] }));
  let first = 9_000_001;
  for (const size of GAS_SIZES) {
    const payload = ourPayload(size, first);
    first += size;
    const gas = await gasOf(await ours.writeContract({ address: inputBox, abi: inputBoxAbi, functionName: "addInput", args: [dapp, payload] }));
    oursPerItem[size] = Number(gas) / size;
    payloadBytes[size] = (payload.length - 2) / 2 / size;
  }

  // ---- EAS: SchemaRegistry, then EAS pointing at it, then its schema ----
  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]) => {
    const hash = await attester.deployContract({ abi, bytecode, args });
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error("write cost: deployment made no contract");
    return receipt.contractAddress;
  };
  const registryAbi = registryArtifact.abi as Abi;
  const easAbi = easArtifact.abi as Abi;
  const registry = await deploy(registryAbi, registryArtifact.bytecode as Hex, []);
  const eas = await deploy(easAbi, easArtifact.bytecode as Hex, [registry]);
  const registered = await reader.waitForTransactionReceipt({
    hash: await attester.writeContract({ address: registry, abi: registryAbi, functionName: "register", args: [EAS_SCHEMA, "0x0000000000000000000000000000000000000000", true] }),
  });
  const [schemaEvent] = parseEventLogs({ abi: registryAbi, logs: registered.logs, eventName: "Registered" }) as unknown as { args: { uid: Hex } }[];
  if (schemaEvent === undefined) throw new Error("write cost: EAS registered no schema");
  const schemaUid = schemaEvent.args.uid;
  const request = (i: number) => {
    const p = attestationParams(i, fedOwner(i));
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
    let gas = 0n;
    if (size === 1) {
      gas = await gasOf(await attester.writeContract({ address: eas, abi: easAbi, functionName: "attest", args: [{ schema: schemaUid, data: request(at) }] }));
      easChunks[size] = 1;
    } else {
      // One multiAttest when it fits a transaction; a chain with a per-transaction gas cap (EIP-7825, 2^24,
      // which hardhat enforces) takes a large one in halves, and the row says in how many transactions.
      const call = (first: number, count: number) =>
        ({ address: eas, abi: easAbi, functionName: "multiAttest", args: [[{ schema: schemaUid, data: Array.from({ length: count }, (_, k) => request(first + k)) }]] }) as const;
      let chunk: number = size;
      while (chunk > 1) {
        const needed = await reader.estimateContractGas({ ...call(at, chunk), account: attester.account }).catch(() => undefined);
        if (needed !== undefined && needed <= TRANSACTION_GAS_CAP) break;
        chunk /= 2;
      }
      for (let done = 0; done < size; done += chunk) gas += await gasOf(await attester.writeContract(call(at + done, chunk)));
      easChunks[size] = size / chunk;
    }
    at += size;
    easPerItem[size] = Number(gas) / size;
  }

  // ---- encodings of a batch of 32, priced by the chain ----
  const items = claimItems(32, 8_000_000);
  const encodings = [];
  for (const encoding of ENCODINGS) {
    const payload = encoding.encode(items);
    const gas = await reader.estimateGas({
      account: ours.account,
      to: inputBox,
      data: encodeFunctionData({ abi: inputBoxAbi, functionName: "addInput", args: [dapp, payload] }),
    });
    encodings.push({ name: encoding.name, bytesPerItem: (payload.length - 2) / 2 / 32, gasPerItem: Number(gas) / 32 });
  }

  return {
    ours: oursPerItem,
    eas: easPerItem,
    payloadBytes,
    easDataBytes,
    encodings,
    easTransactions: easChunks,
  };
}

/** The figure's name for gas per attestation at size `n` (bench/run.ts expects one per GAS_SIZES). */
export function gasFigureName(n: GasSize): string {
  return n === 1 ? "gas per attestation, one claim" : `gas per attestation, batch of ${n}`;
}

/** What a write costs on chain, beside EAS on the same chain: the gas figures and their notes. */
export async function gasRows(ctx: BenchContext, stack: TestStack): Promise<SectionRows> {
  const figures: SectionRows["figures"] = [];
  const gas = await measureWriteGas(stack.urls.rpc, stack.addresses.inputBox, stack.addresses.dapp);
  ctx.log(`gas per attestation: ours ${GAS_SIZES.map((n) => `${n}: ${Math.round(gas.ours[n])}`).join(", ")}; EAS ${GAS_SIZES.map((n) => `${n}: ${Math.round(gas.eas[n])}`).join(", ")}`);
  for (const n of GAS_SIZES) {
    const name = gasFigureName(n);
    const easName = n === 1 ? "EAS attest" : `EAS multiAttest of ${n}${gas.easTransactions[n] > 1 ? ` (${gas.easTransactions[n]} transactions)` : ""}`;
    figures.push(
      n === 32
        ? figure("writes", name, "gas", gas.ours[n], { name: "EAS attest", value: gas.eas[1] }, {
            alt: { name: easName, value: gas.eas[n] },
            target: { text: "<= 1/20 of EAS attest", met: (_v: number, r: number) => r <= 1 / 20 },
          })
        : figure("writes", name, "gas", gas.ours[n], { name: easName, value: gas.eas[n] }),
    );
  }
  const notes = [
    `writes: claims through the api (rate limits off, local provider) from 1, 16 and 64 clients; writes waiting for the wallet go as one batch input (group commit). ` +
      `Gas: our inputs carry ${Math.round(gas.payloadBytes[32])} payload bytes per claim; EAS's attestations carry the same fields ABI-encoded (${gas.easDataBytes} data bytes), schema "${EAS_SCHEMA}", from its published bytecode.` +
      (gas.easTransactions[128] > 1 ? ` EAS's multiAttest of 128 exceeds the 2^24 gas a transaction may use (EIP-7825): it took ${gas.easTransactions[128]} transactions.` : ""),
    `payload encodings of a batch of 32 (gas per claim, eth_estimateGas): ${gas.encodings.map((e) => `${e.name} ${Math.round(e.gasPerItem)} (${Math.round(e.bytesPerItem)} B)`).join("; ")}.`,
  ];
  return { figures, notes };
}
