/**
 * The rollup's attestations behind EAS's read surface, end to end on the real stack, on Rollups v1 and v2:
 * claims made through the api, their inputs' batch notices brought with their proofs to the registry
 * (contracts/AttestationRegistryV1.sol, V2: the store), read through the gate (contracts/AttestationGate.sol,
 * the store's other face) and by a contract that knows only EAS's IEAS (contracts/EasConsumer.sol). Forged
 * bytes, another input's notice, a JSON notice and proofs of another application are refused with nothing
 * written; a batch is recorded once; a revocation sent to the rollup and proven withdraws the attestation;
 * a schema's validity period and half-life play out on the chain's clock; a time past the store's width is
 * refused whole (docs/eas.md).
 */
import nacl from "tweetnacl";
import {
  createTestClient,
  decodeAbiParameters,
  getAddress,
  http,
  parseAbiParameters,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient, type BatchProof } from "../../client/index.ts";
import { itemIdOf } from "../../common/ids.ts";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import { deployV1Application } from "../../devnode/v1/contracts.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Artifact } from "../../devnode/v2/contracts.ts";
import { TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { batchOf, batchProofArgument, deployAttestationGate, deployAttestationRegistry, deployContract, deployerWallet, recordArgs } from "../support/gate.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { startStack, type TestStack } from "../support/stack.ts";

/** EAS's `Attestation` (Common.sol) as viem decodes it. */
interface EasAttestation {
  uid: Hex;
  schema: Hex;
  time: bigint;
  expirationTime: bigint;
  revocationTime: bigint;
  refUID: Hex;
  recipient: Address;
  attester: Address;
  revocable: boolean;
  data: Hex;
}

const FIELD = "data.balance";
const BUCKETS = { boundaries: [0, 100, 1000], labels: ["low", "mid", "high"] };
const HALF_LIFE = 3600;
const VALIDITY = 7200;
const DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";
const ZERO_ID: Hex = `0x${"00".repeat(32)}`;
const WAD = 10n ** 18n;

type Deployed = Awaited<ReturnType<typeof deployContract>>;

describe.each(["v1", "v2"] as const)("on Rollups %s", (rollups) => {
  let stack: TestStack;
  let provider: ProviderServer;
  let user: AttestationClient;
  /** Schema "lasting": attestations never expire. Schema "expiring": valid for VALIDITY seconds. */
  let lasting: Hex;
  let expiring: Hex;
  let lastingId: Hex;
  let expiringId: Hex;
  /** The batch notices of the two claims' inputs, with their proofs. */
  let lastingBatch: BatchProof;
  let expiringBatch: BatchProof;
  let attestedAt: bigint;
  let registry: Deployed;
  let gate: Deployed;
  let consumer: Deployed;

  beforeAll(async () => {
    provider = await startProviderServer();
    stack = await startStack({
      api: true,
      index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
      rollups,
      env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", EPOCH_INTERVAL_MS: "0" },
    });
    const base = new AttestationClient({ baseUrl: stack.urls.api });
    const admin = base.withToken(await tokenFor("admin", stack.addresses.admin));
    user = base.withToken(await tokenFor("user", USER_A));
    const schema = { provider: "http", domain: "127.0.0.1", bucketDefinitions: { [FIELD]: BUCKETS }, dataKeys: [], freshnessHalfLife: HALF_LIFE };
    ({ schema_id: lasting } = await admin.registerSchema({ ...schema, flowType: "balance" }));
    ({ schema_id: expiring } = await admin.registerSchema({ ...schema, flowType: "balance-checked", validityPeriod: VALIDITY }));
    await admin.registerEncryptionKey({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
    provider.route("/balance", { kind: "json", value: { data: { balance: 512 } } });
    const claim = (schemaId: Hex) =>
      user.claim({
        provider: "http",
        params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
        bucketDefinition: { field: FIELD, ...BUCKETS },
        schemaId,
      });
    ({ claimId: lastingId } = (await claim(lasting)) as { claimId: Hex });
    ({ claimId: expiringId } = (await claim(expiring)) as { claimId: Hex });
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    [lastingBatch, expiringBatch] = [await user.attestationBatch(lastingId), await user.attestationBatch(expiringId)];
    attestedAt = batchOf(lastingBatch).time;
    registry = await deployAttestationRegistry(stack, lastingBatch.applicationAddress as Address);
    gate = await deployAttestationGate(stack, registry.address);
    consumer = await deployContract(stack, "EasConsumer", [registry.address, lasting]);
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await provider?.close();
  });

  const read = <T,>(contract: Deployed, functionName: string, args: readonly unknown[] = [], blockNumber?: bigint) =>
    stack.client.publicClient.readContract({ address: contract.address, abi: contract.abi, functionName, args, ...(blockNumber === undefined ? {} : { blockNumber }) }) as Promise<T>;

  async function write(contract: Deployed, functionName: string, args: readonly unknown[]): Promise<TransactionReceipt> {
    const hash = await contract.wallet.writeContract({ address: contract.address, abi: contract.abi, functionName, args, chain: null });
    const receipt = await contract.reader.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    return receipt;
  }

  /** The contract refuses the call (what it would do, asked by eth_call; a refused transaction writes nothing). */
  async function refuses(contract: Deployed, functionName: string, args: readonly unknown[], reason: RegExp = /reverted/): Promise<void> {
    const call = { address: contract.address, abi: contract.abi, functionName, args, account: contract.wallet.account };
    await expect(contract.reader.simulateContract(call)).rejects.toThrow(reason);
  }

  const easAttestation = (uid: Hex) => read<EasAttestation>(registry, "getAttestation", [uid]);

  /** Mines one block at exactly `timestamp` (hardhat), and returns its number: calls at it see that time. */
  async function mineAt(timestamp: bigint): Promise<bigint> {
    const clock = createTestClient({ mode: "hardhat", transport: http(stack.urls.rpc) });
    await clock.setNextBlockTimestamp({ timestamp });
    await clock.mine({ blocks: 1 });
    const block = await stack.client.publicClient.getBlock();
    expect(block.timestamp).toBe(timestamp);
    return block.number;
  }

  /** The notice with the byte at `at` (0-based) changed. */
  const flipped = (notice: string, at: number): Hex => {
    const bytes = Buffer.from(notice.slice(2), "hex");
    bytes[at] = (bytes[at] as number) ^ 0x01;
    return `0x${bytes.toString("hex")}`;
  };

  it("a batch notice with any byte changed, another input's notice or a JSON notice is refused, and nothing is written", async () => {
    const [notice, proof] = recordArgs(lastingBatch);
    const length = (notice.length - 2) / 2;
    // The tag, the input index, the time, the sender, the kind's schema, bucket and half-life, the owner, the item.
    for (const at of [0, 11, 19, 39, 41, 80, length - 30, length - 25, length - 6, length - 24]) await refuses(registry, "record", [flipped(notice, at), proof], /ProofRejected/);
    // The other claim's input: a true notice, not the one this proof is for.
    await refuses(registry, "record", [expiringBatch.notice, proof], /ProofRejected/);
    // The attestation's JSON notice holds with its own proof, but it is no batch notice.
    const json = await user.attestationProof(lastingId);
    await refuses(registry, "record", [json.notice, batchProofArgument(json as unknown as BatchProof)], /MalformedBatch/);
    await refuses(registry, "recordMany", [[notice], []], /LengthMismatch/);
    expect((await easAttestation(lastingId)).uid).toBe(ZERO_ID);
    expect(await read(registry, "isAttestationValid", [lastingId])).toBe(false);
    expect((await read<{ claimId: Hex }>(gate, "attestationOf", [USER_A, lasting])).claimId).toBe(ZERO_ID);
  });

  it("a proof given to a registry of another application is refused, and nothing is written", async () => {
    const wallet = deployerWallet(stack);
    let other: Address;
    if (rollups === "v2") {
      // Another Application under the same Authority: the Authority accepted this outputs root for the stack's application only.
      const artifact = v2Artifact("Application");
      const args = [V2_DEFAULTS.authorityAddress, wallet.account.address, DEVNODE_TEMPLATE_HASH, inputBoxAvailability(V2_DEFAULTS.inputBoxAddress)];
      const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode.object, args, chain: null });
      other = (await stack.client.publicClient.waitForTransactionReceipt({ hash })).contractAddress as Address;
    } else {
      // Another CartesiDApp, with an Authority and a History of its own that hold no claim of this epoch.
      other = (await deployV1Application(wallet, stack.client.publicClient)).dapp;
    }
    expect(getAddress(other)).not.toBe(getAddress(lastingBatch.applicationAddress));
    const otherRegistry = await deployAttestationRegistry(stack, other);
    await refuses(otherRegistry, "record", recordArgs(lastingBatch), /ProofRejected/);
    expect((await read<EasAttestation>(otherRegistry, "getAttestation", [lastingId])).uid).toBe(ZERO_ID);
    expect((await read<{ claimId: Hex }>(otherRegistry, "attestationOf", [USER_A, lasting])).claimId).toBe(ZERO_ID);
  });

  it("the stateless check answers from the notice and its proof alone, and refuses a place the notice does not have", async () => {
    const [notice, proof] = recordArgs(lastingBatch);
    expect(await read(registry, "checkAttestation", [notice, proof, BigInt(lastingBatch.at)])).toEqual([lastingId, true]);
    await refuses(registry, "checkAttestation", [notice, proof, 1n], /NoSuchAttestation/);
    await refuses(registry, "checkAttestation", [flipped(notice, 41), proof, 0n], /ProofRejected/);
  });

  it("the IEAS-only consumer reads an attestation recorded with its batch's proof, each field as docs/eas.md maps it", async () => {
    const receipt = await write(registry, "record", recordArgs(lastingBatch));
    const [attested] = parseEventLogs({ abi: registry.abi, logs: receipt.logs, eventName: "Attested" }) as unknown as { args: Record<string, unknown> }[];
    expect(attested?.args).toEqual({ recipient: getAddress(USER_A), attester: getAddress(stack.addresses.admin), uid: lastingId, schemaUID: lasting });

    const stored = await easAttestation(lastingId);
    expect(stored).toEqual({
      uid: lastingId,
      schema: lasting,
      time: attestedAt,
      expirationTime: 0n,
      revocationTime: 0n,
      refUID: ZERO_ID,
      recipient: getAddress(USER_A),
      // The api's wallet sent the attestation's input.
      attester: getAddress(stack.addresses.admin),
      revocable: true,
      data: expect.stringMatching(/^0x/),
    });
    expect(decodeAbiParameters(parseAbiParameters(DATA_SCHEMA), stored.data)).toEqual(["http", FIELD, "mid", zeroAddress, BigInt(HALF_LIFE), []]);
    expect(await read(registry, "isAttestationValid", [lastingId])).toBe(true);
    expect(await read(registry, "isAttestationValidWith", [lastingId, 0n])).toBe(true);
    expect(await read(registry, "isAttestationValidWith", [lastingId, 1n])).toBe(false);
    expect(await read(registry, "getSchemaRegistry")).toBe(getAddress(registry.address));
    expect(await read(registry, "getSchema", [lasting])).toEqual({ uid: lasting, resolver: zeroAddress, revocable: true, schema: DATA_SCHEMA });
    expect(await read(registry, "getSchema", [`0x${"42".repeat(32)}`])).toEqual({ uid: ZERO_ID, resolver: zeroAddress, revocable: false, schema: "" });
    // Once only: the same batch again is refused by record and skipped by recordMany, recording nothing.
    await refuses(registry, "record", recordArgs(lastingBatch), /BatchAlreadyRecorded/);
    const [notice, proof] = recordArgs(lastingBatch);
    const again = await registry.reader.simulateContract({ address: registry.address, abi: registry.abi, functionName: "recordMany", args: [[notice], [proof]], account: registry.wallet.account });
    expect(again.result).toBe(0n);

    expect(await read(consumer, "isAllowed", [USER_A, lastingId])).toBe(true);
    expect(await read(consumer, "isAllowed", [USER_B, lastingId])).toBe(false);
    expect(await read(consumer, "bucketOf", [lastingId])).toEqual([FIELD, "mid"]);
    expect(await read(consumer, "hasBucket", [USER_A, lastingId, FIELD, "mid"])).toBe(true);
    expect(await read(consumer, "hasBucket", [USER_A, lastingId, FIELD, "high"])).toBe(false);
    // The other schema's attestation (not recorded yet) is no attestation of this consumer's schema.
    await refuses(consumer, "bucketOf", [expiringId], /NotOfSchema/);

    // The gate answers from the same record, nothing brought to it; so does the registry's own gate face.
    for (const face of [gate, registry]) {
      expect(await read(face, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(true);
      expect(await read(face, "hasBucket", [USER_A, lasting, FIELD, "high"])).toBe(false);
      expect(await read(face, "hasFreshBucket", [USER_A, lasting, FIELD, "mid", WAD / 2n])).toBe(true);
      expect(await read(face, "hasBucketByAttestors", [USER_A, lasting, FIELD, "mid", 1n])).toBe(false);
      expect(await read(face, "attestationOf", [USER_A, lasting])).toEqual({
        claimId: lastingId,
        order: BigInt(lastingBatch.inputIndex),
        field: FIELD,
        bucket: "mid",
        attestor: zeroAddress,
        attestorCount: 0,
        timestamp: attestedAt,
        expiresAt: 0n,
        halfLife: BigInt(HALF_LIFE),
      });
    }
  });

  describe("revoked in the rollup", () => {
    let revocationBatch: BatchProof;
    let revokedAt: number;

    beforeAll(async () => {
      // Account #0 is an admin of the dapp (and the api's wallet, the attestation's attester).
      const verdict = await stack.send({ type: "revoke_attestation", params: { attestation_id: lastingId, reason: "balance moved to another bank" } });
      expect(verdict.status).toBe("ACCEPTED");
      revokedAt = verdict.timestamp;
      expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
      revocationBatch = await user.revocationBatch(lastingId);
    }, 120_000);

    it("its batch notice names the attestation, its owner and schema, the revoker and the revocation's time", () => {
      expect(batchOf(revocationBatch)).toEqual({
        inputIndex: BigInt(revocationBatch.inputIndex),
        time: BigInt(revokedAt),
        sender: stack.addresses.admin.toLowerCase(),
        kinds: [],
        created: [],
        revoked: [{ uid: lastingId, owner: USER_A.toLowerCase(), schemaId: lasting }],
      });
      expect(revocationBatch.at).toBe(0);
    });

    it("a forged revocation is refused; the proven one makes the attestation invalid in the registry, the consumer and the gate", async () => {
      const [notice, proof] = recordArgs(revocationBatch);
      // Another uid, another time.
      for (const at of [45, 19]) await refuses(registry, "record", [flipped(notice, at), proof], /ProofRejected/);
      // A proof of another epoch (this one's) for a notice of the first: it holds for its own notice only.
      await refuses(registry, "record", [lastingBatch.notice, proof], /ProofRejected/);
      expect(await read(registry, "isAttestationValid", [lastingId])).toBe(true);

      const receipt = await write(registry, "record", [notice, proof]);
      const [revoked] = parseEventLogs({ abi: registry.abi, logs: receipt.logs, eventName: "Revoked" }) as unknown as { args: Record<string, unknown> }[];
      expect(revoked?.args).toEqual({ recipient: getAddress(USER_A), attester: getAddress(stack.addresses.admin), uid: lastingId, schemaUID: lasting });
      expect(await read(registry, "isAttestationValid", [lastingId])).toBe(false);
      expect((await easAttestation(lastingId)).revocationTime).toBe(BigInt(revokedAt));
      expect(await read(registry, "revocationOf", [lastingId])).toBe(BigInt(revokedAt));
      expect(await read(consumer, "isAllowed", [USER_A, lastingId])).toBe(false);
      // Still readable, marked revoked.
      expect(await read(consumer, "bucketOf", [lastingId])).toEqual([FIELD, "mid"]);
      await refuses(registry, "record", [notice, proof], /BatchAlreadyRecorded/);
      // The stateless check learns the revocation from the registry.
      expect(await read(registry, "checkAttestation", [...recordArgs(lastingBatch), 0n])).toEqual([lastingId, false]);

      expect(await read(gate, "revokedAt", [lastingId])).toBe(BigInt(revokedAt));
      expect(await read(gate, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(false);
      expect(await read(gate, "isFresh", [USER_A, lasting, WAD / 2n])).toBe(false);
    });

    it("a revocation brought before its attestation still counts", async () => {
      const fresh = await deployAttestationRegistry(stack, lastingBatch.applicationAddress as Address);
      const freshGate = await deployAttestationGate(stack, fresh.address);
      await write(fresh, "record", recordArgs(revocationBatch));
      expect(await read(fresh, "revocationOf", [lastingId])).toBe(BigInt(revokedAt));
      await write(fresh, "record", recordArgs(lastingBatch));
      expect((await read<EasAttestation>(fresh, "getAttestation", [lastingId])).revocationTime).toBe(BigInt(revokedAt));
      expect(await read(fresh, "isAttestationValid", [lastingId])).toBe(false);
      expect(await read(freshGate, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(false);
      expect((await read<{ claimId: Hex }>(freshGate, "attestationOf", [USER_A, lasting])).claimId).toBe(lastingId);
    });
  });

  // Last but one: it moves the chain's clock hours ahead.
  it("a schema's half-life and validity period play out on the chain's clock", async () => {
    const batch = batchOf(expiringBatch);
    const timestamp = batch.time;
    const expiresAt = timestamp + BigInt(VALIDITY);
    expect(batch.kinds[0]).toMatchObject({ schemaId: expiring, halfLife: BigInt(HALF_LIFE), validity: BigInt(VALIDITY) });
    await write(registry, "record", recordArgs(expiringBatch));
    const expiringConsumer = await deployContract(stack, "EasConsumer", [registry.address, expiring]);
    expect((await easAttestation(expiringId)).expirationTime).toBe(expiresAt);

    for (const invalid of [0n, WAD + 1n]) await refuses(gate, "isFresh", [USER_A, expiring, invalid], /InvalidMinFreshness/);
    // Exactly one half-life old: freshness 0.5, fresh at a minimum of 0.5; one second older, no longer.
    const halfLifeOld = await mineAt(timestamp + BigInt(HALF_LIFE));
    expect(await read(gate, "isFresh", [USER_A, expiring, WAD / 2n], halfLifeOld)).toBe(true);
    expect(await read(gate, "hasFreshBucket", [USER_A, expiring, FIELD, "mid", WAD / 2n], halfLifeOld)).toBe(true);
    expect(await read(gate, "isFresh", [USER_A, expiring, WAD / 2n + 1n], halfLifeOld)).toBe(false);
    const older = await mineAt(timestamp + BigInt(HALF_LIFE) + 1n);
    expect(await read(gate, "isFresh", [USER_A, expiring, WAD / 2n], older)).toBe(false);
    expect(await read(gate, "hasFreshBucket", [USER_A, expiring, FIELD, "mid", WAD / 2n], older)).toBe(false);
    expect(await read(gate, "isFresh", [USER_A, expiring, WAD / 4n], older)).toBe(true);
    // Stale is not expired: the bucket still stands until expiresAt.
    expect(await read(gate, "hasBucket", [USER_A, expiring, FIELD, "mid"], older)).toBe(true);
    expect(await read(registry, "isAttestationValid", [expiringId], older)).toBe(true);
    expect(await read(registry, "checkAttestation", [...recordArgs(expiringBatch), 0n], older)).toEqual([expiringId, true]);
    expect(await read(expiringConsumer, "isAllowed", [USER_A, expiringId], older)).toBe(true);

    const expired = await mineAt(expiresAt);
    expect(await read(registry, "isAttestationValid", [expiringId], expired)).toBe(false);
    expect(await read(registry, "checkAttestation", [...recordArgs(expiringBatch), 0n], expired)).toEqual([expiringId, false]);
    expect(await read(expiringConsumer, "isAllowed", [USER_A, expiringId], expired)).toBe(false);
    expect(await read(gate, "hasBucket", [USER_A, expiring, FIELD, "mid"], expired)).toBe(false);
    expect(await read(gate, "isFresh", [USER_A, expiring, 1n], expired)).toBe(false);
  });

  // Last: the chain's clock goes past 2106, beyond the store's 32-bit times.
  it("a batch whose time does not fit is refused whole with OutOfRange: none of its attestations is recorded", async () => {
    const beyond = 2n ** 32n + 1000n;
    const clock = createTestClient({ mode: "hardhat", transport: http(stack.urls.rpc) });
    await clock.setNextBlockTimestamp({ timestamp: beyond });
    const items = [USER_A, USER_B].map((owner) => ({ type: "create_attestation", params: { schema_id: lasting, owner, provider: "http", encrypted_data: "0x01", bucket_values: { [FIELD]: "low" } } }));
    const verdict = await stack.send({ type: "batch", params: { items } });
    expect(verdict.status).toBe("ACCEPTED");
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    const ids = items.map((_, k) => itemIdOf("create_attestation", verdict.index, k));
    const late = await user.attestationBatch(ids[1] as Hex);
    expect(late.at).toBe(1);
    expect(batchOf(late).time).toBe(beyond);
    await refuses(registry, "record", recordArgs(late), /OutOfRange/);
    for (const id of ids) expect((await easAttestation(id)).uid).toBe(ZERO_ID);
  });
});
