/**
 * Receipts (common/receipt.ts) judged by EAS's own SDK: eas-sdk's `Offchain.verifyOffchainAttestationSignature`
 * (version 2 of its types) accepts what we sign, through a JSON round trip as a client receives it, and
 * refuses it with a field changed, another signer or another domain; our own check says why in each case,
 * and names the fields a proven notice contradicts.
 */
import { decodeAbiParameters, keccak256, parseAbiParameters, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { DATA_SCHEMA, receiptMismatches, receiptSignatureProblem, signReceipt, type Receipt, type ReceiptSource } from "../../common/receipt.ts";
import { sdk, type SdkSignedOffchain } from "../support/eas-sdk.ts";

const key = generatePrivateKey();
const signer = privateKeyToAccount(key).address;
const where = { chainId: 31337, registry: "0x850EC3780CeDfdb116E38B009d0bf7a1ef1b8b38" as const };
const source: ReceiptSource = {
  claimId: keccak256(toHex("an attestation")),
  owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  provider: "http",
  schema_id: keccak256(toHex("a schema")),
  bucket_values: { "data.balance": "mid" },
  attester: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  timestamp: 1_795_801_512,
  expires_at: 1_795_801_512 + 3600,
  freshness_half_life: 86_400,
  attestors: ["0x9473c239a5e74c689a41c70c1f08ae553f453f48"],
};

/** The receipt as a client holds it: parsed from the api's JSON. */
const asReceived = (receipt: Receipt): SdkSignedOffchain => JSON.parse(JSON.stringify(receipt)) as SdkSignedOffchain;
const easVerifies = (receipt: Receipt | SdkSignedOffchain, attester: string = signer, domain = where): boolean =>
  new sdk.Offchain({ address: domain.registry, version: "1.3.0", chainId: BigInt(domain.chainId) }, 2).verifyOffchainAttestationSignature(attester, asReceived(receipt as Receipt));

describe("receipts: EAS off-chain attestations (version 2) of the rollup's attestations", () => {
  it("eas-sdk verifies one against the signer; its fields are the registry's; asked twice, it is the same bytes", async () => {
    const receipt = await signReceipt(source, key, where);
    expect(easVerifies(receipt)).toBe(true);
    expect(await receiptSignatureProblem(asReceived(receipt) as unknown as Receipt, signer, where)).toBeUndefined();
    expect(receipt.message).toMatchObject({ version: 2, schema: source.schema_id, recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", time: source.timestamp, expirationTime: source.timestamp + 3600, revocable: true, refUID: source.claimId });
    expect(decodeAbiParameters(parseAbiParameters(DATA_SCHEMA), receipt.message.data)).toEqual(["http", "data.balance", "mid", "0x9473C239A5E74c689a41C70C1f08AE553F453f48", 86_400n, ["0x9473C239A5E74c689a41C70C1f08AE553F453f48"]]);
    expect(JSON.stringify(await signReceipt(source, key, where))).toBe(JSON.stringify(receipt));
    // Never expiring: expirationTime 0, as EAS says it.
    expect((await signReceipt({ ...source, expires_at: null }, key, where)).message.expirationTime).toBe(0);
  });

  it("a changed field, another signer or another domain: eas-sdk refuses it, and our check says why", async () => {
    const receipt = await signReceipt(source, key, where);
    const changed = asReceived(receipt);
    changed.message = { ...changed.message, data: (await signReceipt({ ...source, bucket_values: { "data.balance": "high" } }, key, where)).message.data };
    expect(easVerifies(changed as unknown as Receipt)).toBe(false);
    expect(await receiptSignatureProblem(changed as unknown as Receipt, signer, where)).toMatch(/^its uid 0x[0-9a-f]{64} is not the uid of its fields .*: a field was changed$/);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    expect(easVerifies(receipt, stranger)).toBe(false);
    expect(await receiptSignatureProblem(receipt, stranger, where)).toBe(`it is signed by ${signer}, not by the operator's receipt signer ${stranger}`);
    const elsewhere = { chainId: 1, registry: where.registry };
    expect(() => easVerifies(receipt, signer, elsewhere)).toThrow();
    expect(await receiptSignatureProblem(receipt, signer, elsewhere)).toMatch(/^its domain names EAS Attestation on chain 31337 at 0x850EC3780CeDfdb116E38B009d0bf7a1ef1b8b38, not EAS Attestation on chain 1 at/);
  });

  it("names each field a proven notice contradicts", async () => {
    const receipt = await signReceipt(source, key, where);
    expect(receiptMismatches(receipt, source)).toEqual([]);
    const fields = receiptMismatches(receipt, { ...source, bucket_values: { "data.balance": "high" }, timestamp: source.timestamp + 1 }).map((m) => m.field);
    expect(fields).toEqual(["time", "data"]);
  });

  it("an attestation of two bucketed fields has none: the registry's data holds one", async () => {
    await expect(signReceipt({ ...source, bucket_values: { a: "x", b: "y" } }, key, where)).rejects.toThrow(/2 bucketed fields has no receipt/);
  });
});
