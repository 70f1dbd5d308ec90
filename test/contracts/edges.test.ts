/**
 * The edges of the attestation store that an adversarial review found (issue 50), each closed and pinned
 * here against the shipped artifacts (common/contracts/), on a chain of this file's own. Where a case needs a
 * notice the honest dapp never emits, an application of the test's own (test/support/foreign-app.ts: Cartesi's
 * CartesiDApp or Application under an Authority the test owns) proves it, so the registry's proof check is
 * the real one and only the store's own rules stand between the notice and the records (docs/eas.md):
 * texts of every length the encoder allows; a schema's fields from one source; no empty batch; revocations
 * only where they can be of an attestation the rollup made; v1's validateNotice answering false; recordMany
 * proving a notice before it skips it as a duplicate. And issue 52's flag: a kind's schema unique per account,
 * read back by `isUniquePerAccount` and `isAttestationValidUnique`, one flag per schema, and the notices of
 * the format before it ("AttestationBatch/1") refused.
 */
import { decodeAbiParameters, getAddress, keccak256, parseAbiParameters, parseEventLogs, stringToHex, type Abi, type Address, type Hex, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BATCH_NOTICE_TAG, batchItemId, encodeBatchNotice, LONE_ITEM, type BatchKind, type BatchNotice } from "../../common/attestation-batch.ts";
import { contractArtifact, stackContracts } from "../../common/contracts.ts";
import { startChain, type TestChain } from "../support/chain.ts";
import { deployForeignApplication, type ForeignApplication } from "../support/foreign-app.ts";

const OWNER: Address = "0x00000000000000000000000000000000000000a1";
const OTHER_OWNER: Address = "0x00000000000000000000000000000000000000b2";
const ATTESTER: Address = "0x00000000000000000000000000000000000000c3";
const ZERO_ID: Hex = `0x${"00".repeat(32)}`;
const DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";
/** Where a kind's flags byte is: tag 4, input 8, time 8, sender 20, kindCount 1, then schemaId, halfLife, validity. */
const FLAGS_AT = 41 + 32 + 8 + 8;
/** Where a kind's first text (provider) starts: after its flags. */
const FIRST_TEXT_AT = FLAGS_AT + 1;
const TEXTS = ["provider", "field", "bucket"] as const;

const schemaOf = (name: string): Hex => keccak256(stringToHex(`issue 50: ${name}`));
const kindOf = (over: Partial<BatchKind> = {}): BatchKind => ({ schemaId: schemaOf("default"), halfLife: 3600n, validity: 0n, uniquePerAccount: false, provider: "http", field: "data.balance", bucket: "mid", attestors: [], ...over });
/** The attestation a lone input makes; the id the registry computes for it. */
const uidOf = (inputIndex: number): Hex => batchItemId(BigInt(inputIndex), LONE_ITEM);
const cut = (notice: Hex, bytes: number): Hex => notice.slice(0, 2 + 2 * bytes) as Hex;
/** `notice` with byte `at` set to `value`. */
const withByte = (notice: Hex, at: number, value: number): Hex => `${notice.slice(0, 2 + 2 * at)}${value.toString(16).padStart(2, "0")}${notice.slice(4 + 2 * at)}` as Hex;
/**
 * The notice of the format before issue 52 ("AttestationBatch/1") with the same items: the old tag, and no
 * flags byte in its (one) kind.
 */
const formatOne = (notice: Hex): Hex => `${keccak256(stringToHex("AttestationBatch/1")).slice(0, 10)}${notice.slice(10, 2 + 2 * FLAGS_AT)}${notice.slice(4 + 2 * FLAGS_AT)}` as Hex;

let chain: TestChain;
/** The chain's time when the file starts: every notice is dated an hour before it unless it says otherwise. */
let now: bigint;

beforeAll(async () => {
  chain = await startChain();
  now = (await chain.reader.getBlock()).timestamp;
});

afterAll(async () => {
  await chain?.stop();
});

/** A lone input's batch notice: one attestation for OWNER of one kind, unless `over` says otherwise. */
function batch(inputIndex: number, over: Partial<BatchNotice> = {}): Hex {
  return encodeBatchNotice({ inputIndex: BigInt(inputIndex), time: now - 3600n, sender: ATTESTER, kinds: [kindOf()], created: [{ item: LONE_ITEM, owner: OWNER, kind: 0 }], revoked: [], ...over });
}

/** A revocation-only notice of `uid`. */
function revocation(inputIndex: number, uid: Hex, over: Partial<BatchNotice> = {}): Hex {
  return batch(inputIndex, { kinds: [], created: [], revoked: [{ uid, owner: OWNER, schemaId: schemaOf("default") }], ...over });
}

/** A registry of the version's shipped artifact, over `application`, and what the tests do with it. */
async function deployRegistry(rollups: "v1" | "v2", application: Address, walletIndex: number) {
  const { abi, bytecode } = contractArtifact(stackContracts(rollups).registry);
  const wallet = chain.wallet(walletIndex);
  const deployed = await chain.reader.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode, args: [application] }) });
  const address = deployed.contractAddress as Address;
  const read = <T,>(functionName: string, args: readonly unknown[] = []) => chain.reader.readContract({ address, abi, functionName, args }) as Promise<T>;
  const simulate = (functionName: string, args: readonly unknown[]) => chain.reader.simulateContract({ address, abi: abi as Abi, functionName, args, account: wallet.account });
  return {
    abi,
    read,
    simulate,
    /** Sends the call and answers its receipt; fails the test when it reverts. */
    async write(functionName: string, args: readonly unknown[]): Promise<TransactionReceipt> {
      const receipt = await chain.reader.waitForTransactionReceipt({ hash: await wallet.writeContract({ address, abi, functionName, args }) });
      expect(receipt.status).toBe("success");
      return receipt;
    },
    /** The registry refuses the call with this error (eth_call: a refused transaction writes nothing). */
    async refuses(functionName: string, args: readonly unknown[], error: RegExp): Promise<void> {
      await expect(simulate(functionName, args)).rejects.toThrow(error);
    },
    easAttestation: (uid: Hex) => read<{ uid: Hex; time: bigint; expirationTime: bigint; revocationTime: bigint; recipient: Address; data: Hex }>("getAttestation", [uid]),
  };
}

describe.each(["v1", "v2"] as const)("on Rollups %s, notices proven by an application of the test's own", (rollups) => {
  let app: ForeignApplication;
  const walletIndex = rollups === "v1" ? 1 : 2;
  const registry = () => deployRegistry(rollups, app.address, walletIndex);

  beforeAll(async () => {
    app = await deployForeignApplication(rollups, chain.wallet(walletIndex), chain.reader);
  });

  it("a text of any length 0 to 0xffff is read with wide arithmetic, and one cut short is MalformedBatch (not Panic 0x11)", async () => {
    const r = await registry();
    const cases: { name: string; notice: Hex; whole: boolean; inputIndex: number; length: number; text: (typeof TEXTS)[number] }[] = [];
    let inputIndex = 100;
    for (const length of [0, 1, 0xfffe, 0xffff]) {
      for (const [position, text] of TEXTS.entries()) {
        inputIndex++;
        const kind = kindOf({ schemaId: schemaOf(`length ${length} in ${text}`), [text]: "x".repeat(length) });
        const notice = batch(inputIndex, { kinds: [kind] });
        cases.push({ name: `${text} of ${length} bytes`, notice, whole: true, inputIndex, length, text });
        // The text's 2-byte length is at its place: the texts before it are the kind's own.
        const at = FIRST_TEXT_AT + TEXTS.slice(0, position).reduce((sum, t) => sum + 2 + kind[t].length, 0);
        // Cut after the length (the text absent, or for 0 bytes what follows it), and one byte short of its end.
        for (const end of new Set([at + 2, at + 2 + Math.max(length - 1, 0)])) {
          cases.push({ name: `${text} of ${length} bytes, cut at ${end}`, notice: cut(notice, end), whole: false, inputIndex, length, text });
        }
      }
    }
    const proofs = await app.prove(cases.map((c) => c.notice));
    for (const [k, c] of cases.entries()) {
      const args = [c.notice, proofs[k]] as const;
      if (c.whole) {
        expect(await r.read("checkAttestation", [...args, 0n]), c.name).toEqual([uidOf(c.inputIndex), true]);
      } else {
        await r.refuses("record", args, /MalformedBatch/);
        await r.refuses("checkAttestation", [...args, 0n], /MalformedBatch/);
      }
    }
    // The short ones are recorded too, and read back byte for byte (the long ones' labels would take ~46M gas of storage).
    for (const [k, c] of cases.entries()) {
      if (!c.whole || c.length > 1) continue;
      await r.write("record", [c.notice, proofs[k]]);
      const [provider, field, bucket] = decodeAbiParameters(parseAbiParameters(DATA_SCHEMA), (await r.easAttestation(uidOf(c.inputIndex))).data);
      expect({ provider, field, bucket }[c.text], c.name).toBe("x".repeat(c.length));
    }
  });

  it("a schema's provider, half-life and validity come from one source: a kind that disagrees with its schema is refused", async () => {
    const r = await registry();
    const expiring = kindOf({ schemaId: schemaOf("expiring"), validity: 100n });
    const time = now - 3600n;
    const notices = [
      batch(1, { kinds: [expiring] }),
      // The same schema id, never expiring: recorded, it would read an expirationTime and be valid for ever.
      batch(2, { kinds: [{ ...expiring, validity: 0n }] }),
      batch(3, { kinds: [{ ...expiring, halfLife: 7200n }] }),
      batch(4, { kinds: [{ ...expiring, provider: "https" }] }),
      // Another bucket of the same schema is a new kind that repeats its schema: recorded.
      batch(5, { kinds: [{ ...expiring, bucket: "high" }] }),
    ];
    const proofs = await app.prove(notices);
    await r.write("record", [notices[0], proofs[0]]);
    for (const k of [1, 2, 3]) await r.refuses("record", [notices[k], proofs[k]], /SchemaMismatch/);
    await r.write("record", [notices[4], proofs[4]]);
    // Each attestation recorded reads an expiry that agrees with its validity: both expired an hour ago.
    for (const input of [1, 5]) {
      expect((await r.easAttestation(uidOf(input))).expirationTime).toBe(time + 100n);
      expect(await r.read("isAttestationValid", [uidOf(input)])).toBe(false);
    }
    expect((await r.easAttestation(uidOf(2))).uid).toBe(ZERO_ID);
    expect(await r.read("isAttestationValid", [uidOf(2)])).toBe(false);
    expect(await r.read("isBatchRecorded", [2n])).toBe(false);
  });

  it("a batch that makes and revokes nothing is refused, and its input stays open to its real notice", async () => {
    const r = await registry();
    const notices = [batch(7, { kinds: [], created: [] }), batch(7, { created: [] }), batch(7)];
    const proofs = await app.prove(notices);
    for (const k of [0, 1]) {
      await r.refuses("record", [notices[k], proofs[k]], /EmptyBatch/);
      await r.refuses("recordMany", [[notices[k]], [proofs[k]]], /EmptyBatch/);
    }
    expect(await r.read("isBatchRecorded", [7n])).toBe(false);
    await r.write("record", [notices[2], proofs[2]]);
    expect(await r.read("isAttestationValid", [uidOf(7)])).toBe(true);
  });

  it("a revocation is kept only where it can be of an attestation the rollup made: never of uid 0, and its attestation must match it", async () => {
    const r = await registry();
    const attestedAt = now - 3600n;
    const notices = [
      revocation(20, ZERO_ID),
      // At time zero a revocation would read as none.
      revocation(21, uidOf(1), { time: 0n }),
      // Brought before its attestation (input 1): kept, and the attestation reads revoked once recorded.
      revocation(22, uidOf(1)),
      batch(1),
      // Brought before attestations that do not match them: of another owner, or older than the attestation.
      revocation(23, uidOf(2), { revoked: [{ uid: uidOf(2), owner: OTHER_OWNER, schemaId: schemaOf("default") }] }),
      batch(2),
      revocation(24, uidOf(3), { time: attestedAt - 1n }),
      batch(3),
      // Of an attestation already recorded (input 4): of another owner, older than it, and its own.
      batch(4),
      revocation(25, uidOf(4), { revoked: [{ uid: uidOf(4), owner: OTHER_OWNER, schemaId: schemaOf("default") }] }),
      revocation(26, uidOf(4), { time: attestedAt - 1n }),
      revocation(27, uidOf(4)),
    ];
    const proofs = await app.prove(notices);
    const recordAt = (k: number) => r.write("record", [notices[k], proofs[k]]);
    const refusedAt = (k: number) => r.refuses("record", [notices[k], proofs[k]], /InvalidRevocation/);

    await refusedAt(0);
    expect(await r.read("revocationOf", [ZERO_ID])).toBe(0n);
    await refusedAt(1);
    await recordAt(2);
    expect(await r.read("revocationOf", [uidOf(1)])).toBe(attestedAt);
    await recordAt(3);
    expect(await r.easAttestation(uidOf(1))).toMatchObject({ uid: uidOf(1), recipient: getAddress(OWNER), time: attestedAt, revocationTime: attestedAt });
    expect(await r.read("isAttestationValid", [uidOf(1)])).toBe(false);

    // The revocation is kept until its attestation comes; the attestation that does not match it is refused.
    await recordAt(4);
    await refusedAt(5);
    await recordAt(6);
    await refusedAt(7);
    for (const input of [2, 3]) expect((await r.easAttestation(uidOf(input))).uid).toBe(ZERO_ID);

    await recordAt(8);
    await refusedAt(9);
    await refusedAt(10);
    expect(await r.read("isAttestationValid", [uidOf(4)])).toBe(true);
    await recordAt(11);
    expect(await r.read("isAttestationValid", [uidOf(4)])).toBe(false);
  });

  it("issue 52: an attestation of a schema unique per account answers isUniquePerAccount, one of another schema not; the flag is its schema's", async () => {
    const r = await registry();
    const unique = kindOf({ schemaId: schemaOf("unique per account"), uniquePerAccount: true });
    const notices = [
      batch(50, { kinds: [unique] }),
      batch(51),
      // A refresh: the same owner again under the unique schema is another attestation of the same account.
      batch(52, { kinds: [{ ...unique, bucket: "high" }] }),
      // The unique schema's id without its flag: recorded, it would say the schema is both.
      batch(53, { kinds: [{ ...unique, uniquePerAccount: false }] }),
      revocation(54, uidOf(50), { revoked: [{ uid: uidOf(50), owner: OWNER, schemaId: unique.schemaId }] }),
      // A flag this registry does not know (bit 1).
      withByte(batch(55, { kinds: [{ ...unique, schemaId: schemaOf("unknown flag") }] }), FLAGS_AT, 3),
    ];
    expect(notices[0]?.slice(0, 10)).toBe(BATCH_NOTICE_TAG);
    const old = [formatOne(batch(56, { kinds: [unique] })), formatOne(batch(57))];
    const proofs = await app.prove([...notices, ...old]);
    for (const k of [0, 1, 2]) await r.write("record", [notices[k], proofs[k]]);
    const answers = async (input: number) => [await r.read<boolean>("isUniquePerAccount", [uidOf(input)]), await r.read<boolean>("isAttestationValidUnique", [uidOf(input)])];
    expect(await answers(50)).toEqual([true, true]);
    expect(await answers(51)).toEqual([false, false]);
    expect(await answers(52)).toEqual([true, true]);
    await r.refuses("record", [notices[3], proofs[3]], /SchemaMismatch/);
    expect(await answers(53)).toEqual([false, false]);
    // Revoked: still of a schema unique per account, no longer valid.
    await r.write("record", [notices[4], proofs[4]]);
    expect(await answers(50)).toEqual([true, false]);
    expect(await r.read("isAttestationValid", [uidOf(52)])).toBe(true);
    // Never recorded here.
    expect(await r.read("isUniquePerAccount", [ZERO_ID])).toBe(false);
    expect(await r.read("isAttestationValidUnique", [ZERO_ID])).toBe(false);
    await r.refuses("record", [notices[5], proofs[5]], /MalformedBatch/);
    // The format before: its tag is not this one, whatever its items (proven by the application all the same).
    for (const [k, notice] of old.entries()) {
      const proof = proofs[notices.length + k];
      await r.refuses("record", [notice, proof], /MalformedBatch/);
      await r.refuses("recordMany", [[notice], [proof]], /MalformedBatch/);
      await r.refuses("checkAttestation", [notice, proof, 0n], /MalformedBatch/);
    }
    for (const input of [56, 57]) expect(await r.read("isBatchRecorded", [BigInt(input)])).toBe(false);
  });

  it("recordMany checks a notice's proof before it skips it as recorded, and says which it skipped (BatchSkipped)", async () => {
    const r = await registry();
    const notices = [batch(30), batch(31)];
    const proofs = await app.prove(notices);
    await r.write("record", [notices[0], proofs[0]]);
    // Input 30's notice with another owner: never claimed. Before, it was skipped as recorded: success, nothing said.
    const forged = batch(30, { created: [{ item: LONE_ITEM, owner: OTHER_OWNER, kind: 0 }] });
    await r.refuses("recordMany", [[forged], [proofs[0]]], /ProofRejected/);
    await r.refuses("recordMany", [[notices[1], forged], [proofs[1], proofs[0]]], /ProofRejected/);

    // The true duplicate is proven, skipped and named; the new one beside it is recorded.
    expect((await r.simulate("recordMany", [[notices[0]], [proofs[0]]])).result).toBe(0n);
    const receipt = await r.write("recordMany", [notices, proofs]);
    const skipped = parseEventLogs({ abi: r.abi, logs: receipt.logs, eventName: "BatchSkipped" }) as unknown as { args: { inputIndex: bigint } }[];
    expect(skipped.map((e) => e.args.inputIndex)).toEqual([30n]);
    expect(parseEventLogs({ abi: r.abi, logs: receipt.logs, eventName: "Attested" })).toHaveLength(1);
    expect(await r.read("isAttestationValid", [uidOf(31)])).toBe(true);
  });
});

describe("on Rollups v1, an application whose validateNotice answers false", () => {
  it("has proven nothing: record, recordMany and the stateless check refuse its notices (ProofRejected)", async () => {
    // Runtime code that answers 32 zero bytes to any call (PUSH1 32, PUSH1 0, RETURN): `false` to validateNotice.
    const wallet = chain.wallet(3);
    const deployed = await chain.reader.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ data: "0x6460206000f36000526005601bf3" }) });
    const liar = deployed.contractAddress as Address;
    expect(await chain.reader.getCode({ address: liar })).toBe("0x60206000f3");
    const r = await deployRegistry("v1", liar, 3);
    const zero: Hex = ZERO_ID;
    const proof = {
      validity: { inputIndexWithinEpoch: 0n, outputIndexWithinInput: 0n, outputHashesRootHash: zero, vouchersEpochRootHash: zero, noticesEpochRootHash: zero, machineStateHash: zero, outputHashInOutputHashesSiblings: [], outputHashesInEpochSiblings: [] },
      context: "0x",
    };
    const notice = batch(40);
    await r.refuses("record", [notice, proof], /ProofRejected/);
    await r.refuses("recordMany", [[notice], [proof]], /ProofRejected/);
    await r.refuses("checkAttestation", [notice, proof, 0n], /ProofRejected/);
    expect((await r.easAttestation(uidOf(40))).uid).toBe(ZERO_ID);
  });
});
