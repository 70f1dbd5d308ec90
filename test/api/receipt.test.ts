/**
 * Receipts (common/receipt.ts) judged by EAS's own SDK: eas-sdk's `Offchain.verifyOffchainAttestationSignature`
 * (version 2 of its types) accepts what we sign, through a JSON round trip as a client receives it, and
 * refuses it with a field changed, another signer or another domain; our own check says why in each case,
 * and names the fields a proven notice contradicts.
 */
import { decodeAbiParameters, keccak256, parseAbiParameters, toHex, zeroAddress, zeroHash, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  DATA_SCHEMA,
  isRevocationReceipt,
  receiptMessage,
  receiptMismatches,
  receiptSignatureProblem,
  REVOCATION_DATA_SCHEMA,
  REVOCATION_SCHEMA_UID,
  signReceipt,
  signRevocationReceipt,
  type Receipt,
  type ReceiptSource,
  type RevocationSource,
} from "../../common/receipt.ts";
import { judgeReceipt, type ProvenNotice, type ReceiptEvidence } from "../../common/receipt-verdict.ts";
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
    expect(receiptMismatches(receipt, receiptMessage(source))).toEqual([]);
    const fields = receiptMismatches(receipt, receiptMessage({ ...source, bucket_values: { "data.balance": "high" }, timestamp: source.timestamp + 1 })).map((m) => m.field);
    expect(fields).toEqual(["time", "data"]);
  });

  it("an attestation of two bucketed fields has none: the registry's data holds one", async () => {
    await expect(signReceipt({ ...source, bucket_values: { a: "x", b: "y" } }, key, where)).rejects.toThrow(/2 bucketed fields has no receipt/);
  });
});

const revocation: RevocationSource = {
  claimId: source.claimId,
  owner: source.owner,
  schema_id: source.schema_id,
  revoker: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  revoked_at: source.timestamp + 60,
  reason: "moved banks",
  superseded_by: null,
};

describe("revocation receipts: the same signer's off-chain attestation that the attestation's receipt is revoked", () => {
  it("eas-sdk verifies it; its schema is EAS's uid of its data's layout, and its data names the revoked receipt", async () => {
    const receipt = await signReceipt(source, key, where);
    const revoked = await signRevocationReceipt(source, revocation, key, where);
    expect(easVerifies(revoked)).toBe(true);
    expect(isRevocationReceipt(revoked)).toBe(true);
    expect(isRevocationReceipt(receipt)).toBe(false);
    expect(REVOCATION_SCHEMA_UID).toBe(sdk.SchemaRegistry.getSchemaUID(REVOCATION_DATA_SCHEMA, zeroAddress, false));
    expect(revoked.message).toMatchObject({ schema: REVOCATION_SCHEMA_UID, recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", time: revocation.revoked_at, expirationTime: 0, revocable: false, refUID: source.claimId });
    const decoded = new sdk.SchemaEncoder(REVOCATION_DATA_SCHEMA).decodeData(revoked.message.data);
    expect(Object.fromEntries(decoded.map((d) => [d.name, d.value.value]))).toEqual({
      receipt: receipt.uid,
      schemaId: source.schema_id,
      revoker: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      reason: "moved banks",
      supersededBy: zeroHash,
    });
    expect(revoked.uid).not.toBe(receipt.uid);
    expect(JSON.stringify(await signRevocationReceipt(source, revocation, key, where))).toBe(JSON.stringify(revoked));
  });
});

describe("the verdict on a receipt (common/receipt-verdict.ts), from the proven notices", () => {
  const proven = <T>(data: T): ProvenNotice<T> => ({ kind: "proven", data, where: "CartesiDApp 0x… on the test chain" });
  const evidence = (over: Partial<ReceiptEvidence> = {}): ReceiptEvidence => ({
    published: { signer: signer.toLowerCase() as Address, domain: where },
    attestationNotice: async () => proven(source),
    revocationNotice: async () => ({ kind: "absent", message: "the api answers NOT_REVOKED" }),
    revokedAt: async () => null,
    ...over,
  });
  const judge = async (receipt: Receipt, over: Partial<ReceiptEvidence> = {}, by: Address = signer) => judgeReceipt(by, receipt, evidence(over));

  it("VALID, REVOKED, SIGNED and MISMATCH for an attestation's receipt", async () => {
    const receipt = await signReceipt(source, key, where);
    expect(await judge(receipt)).toMatchObject({ verdict: "VALID", kind: "attestation", claimId: source.claimId, mismatches: [] });
    expect(await judge(receipt, { revokedAt: async () => revocation.revoked_at })).toMatchObject({ verdict: "REVOKED", revokedAt: revocation.revoked_at });
    expect(await judge(receipt, { attestationNotice: async () => ({ kind: "not-yet", message: "epoch 3 is open" }) })).toMatchObject({ verdict: "SIGNED", reason: expect.stringMatching(/not yet provable: epoch 3 is open$/) });
    const rebucketed = await judge(receipt, { attestationNotice: async () => proven({ ...source, bucket_values: { "data.balance": "high" } }) });
    expect(rebucketed).toMatchObject({ verdict: "MISMATCH", mismatches: [{ field: "data" }] });
    expect(await judge(receipt, { attestationNotice: async () => ({ kind: "absent", message: "the api answers ATTESTATION_NOT_FOUND" }) })).toMatchObject({ verdict: "MISMATCH", reason: expect.stringMatching(/ATTESTATION_NOT_FOUND: the rollup contradicts it$/) });
    expect(await judge(receipt, { attestationNotice: async () => ({ kind: "refused", where: "CartesiDApp", reason: "InvalidClaimIndex()" }) })).toMatchObject({ verdict: "REFUSED" });
  });

  it("INVALID for another signer than the published one, another domain, or a changed field", async () => {
    const receipt = await signReceipt(source, key, where);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    expect(await judge(receipt, {}, stranger)).toMatchObject({ verdict: "INVALID", reason: expect.stringMatching(/this operator's receipt signer is/) });
    expect(await judge(receipt, { published: { signer: signer as Address, domain: { chainId: 1, registry: where.registry } } })).toMatchObject({ verdict: "INVALID", reason: expect.stringMatching(/its domain names/) });
    expect(await judge(receipt, { published: { signer: signer as Address, domain: null } })).toMatchObject({ verdict: "INVALID" });
    const changed: Receipt = { ...receipt, message: { ...receipt.message, time: receipt.message.time + 1 } };
    expect(await judge(changed)).toMatchObject({ verdict: "INVALID", reason: expect.stringMatching(/a field was changed$/) });
  });

  it("a revocation's receipt: VALID against the proven revocation, MISMATCH when the rollup holds none or another", async () => {
    const revoked = await signRevocationReceipt(source, revocation, key, where);
    const withRevocation = { revocationNotice: async () => proven(revocation), revokedAt: async () => revocation.revoked_at };
    expect(await judge(revoked, withRevocation)).toMatchObject({ verdict: "VALID", kind: "revocation", revokedAt: revocation.revoked_at });
    expect(await judge(revoked)).toMatchObject({ verdict: "MISMATCH", kind: "revocation", reason: expect.stringMatching(/NOT_REVOKED: the rollup contradicts it$/) });
    const other = await judge(revoked, { revocationNotice: async () => proven({ ...revocation, reason: "", superseded_by: keccak256(toHex("newer")) as Hex }) });
    expect(other).toMatchObject({ verdict: "MISMATCH", mismatches: [{ field: "data" }] });
    const early = await judge(revoked, { revocationNotice: async () => ({ kind: "not-yet", message: "epoch 4 is open" }) });
    expect(early).toMatchObject({ verdict: "SIGNED", kind: "revocation" });
  });
});
