/**
 * What a receipt adds to a write (issue 41, docs/receipts.md): signing one (common/receipt.ts: the EIP-712
 * digest hashed with the domain's separator kept, then one secp256k1 signature) for 2,000 attestations of
 * their own, against viem's generic signTypedData of the same receipt in the same run (the floor), p50 and
 * p99. The write's answer also reads the attestation back from the rollup to sign what it holds: that read
 * is an inspect like any other (the inspect section measures those).
 */
import { keccak256, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { RECEIPT_TYPES, receiptDomain, receiptMessage, signReceipt, type ReceiptSource } from "../../common/receipt.ts";
import { figure } from "../report.ts";
import { percentile } from "../stats.ts";
import type { SectionRows } from "./context.ts";

const COUNT = 2_000;
/** Rounds before the measured ones: the JIT warms up on them. */
const WARM = 200;
export const RECEIPT_SIGN_FIGURE = "receipt signed p50";

function sourceOf(k: number): ReceiptSource {
  return {
    claimId: keccak256(toHex(`bench receipt ${k}`)),
    owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    provider: "http",
    schema_id: keccak256(toHex("bench schema")),
    bucket_values: { "data.balance": "mid" },
    attester: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    timestamp: 1_795_801_512 + k,
    expires_at: null,
    freshness_half_life: 86_400,
    attestors: [],
  };
}

async function timed(run: (k: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < WARM + COUNT; k++) {
    const started = performance.now();
    await run(k);
    if (k >= WARM) times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

export async function receiptRows(): Promise<SectionRows> {
  const key: Hex = generatePrivateKey();
  const where = { chainId: 31337, registry: "0x850EC3780CeDfdb116E38B009d0bf7a1ef1b8b38" as const };
  const account = privateKeyToAccount(key);
  const generic = await timed((k) => {
    const message = receiptMessage(sourceOf(k));
    return account.signTypedData({ domain: receiptDomain(where), types: RECEIPT_TYPES, primaryType: "Attest", message: { ...message, time: BigInt(message.time), expirationTime: BigInt(message.expirationTime) } });
  });
  const ours = await timed((k) => signReceipt(sourceOf(k), key, where));
  const floor = { name: "viem's signTypedData, same receipt", value: percentile(generic, 50) };
  return {
    figures: [figure("api", RECEIPT_SIGN_FIGURE, "ms", percentile(ours, 50), floor, { target: { text: "< 1 ms", met: (v) => v < 1 } })],
    notes: [`receipt signed p99 ${percentile(ours, 99).toFixed(3)} ms (viem's signTypedData ${percentile(generic, 99).toFixed(3)} ms), ${COUNT} receipts after ${WARM} to warm up`],
  };
}
