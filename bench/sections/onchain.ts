/**
 * What it costs to make the rollup's attestations readable on chain (issue 44), on a stack of its own (chain,
 * devnode, dapp bundle, the registry and the gate it deploys), beside EAS deployed from its published
 * bytecode on the same chain in the same run:
 * - recording: inputs of 1, 8, 32 and 128 attestations (a JSON `batch`, a lone input for 1; every one for an
 *   owner of its own, as the api makes them), their epoch closed, each input's batch notice recorded with its
 *   one proof (`record`): both faces at once, the gate being the registry's other face; against EAS's
 *   `attest` and `multiAttest` of the same data (the registry's DATA_SCHEMA with the same values);
 * - revoking: the same attestations revoked by inputs of as many items, recorded the same way; against
 *   EAS's `revoke` and `multiRevoke` of the attestations it made;
 * - the stateless check (`checkAttestation`: a batch notice, its proof and the attestation's place);
 * - what a consumer contract pays to call `isAttestationValid` and `getAttestation`, ours and EAS's
 *   (contracts/GasProbe.sol measures the call from inside a contract), and ours alone (EAS has no such
 *   call) `isUniquePerAccount` and `isAttestationValidUnique` (issue 52).
 * The record of a batch of 32 is split into the transaction's base, its calldata, the proof check
 * (validateNotice / validateOutput alone, measured the same way), the events, and the rest: storage and logic.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  hexToBytes,
  http,
  parseAbiParameters,
  zeroAddress,
  type Abi,
  type AbiFunction,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { hardhatAccount } from "../../devnode/hardhat-keys.ts";
import { hardhat } from "viem/chains";
import { inputIdOf, itemIdOf } from "../../common/ids.ts";
import { compiledContract } from "../../contracts/compile.ts";
import { closeEpoch, provenBatches, registryAbi, type ProvenBatch } from "../../test/support/batch.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { benchClaims } from "../claim-writes.ts";
import { deployEas, ZERO_UID } from "../eas.ts";
import { BENCH_SCHEMA, bucketLabel, fedOwner } from "../inputs.ts";
import { figure } from "../report.ts";
import type { BenchContext, SectionRows } from "./context.ts";

export const ONCHAIN_BATCHES = [1, 8, 32, 128] as const;
type OnchainBatch = (typeof ONCHAIN_BATCHES)[number];
const HEADLINE = 32;
const FIELD = "data.balance";

export const recordFigure = (n: OnchainBatch): string => `on chain: record gas per attestation, batch of ${n}`;
export const revokeFigure = (n: OnchainBatch): string => `on chain: revoke gas per revocation, batch of ${n}`;
export const STATELESS_FIGURE = "on chain: stateless check gas (in a consumer)";
export const VALID_FIGURE = "on chain: a consumer's isAttestationValid gas";
export const GET_FIGURE = "on chain: a consumer's getAttestation gas";
export const UNIQUE_FIGURE = "on chain: a consumer's isUniquePerAccount gas";
export const VALID_UNIQUE_FIGURE = "on chain: a consumer's isAttestationValidUnique gas";

export function onchainFigureNames(): string[] {
  return [...ONCHAIN_BATCHES.map(recordFigure), ...ONCHAIN_BATCHES.map(revokeFigure), STATELESS_FIGURE, VALID_FIGURE, GET_FIGURE, UNIQUE_FIGURE, VALID_UNIQUE_FIGURE];
}

/** Gas of a transaction's calldata as the chain charges it (EIP-2028: 4 a zero byte, 16 any other). */
function calldataGas(data: Hex): number {
  return hexToBytes(data).reduce((sum, byte) => sum + (byte === 0 ? 4 : 16), 0);
}

/** Gas of a receipt's logs (LOG0..LOG4: 375, 375 a topic, 8 a data byte). */
function eventGas(receipt: TransactionReceipt): number {
  return receipt.logs.reduce((sum, log) => sum + 375 + 375 * log.topics.length + 8 * hexToBytes(log.data).length, 0);
}

interface Split {
  base: number;
  calldata: number;
  proof: number;
  events: number;
  storage: number;
}

/**
 * The on-chain rows, on `shared` (a stack of the same Rollups version with the registry, whose other users
 * are done; the caller stops it) or else on a stack of its own.
 */
export async function onchainRows(ctx: BenchContext, rollups: "v1" | "v2", shared?: TestStack): Promise<SectionRows> {
  const { log } = ctx;
  let stack: TestStack | undefined;
  try {
    stack = shared ?? (await startStack({ rollups, dataDir: mkdtempSync(join(ctx.work, `onchain-${rollups}-`)), dappCommand: ctx.bundle.command, readyTimeoutMs: 120_000 }));
    const s = stack;
    const contracts = s.contracts;
    if (contracts === undefined) throw new Error("on-chain bench: the stack deployed no registry");
    const chain = { ...hardhat, rpcUrls: { default: { http: [s.urls.rpc] } } };
    const transport = http(s.urls.rpc, { timeout: 120_000 });
    const reader = createPublicClient({ chain, transport });
    const wallet = (index: number) => createWalletClient({ chain, transport, account: hardhatAccount(index) });
    const recorder = wallet(3);
    const abi = registryAbi(rollups);
    const mined = async (hash: Hex): Promise<TransactionReceipt> => {
      const receipt = await reader.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`on-chain bench: transaction ${hash} reverted`);
      return receipt;
    };
    const probe = compiledContract("GasProbe");
    const probeAddress = (await mined(await recorder.deployContract({ abi: probe.abi, bytecode: probe.bytecode }))).contractAddress as Address;
    /** What a consumer contract pays to make this call. */
    const consumerCost = async (target: Address, data: Hex): Promise<number> => {
      const [used, ok] = (await reader.readContract({ address: probeAddress, abi: probe.abi, functionName: "cost", args: [target, data] })) as [bigint, boolean];
      if (!ok) throw new Error(`on-chain bench: the probed call to ${target} reverted`);
      return Number(used);
    };

    const accepted = async (input: unknown): Promise<number> => {
      const verdict = await s.send(input);
      if (verdict.status !== "ACCEPTED") throw new Error(`on-chain bench: input refused: ${verdict.status}`);
      return verdict.index;
    };
    await accepted({ type: "register_schema", params: BENCH_SCHEMA });

    // ---- recording: one input per size, every attestation for an owner of its own ----
    // First, an input with one attestation of each bucket: what is stored once per schema, label, attester
    // and kind is paid here (as EAS's schema registration is not counted either), so each size shows what
    // an attestation costs from then on.
    let first = 0;
    const warmUp = await accepted({ type: "batch", params: { items: benchClaims(3, first) } });
    first += 3;
    const made = new Map<OnchainBatch, { input: number; uids: Hex[] }>();
    for (const n of ONCHAIN_BATCHES) {
      const items = benchClaims(n, first);
      first += n;
      const input = await accepted(n === 1 ? items[0] : { type: "batch", params: { items } });
      made.set(n, { input, uids: n === 1 ? [inputIdOf("create_attestation", input)] : items.map((_, k) => itemIdOf("create_attestation", input, k)) });
    }
    await closeEpoch(s);
    const created = await provenBatches(s, ONCHAIN_BATCHES.map((n) => (made.get(n) as { input: number }).input));
    const record = async (batch: ProvenBatch) => mined(await recorder.writeContract({ address: contracts.registry, abi, functionName: "record", args: [batch.notice, batch.proof], chain: null }));
    const [warmed] = await provenBatches(s, [warmUp]);
    const firstSeen = Number((await record(warmed as ProvenBatch)).gasUsed);
    const ours = {} as Record<OnchainBatch, number>;
    let split: Split | undefined;
    for (const [k, n] of ONCHAIN_BATCHES.entries()) {
      const batch = created[k] as ProvenBatch;
      const receipt = await record(batch);
      ours[n] = Number(receipt.gasUsed) / n;
      if (n === HEADLINE) split = await splitOf(receipt, batch);
    }
    log(`on chain (${rollups}): record gas per attestation ${ONCHAIN_BATCHES.map((n) => `${n}: ${Math.round(ours[n])}`).join(", ")}`);

    // ---- the stateless check and a consumer's reads, on an attestation of the batch of 32 ----
    const headline = created[ONCHAIN_BATCHES.indexOf(HEADLINE)] as ProvenBatch;
    const uid = (made.get(HEADLINE) as { uids: Hex[] }).uids[0] as Hex;
    const stateless = await consumerCost(contracts.registry, encodeFunctionData({ abi, functionName: "checkAttestation", args: [headline.notice, headline.proof, 0n] }));
    const statelessTx = Number(await reader.estimateContractGas({ address: contracts.registry, abi, functionName: "checkAttestation", args: [headline.notice, headline.proof, 0n], account: recorder.account }));
    const ourValid = await consumerCost(contracts.registry, encodeFunctionData({ abi, functionName: "isAttestationValid", args: [uid] }));
    const ourGet = await consumerCost(contracts.registry, encodeFunctionData({ abi, functionName: "getAttestation", args: [uid] }));
    // The bench's schema is not unique per account: the answer is false, but both calls read the same two
    // words (the attestation's and its kind's) for either answer.
    const ourUnique = await consumerCost(contracts.registry, encodeFunctionData({ abi, functionName: "isUniquePerAccount", args: [uid] }));
    const ourValidUnique = await consumerCost(contracts.registry, encodeFunctionData({ abi, functionName: "isAttestationValidUnique", args: [uid] }));

    // ---- revoking: each size's attestations, by an input of as many items ----
    const revokeInputs: number[] = [];
    for (const n of ONCHAIN_BATCHES) {
      const items = (made.get(n) as { uids: Hex[] }).uids.map((id) => ({ type: "revoke_attestation", params: { attestation_id: id } }));
      revokeInputs.push(await accepted(n === 1 ? items[0] : { type: "batch", params: { items } }));
    }
    await closeEpoch(s);
    const revoked = await provenBatches(s, revokeInputs);
    const ourRevoke = {} as Record<OnchainBatch, number>;
    for (const [k, n] of ONCHAIN_BATCHES.entries()) ourRevoke[n] = Number((await record(revoked[k] as ProvenBatch)).gasUsed) / n;
    log(`on chain (${rollups}): revoke gas per revocation ${ONCHAIN_BATCHES.map((n) => `${n}: ${Math.round(ourRevoke[n])}`).join(", ")}`);

    // ---- EAS on the same chain, the same data ----
    const easWallet = wallet(4);
    const dataSchema = String(await reader.readContract({ address: contracts.registry, abi, functionName: "DATA_SCHEMA" }));
    const eas = await deployEas(reader, easWallet, dataSchema);
    const request = (i: number) => ({
      recipient: fedOwner(10 * (1_000_000 + i)),
      expirationTime: 0n,
      revocable: true,
      refUID: ZERO_UID,
      data: encodeAbiParameters(parseAbiParameters(dataSchema), [BENCH_SCHEMA.provider, FIELD, bucketLabel(i), zeroAddress, BigInt(BENCH_SCHEMA.freshnessHalfLife), []]),
      value: 0n,
    });
    const easAttest = {} as Record<OnchainBatch, number>;
    const easRevoke = {} as Record<OnchainBatch, number>;
    const easTxs = {} as Record<OnchainBatch, number>;
    const easUids = new Map<OnchainBatch, Hex[]>();
    let easFirst = 0;
    for (const n of ONCHAIN_BATCHES) {
      const result = await eas.gasPerAttestation(n, request, easFirst);
      easFirst += n;
      easAttest[n] = result.gas;
      easTxs[n] = result.transactions;
      easUids.set(n, result.uids);
    }
    const easUid = (easUids.get(HEADLINE) as Hex[])[0] as Hex;
    const easAbi = (await import("@ethereum-attestation-service/eas-contracts/artifacts/contracts/EAS.sol/EAS.json", { with: { type: "json" } })).default.abi as Abi;
    const easValid = await consumerCost(eas.eas, encodeFunctionData({ abi: easAbi, functionName: "isAttestationValid", args: [easUid] }));
    const easGet = await consumerCost(eas.eas, encodeFunctionData({ abi: easAbi, functionName: "getAttestation", args: [easUid] }));
    for (const n of ONCHAIN_BATCHES) easRevoke[n] = (await eas.gasPerRevocation(easUids.get(n) as Hex[])).gas;
    log(`on chain (${rollups}): EAS attest ${ONCHAIN_BATCHES.map((n) => `${n}: ${Math.round(easAttest[n])}`).join(", ")}; revoke ${ONCHAIN_BATCHES.map((n) => `${n}: ${Math.round(easRevoke[n])}`).join(", ")}`);

    const easName = (what: "attest" | "revoke", n: OnchainBatch) => (n === 1 ? `EAS ${what}` : `EAS multi${what === "attest" ? "Attest" : "Revoke"} of ${n}${what === "attest" && easTxs[n] > 1 ? ` (${easTxs[n]} transactions)` : ""}`);
    const figures: SectionRows["figures"] = [];
    for (const n of ONCHAIN_BATCHES) {
      const floor = { name: "EAS attest, same data", value: easAttest[1] };
      const extra = { alt: { name: easName("attest", n), value: easAttest[n] } };
      figures.push(
        n === HEADLINE
          ? figure("onchain", recordFigure(n), "gas", ours[n], floor, { ...extra, target: { text: "<= 1/8 of EAS attest", met: (_v, r) => r <= 1 / 8 } })
          : figure("onchain", recordFigure(n), "gas", ours[n], floor, n === 1 ? {} : extra),
      );
    }
    for (const n of ONCHAIN_BATCHES) {
      const floor = { name: "EAS revoke", value: easRevoke[1] };
      const extra = { alt: { name: easName("revoke", n), value: easRevoke[n] } };
      figures.push(
        n === HEADLINE
          ? figure("onchain", revokeFigure(n), "gas", ourRevoke[n], floor, { ...extra, target: { text: "<= 1/5 of EAS revoke", met: (_v, r) => r <= 1 / 5 } })
          : figure("onchain", revokeFigure(n), "gas", ourRevoke[n], floor, n === 1 ? {} : extra),
      );
    }
    figures.push(
      figure("onchain", STATELESS_FIGURE, "gas", stateless, { name: "EAS attest, same data", value: easAttest[1] }, { alt: { name: "EAS isAttestationValid in a consumer", value: easValid } }),
      figure("onchain", VALID_FIGURE, "gas", ourValid, { name: "EAS's isAttestationValid", value: easValid }, { target: { text: "<= EAS's", met: (_v, r) => r <= 1 } }),
      figure("onchain", GET_FIGURE, "gas", ourGet, { name: "EAS's getAttestation", value: easGet }),
      figure("onchain", UNIQUE_FIGURE, "gas", ourUnique, { name: "EAS's isAttestationValid", value: easValid }),
      figure("onchain", VALID_UNIQUE_FIGURE, "gas", ourValidUnique, { name: "EAS's isAttestationValid", value: easValid }),
    );
    const sp = split as Split;
    const per = (v: number) => Math.round(v / HEADLINE).toLocaleString("en-US");
    const notes = [
      `on chain (Rollups ${rollups}): a stack of its own; first an input of 3 attestations, one per bucket, recorded for ${firstSeen.toLocaleString("en-US")} gas (the schema, its labels, the attester and the kinds, stored once when first seen); then inputs of 1, 8, 32 and 128 create_attestation items (a lone input for 1, a JSON batch otherwise), each attestation for an owner of its own, ` +
        `their epoch closed, each input's batch notice recorded by one record(notice, proof) transaction: the registry's and the gate's faces at once (the gate is a face of the same store). ` +
        `EAS: attest / multiAttest of the registry's DATA_SCHEMA with the same values from its published bytecode on the same chain, in the same run; EAS attest ${Math.round(easAttest[1]).toLocaleString("en-US")}, ` +
        `multiAttest ${ONCHAIN_BATCHES.slice(1).map((n) => `${n}: ${Math.round(easAttest[n]).toLocaleString("en-US")}`).join(", ")}; revoke ${Math.round(easRevoke[1]).toLocaleString("en-US")}, multiRevoke ${ONCHAIN_BATCHES.slice(1).map((n) => `${n}: ${Math.round(easRevoke[n]).toLocaleString("en-US")}`).join(", ")}.`,
      `record of a batch of ${HEADLINE}, per attestation: transaction base ${per(sp.base)}, calldata ${per(sp.calldata)}, proof check ${per(sp.proof)}, events ${per(sp.events)}, storage and logic ${per(sp.storage)} ` +
        `(the proof check is validate${rollups === "v2" ? "Output" : "Notice"} alone from inside a contract; storage and logic is the rest: two new words an attestation, its record and its owner's newest).`,
      `stateless check: checkAttestation(notice, proof, 0) of the batch of ${HEADLINE} costs ${stateless.toLocaleString("en-US")} gas from inside a consumer, ${statelessTx.toLocaleString("en-US")} as a transaction of its own (calldata included); ` +
        `revocation is not in the notice: it answers from the revocations recorded in the registry. A consumer's isAttestationValid: ours ${ourValid.toLocaleString("en-US")}, EAS's ${easValid.toLocaleString("en-US")} ` +
        `(ours also checks revocation and expiry, in the one word of an attestation whose schema never expires); getAttestation: ours ${ourGet.toLocaleString("en-US")}, EAS's ${easGet.toLocaleString("en-US")}; ` +
        `isUniquePerAccount ${ourUnique.toLocaleString("en-US")} and isAttestationValidUnique ${ourValidUnique.toLocaleString("en-US")} (the attestation's word and its kind's; EAS has neither).`,
    ];
    return { figures, notes };

    async function splitOf(receipt: TransactionReceipt, batch: ProvenBatch): Promise<Split> {
      const tx = await reader.getTransaction({ hash: receipt.transactionHash });
      const recordItem = abi.find((item): item is AbiFunction => item.type === "function" && item.name === "record") as AbiFunction;
      // The proof check alone: the application's own function, with the inputs the registry passes it.
      const [noticeParam, proofParam] = recordItem.inputs;
      const application = (await reader.readContract({ address: contracts!.registry, abi, functionName: "application" })) as Address;
      const check: AbiFunction =
        rollups === "v2"
          ? { type: "function", name: "validateOutput", stateMutability: "view", inputs: [{ ...noticeParam!, name: "output" }, proofParam!], outputs: [] }
          : { type: "function", name: "validateNotice", stateMutability: "view", inputs: [noticeParam!, proofParam!], outputs: [{ type: "bool", name: "" }] };
      const payload = rollups === "v2" ? encodeFunctionData({ abi: [{ type: "function", name: "Notice", stateMutability: "nonpayable", inputs: [{ type: "bytes", name: "payload" }], outputs: [] }], functionName: "Notice", args: [batch.notice] }) : batch.notice;
      const proof = await consumerCost(application, encodeFunctionData({ abi: [check], functionName: check.name, args: [payload, batch.proof] }));
      const base = 21_000;
      const calldata = calldataGas(tx.input);
      const events = eventGas(receipt);
      return { base, calldata, proof, events, storage: Number(receipt.gasUsed) - base - calldata - proof - events };
    }
  } finally {
    if (shared === undefined) await stack?.stop();
  }
}
