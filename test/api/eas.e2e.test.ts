/**
 * The rollup's attestations behind EAS's read surface, end to end on the real stack, on Rollups v1 and v2:
 * claims made through the api, their notices brought with their proofs to the registry
 * (contracts/AttestationRegistryV1.sol, V2) and the gate (contracts/AttestationGate*.sol), and read by a
 * contract that knows only EAS's IEAS (contracts/EasConsumer.sol). Forged fields and proofs of another
 * application are refused with nothing written; a revocation sent to the rollup and proven withdraws the
 * attestation; a schema's validity period and half-life play out on the chain's clock (docs/eas.md).
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
import { AttestationClient, type AttestationProof } from "../../client/index.ts";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import { deployV1Application } from "../../devnode/v1/contracts.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Artifact } from "../../devnode/v2/contracts.ts";
import { TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import {
  attestationFields,
  deployAttestationGate,
  deployAttestationRegistry,
  deployContract,
  deployerWallet,
  noticeProofArgument,
  revocationFields,
  type NoticeAttestation,
  type NoticeRevocation,
} from "../support/gate.ts";
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
  let lastingProof: AttestationProof;
  let expiringProof: AttestationProof;
  let lastingFields: NoticeAttestation;
  let expiringFields: NoticeAttestation;
  let registry: Deployed;
  let gate: Deployed;
  let consumer: Deployed;

  beforeAll(async () => {
    provider = await startProviderServer();
    stack = await startStack({
      api: true,
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
    const [{ claimId: lastingId }, { claimId: expiringId }] = [await claim(lasting), await claim(expiring)];
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    [lastingProof, expiringProof] = [await user.attestationProof(lastingId), await user.attestationProof(expiringId)];
    [lastingFields, expiringFields] = [attestationFields(lastingProof.notice), attestationFields(expiringProof.notice)];
    registry = await deployAttestationRegistry(stack, lastingProof.applicationAddress);
    gate = await deployAttestationGate(stack, lastingProof.applicationAddress);
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

  it("a notice with any field changed is refused, and nothing is written", async () => {
    const proof = noticeProofArgument(lastingProof);
    const forgeries: NoticeAttestation[] = [
      { ...lastingFields, bucket: "high" },
      { ...lastingFields, owner: USER_B.toLowerCase() as Address },
      { ...lastingFields, timestamp: lastingFields.timestamp + 1n },
      { ...lastingFields, attester: USER_A.toLowerCase() as Address },
      { ...lastingFields, expiresAt: lastingFields.timestamp + 1n },
      { ...lastingFields, halfLife: lastingFields.halfLife * 2n },
    ];
    for (const forged of forgeries) {
      await refuses(registry, "record", [forged, proof]);
      await refuses(gate, "record", [forged, proof]);
    }
    // A notice the dapp never emitted cannot be rebuilt from text that JSON escapes.
    await refuses(registry, "record", [{ ...lastingFields, bucket: 'mid"' }, proof], /UnsupportedText/);
    expect((await easAttestation(lastingFields.claimId)).uid).toBe(ZERO_ID);
    expect(await read(registry, "isAttestationValid", [lastingFields.claimId])).toBe(false);
    expect((await read<{ claimId: Hex }>(gate, "attestationOf", [USER_A, lasting])).claimId).toBe(ZERO_ID);
  });

  it("a proof given to a registry or gate of another application is refused, and nothing is written", async () => {
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
    expect(getAddress(other)).not.toBe(getAddress(lastingProof.applicationAddress));
    const otherRegistry = await deployAttestationRegistry(stack, other);
    const otherGate = await deployAttestationGate(stack, other);
    const proof = noticeProofArgument(lastingProof);
    await refuses(otherRegistry, "record", [lastingFields, proof]);
    await refuses(otherGate, "record", [lastingFields, proof]);
    expect((await read<EasAttestation>(otherRegistry, "getAttestation", [lastingFields.claimId])).uid).toBe(ZERO_ID);
    expect((await read<{ claimId: Hex }>(otherGate, "attestationOf", [USER_A, lasting])).claimId).toBe(ZERO_ID);
  });

  it("the IEAS-only consumer reads an attestation recorded with its proof, each field as docs/eas.md maps it", async () => {
    const proof = noticeProofArgument(lastingProof);
    const receipt = await write(registry, "record", [lastingFields, proof]);
    const [attested] = parseEventLogs({ abi: registry.abi, logs: receipt.logs, eventName: "Attested" }) as unknown as { args: Record<string, unknown> }[];
    expect(attested?.args).toEqual({ recipient: getAddress(USER_A), attester: getAddress(stack.addresses.admin), uid: lastingFields.claimId, schemaUID: lasting });

    const stored = await easAttestation(lastingFields.claimId);
    expect(stored).toEqual({
      uid: lastingFields.claimId,
      schema: lasting,
      time: lastingFields.timestamp,
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
    expect(await read(registry, "isAttestationValid", [lastingFields.claimId])).toBe(true);
    expect(await read(registry, "getSchemaRegistry")).toBe(getAddress(registry.address));
    expect(await read(registry, "getSchema", [lasting])).toEqual({ uid: lasting, resolver: zeroAddress, revocable: true, schema: DATA_SCHEMA });
    expect(await read(registry, "getSchema", [`0x${"42".repeat(32)}`])).toEqual({ uid: ZERO_ID, resolver: zeroAddress, revocable: false, schema: "" });
    // Once only: the same notice again is not a second attestation.
    await refuses(registry, "record", [lastingFields, proof], /AlreadyRecorded/);

    expect(await read(consumer, "isAllowed", [USER_A, lastingFields.claimId])).toBe(true);
    expect(await read(consumer, "isAllowed", [USER_B, lastingFields.claimId])).toBe(false);
    expect(await read(consumer, "bucketOf", [lastingFields.claimId])).toEqual([FIELD, "mid"]);
    expect(await read(consumer, "hasBucket", [USER_A, lastingFields.claimId, FIELD, "mid"])).toBe(true);
    expect(await read(consumer, "hasBucket", [USER_A, lastingFields.claimId, FIELD, "high"])).toBe(false);
    // The other schema's attestation (not recorded yet) is no attestation of this consumer's schema.
    await refuses(consumer, "bucketOf", [expiringFields.claimId], /NotOfSchema/);

    await write(gate, "record", [lastingFields, proof]);
    expect(await read(gate, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(true);
    expect(await read(gate, "hasFreshBucket", [USER_A, lasting, FIELD, "mid", WAD / 2n])).toBe(true);
  });

  describe("revoked in the rollup", () => {
    let revocation: NoticeRevocation;
    let revocationProof: AttestationProof;
    let revokedAt: number;

    beforeAll(async () => {
      // Account #0 is an admin of the dapp (and the api's wallet, the attestation's attester).
      const verdict = await stack.send({ type: "revoke_attestation", params: { attestation_id: lastingFields.claimId, reason: "balance moved to another bank" } });
      expect(verdict.status).toBe("ACCEPTED");
      revokedAt = verdict.timestamp;
      expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
      revocationProof = await user.revocationProof(lastingFields.claimId);
      revocation = revocationFields(revocationProof.notice);
    }, 120_000);

    it("its notice names the attestation, the revoker and the revocation's time", () => {
      expect(revocation).toEqual({
        claimId: lastingFields.claimId,
        owner: USER_A.toLowerCase(),
        schemaId: lasting,
        revoker: stack.addresses.admin.toLowerCase(),
        revokedAt: BigInt(revokedAt),
        reason: "balance moved to another bank",
        supersededBy: ZERO_ID,
      });
    });

    it("a forged revocation is refused; the proven one makes the attestation invalid in the registry, the consumer and the gate", async () => {
      const proof = noticeProofArgument(revocationProof);
      for (const forged of [{ ...revocation, revokedAt: revocation.revokedAt + 1n }, { ...revocation, reason: "" }, { ...revocation, claimId: expiringFields.claimId }]) {
        await refuses(registry, "revoke", [forged, proof]);
        await refuses(gate, "revoke", [forged, proof]);
      }
      // Nor does the revocation's proof pass for an attestation's.
      await refuses(registry, "record", [expiringFields, proof]);
      expect(await read(registry, "isAttestationValid", [lastingFields.claimId])).toBe(true);

      const receipt = await write(registry, "revoke", [revocation, proof]);
      const [revoked] = parseEventLogs({ abi: registry.abi, logs: receipt.logs, eventName: "Revoked" }) as unknown as { args: Record<string, unknown> }[];
      expect(revoked?.args).toEqual({ recipient: getAddress(USER_A), attester: getAddress(stack.addresses.admin), uid: lastingFields.claimId, schemaUID: lasting });
      expect(await read(registry, "isAttestationValid", [lastingFields.claimId])).toBe(false);
      expect((await easAttestation(lastingFields.claimId)).revocationTime).toBe(BigInt(revokedAt));
      expect(await read(consumer, "isAllowed", [USER_A, lastingFields.claimId])).toBe(false);
      // Still readable, marked revoked.
      expect(await read(consumer, "bucketOf", [lastingFields.claimId])).toEqual([FIELD, "mid"]);
      await refuses(registry, "revoke", [revocation, proof], /AlreadyRevoked/);

      await write(gate, "revoke", [revocation, proof]);
      expect(await read(gate, "revokedAt", [lastingFields.claimId])).toBe(BigInt(revokedAt));
      expect(await read(gate, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(false);
      expect(await read(gate, "isFresh", [USER_A, lasting, WAD / 2n])).toBe(false);
    });

    it("a revocation brought before its attestation still counts", async () => {
      const fresh = await deployAttestationRegistry(stack, lastingProof.applicationAddress);
      const freshGate = await deployAttestationGate(stack, lastingProof.applicationAddress);
      for (const contract of [fresh, freshGate]) {
        await write(contract, "revoke", [revocation, noticeProofArgument(revocationProof)]);
        await write(contract, "record", [lastingFields, noticeProofArgument(lastingProof)]);
      }
      expect((await read<EasAttestation>(fresh, "getAttestation", [lastingFields.claimId])).revocationTime).toBe(BigInt(revokedAt));
      expect(await read(fresh, "isAttestationValid", [lastingFields.claimId])).toBe(false);
      expect(await read(freshGate, "hasBucket", [USER_A, lasting, FIELD, "mid"])).toBe(false);
    });
  });

  // Last: it moves the chain's clock hours ahead.
  it("a schema's half-life and validity period play out on the chain's clock", async () => {
    const { timestamp, claimId } = expiringFields;
    expect(expiringFields.expiresAt).toBe(timestamp + BigInt(VALIDITY));
    expect(expiringFields.halfLife).toBe(BigInt(HALF_LIFE));
    const proof = noticeProofArgument(expiringProof);
    await write(registry, "record", [expiringFields, proof]);
    await write(gate, "record", [expiringFields, proof]);
    const expiringConsumer = await deployContract(stack, "EasConsumer", [registry.address, expiring]);
    expect((await easAttestation(claimId)).expirationTime).toBe(timestamp + BigInt(VALIDITY));

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
    expect(await read(registry, "isAttestationValid", [claimId], older)).toBe(true);
    expect(await read(expiringConsumer, "isAllowed", [USER_A, claimId], older)).toBe(true);

    const expired = await mineAt(expiringFields.expiresAt);
    expect(await read(registry, "isAttestationValid", [claimId], expired)).toBe(false);
    expect(await read(expiringConsumer, "isAllowed", [USER_A, claimId], expired)).toBe(false);
    expect(await read(gate, "hasBucket", [USER_A, expiring, FIELD, "mid"], expired)).toBe(false);
    expect(await read(gate, "isFresh", [USER_A, expiring, 1n], expired)).toBe(false);
  });
});
