/**
 * Attestations provable on the base layer, end to end on the real stack, on Rollups v1 and on v2: a claim
 * through the api, its proof refused as not ready while the epoch is open, then (epoch closed and claimed)
 * the proof the api serves is accepted by the application contract — v1's CartesiDApp.validateNotice, v2's
 * Application.validateOutput (asked through @cartesi/viem, as a v2 client does) — and by the example
 * consumer contract of that version (contracts/), which refuses forged fields; `npm run verify` prints
 * the contract's verdict.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient, isV2Proof, type AttestationProof, type SignedReceipt } from "../../client/index.ts";
import { signReceipt, signRevocationReceipt, type Receipt } from "../../common/receipt.ts";
import { DEFAULTS, V2_DEFAULTS } from "../../devnode/config.ts";
import { CARTESI_DAPP_ABI } from "../../devnode/v1/contracts.ts";
import { contractProof } from "../../devnode/v1/proofs.ts";
import { failure, TEST_JWT_SECRET, tokenFor, USER_A } from "../support/api-fixtures.ts";
import { recorderFor, type ConformanceRecorder } from "../support/conformance.ts";
import { batchOf, deployAttestationGate, deployAttestationRegistry, recordArgs } from "../support/gate.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { processArgs, PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";

describe.each(["v1", "v2"] as const)("on Rollups %s", (rollups) => {
  const FIELD = "data.balance";
  let stack: TestStack;
  let provider: ProviderServer;
  let user: AttestationClient;
  let claimId: Hex;
  let schemaId: Hex;
  /** The claim's receipt as its answer carried it, in a file as a client keeps it. */
  let receiptFile: string;

  let conformance: ConformanceRecorder;

  beforeAll(async () => {
    provider = await startProviderServer();
    stack = await startStack({
      api: true,
      index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
      rollups,
      env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", EPOCH_INTERVAL_MS: "0" },
    });
    conformance = await recorderFor(stack.urls.api);
    const base = new AttestationClient({ baseUrl: stack.urls.api, fetch: conformance.fetch });
    const admin = base.withToken(await tokenFor("admin", stack.addresses.admin));
    user = base.withToken(await tokenFor("user", USER_A));
    ({ schema_id: schemaId } = await admin.registerSchema({
      provider: "http",
      flowType: "balance",
      domain: "127.0.0.1",
      bucketDefinitions: { [FIELD]: { boundaries: [0, 100, 1000], labels: ["low", "mid", "high"] } },
      dataKeys: [],
      freshnessHalfLife: 3600,
    }));
    await admin.registerEncryptionKey({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
    provider.route("/balance", { kind: "json", value: { data: { balance: 512 } } });
    const claimed = await user.claim(claimBody());
    claimId = claimed.claimId;
    receiptFile = join(stack.dataDir, "receipt.json");
    writeFileSync(receiptFile, JSON.stringify(claimed.receipt));
  });

  function claimBody() {
    return { provider: "http", params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} }, bucketDefinition: { field: FIELD, boundaries: [0, 100, 1000], labels: ["low", "mid", "high"] } };
  }

  afterAll(async () => {
    await stack?.stop();
    await provider?.close();
  });

  /**
   * Runs a script without blocking this process (a synchronous spawn would stall the test's HTTP client while
   * the api closes its idle keep-alive connections under it).
   */
  function run(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...processArgs(args[0] as `scripts/${string}.ts`), ...args.slice(1)], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.on("close", (status) => resolve({ status, stdout, stderr }));
    });
  }

  const verify = (id: string) => run(["scripts/verify.ts", id], { API_URL: stack.urls.api, RPC_URL: stack.urls.rpc, ROLLUPS: rollups });
  const verifyReceipt = (file: string) => run(["scripts/verify.ts", "--receipt", file], { API_URL: stack.urls.api, RPC_URL: stack.urls.rpc, ROLLUPS: rollups });
  /** A copy of the claim's receipt with `change` made to it, in a file of its own. */
  const receiptVariant = (name: string, change: (signed: { signer: string; receipt: Receipt }) => Promise<void> | void): Promise<string> =>
    (async () => {
      const signed = JSON.parse(readFileSync(receiptFile, "utf8")) as { signer: string; receipt: Receipt };
      await change(signed);
      const file = join(stack.dataDir, `receipt-${name}.json`);
      writeFileSync(file, JSON.stringify(signed));
      return file;
    })();

  describe("GET /api/core/attestation/:claimId/proof", () => {
    it("says PROOF_NOT_READY with Retry-After while the epoch is open, and verify says so too", async () => {
      const error = await failure(user.attestationProof(claimId));
      expect([error.status, error.code]).toEqual([409, "PROOF_NOT_READY"]);
      expect(error.details).toMatchObject({ claim_id: claimId, retry_after: 5 });
      expect(error.headers.get("retry-after")).toBe("5");
      const result = await verify(claimId);
      expect(result.status, result.stderr).toBe(3);
      expect(result.stdout).toMatch(/not yet provable/);
      // Its receipt is good at once: signed by the operator, waiting for the rollup to back it.
      const signed = await verifyReceipt(receiptFile);
      expect(signed.status, signed.stderr).toBe(3);
      expect(signed.stdout).toMatch(new RegExp(`^SIGNED: the receipt of attestation ${claimId} is signed by 0x[0-9a-f]{40}; not yet provable: `));
      // The api's verify says the same.
      expect(await user.verifyReceipt(JSON.parse(readFileSync(receiptFile, "utf8")) as SignedReceipt)).toMatchObject({ verdict: "SIGNED", kind: "attestation", claimId, mismatches: [], revokedAt: null });
    });

    it("an unknown claim is ATTESTATION_NOT_FOUND", async () => {
      const error = await failure(user.attestationProof(`0x${"ab".repeat(32)}`));
      expect([error.status, error.code]).toEqual([404, "ATTESTATION_NOT_FOUND"]);
      expect((await failure(user.attestationProof("nope"))).code).toBe("ATTESTATION_NOT_FOUND");
    });

    describe("once the epoch is claimed", () => {
      let found: AttestationProof;
      beforeAll(async () => {
        expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
        found = await user.attestationProof(claimId);
      });

      it("serves the notice and a proof that the application contract accepts", async () => {
        const application = rollups === "v2" ? V2_DEFAULTS.applicationAddress : DEFAULTS.dappAddress;
        expect(found).toMatchObject({ claimId, applicationAddress: application.toLowerCase() });
        const notice = JSON.parse(Buffer.from(found.notice.slice(2), "hex").toString("utf8")) as unknown;
        expect(notice).toEqual({
          event: "attestation:created",
          data: {
            claimId,
            owner: USER_A.toLowerCase(),
            provider: "http",
            schema_id: schemaId,
            bucket_values: { [FIELD]: "mid" },
            attester: stack.addresses.admin.toLowerCase(),
            timestamp: expect.any(Number),
            expires_at: null,
            freshness_half_life: 3600,
          },
        });
        if (isV2Proof(found)) {
          expect(found.noticeIndex).toBe(found.proof.outputIndex);
          expect(found.proof.outputHashesSiblings).toHaveLength(63);
          const proof = { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings };
          const validate = (output: Hex) =>
            stack.client.publicClient.readContract({ address: found.applicationAddress, abi: v2Abi("Application"), functionName: "validateOutput", args: [output, proof] });
          await expect(validate(found.output)).resolves.toBeUndefined();
          // The same proof for another notice's bytes ("mid" made "hig") does not hold.
          await expect(validate(found.output.replace(/6d6964/, "686967") as Hex)).rejects.toThrow(/reverted/);
          return;
        }
        expect(found.noticeIndex).toBe(0);
        const valid = await stack.client.publicClient.readContract({
          address: found.applicationAddress,
          abi: CARTESI_DAPP_ABI(),
          functionName: "validateNotice",
          args: [found.notice, contractProof(found.proof.validity, found.proof.context)],
        });
        expect(valid).toBe(true);
      });

      it("npm run verify -- --receipt: VALID against the proven notice; re-signed with another bucket, a MISMATCH naming data; changed unsigned, INVALID; revoked, REVOKED", { timeout: 180_000 }, async () => {
        const valid = await verifyReceipt(receiptFile);
        expect(valid.status, valid.stderr).toBe(0);
        expect(valid.stdout).toMatch(new RegExp(`^VALID: the receipt of attestation ${claimId} is signed by 0x[0-9a-f]{40} and equals, field for field, the notice`));
        // The operator's own key signing another bucket: the chain contradicts it, field by field.
        const operatorKey = readFileSync(join(stack.dataDir, "receipt-signer-key"), "utf8").trim() as Hex;
        const lie = await receiptVariant("lie", async (signed) => {
          const attestation = await user.attestation(claimId);
          const domain = { chainId: signed.receipt.domain.chainId, registry: signed.receipt.domain.verifyingContract };
          const source = { claimId, owner: attestation.owner as Hex, provider: "http", schema_id: schemaId, bucket_values: { [FIELD]: "high" }, attester: attestation.attester as Hex, timestamp: attestation.timestamp, expires_at: null, freshness_half_life: 3600, attestors: [] };
          signed.receipt = await signReceipt(source, operatorKey, domain);
        });
        const mismatch = await verifyReceipt(lie);
        expect(mismatch.status, mismatch.stderr).toBe(1);
        expect(mismatch.stdout).toMatch(/^MISMATCH: the receipt of attestation 0x[0-9a-f]{64}, signed by 0x[0-9a-f]{40}, contradicts the notice/);
        expect(mismatch.stdout).toMatch(/^  data: the receipt says "0x[0-9a-f]+", the proven notice "0x[0-9a-f]+"$/m);
        expect(mismatch.stdout).not.toMatch(/^  (time|schema|recipient|refUID):/m);
        // Anyone else changing a field: the signature no longer holds.
        const forged = await receiptVariant("forged", (signed) => void (signed.receipt.message.time += 1));
        const invalid = await verifyReceipt(forged);
        expect(invalid.status, invalid.stderr).toBe(1);
        expect(invalid.stdout).toMatch(/^INVALID: its signature does not hold: its uid 0x[0-9a-f]{64} is not the uid of its fields/);
        const stranger = await receiptVariant("stranger", (signed) => void (signed.signer = "0x000000000000000000000000000000000000dead"));
        expect((await verifyReceipt(stranger)).stdout).toMatch(/^INVALID: the receipt names 0x000000000000000000000000000000000000dead as its signer; this operator's receipt signer is 0x/);
        const notAReceipt = await verifyReceipt(join(PROJECT_ROOT, "package.json"));
        expect(notAReceipt.status).toBe(2);
        expect(notAReceipt.stderr).toMatch(/--receipt .*package\.json: not a receipt as the api serves it \(\{signer, receipt\}\): signer: /);
        // Revoked once proven: the receipt still equals its notice, and the rollup has withdrawn it since.
        const second = await user.claim(claimBody());
        const secondFile = join(stack.dataDir, "receipt-second.json");
        writeFileSync(secondFile, JSON.stringify(second.receipt));
        const revocation = await user.revokeAttestation(second.claimId, { reason: "closed" });
        // The revocation's answer carries its receipt: the same signer's, about the same attestation.
        expect(revocation.receipt?.receipt.message).toMatchObject({ refUID: second.claimId, revocable: false, time: revocation.revocation?.revokedAt });
        const revocationFile = join(stack.dataDir, "receipt-revocation.json");
        writeFileSync(revocationFile, JSON.stringify(revocation.receipt));
        const early = await verifyReceipt(revocationFile);
        expect(early.status, early.stdout + early.stderr).toBe(3);
        expect(early.stdout).toMatch(new RegExp(`^SIGNED: the receipt of the revocation of attestation ${second.claimId} is signed by`));
        expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
        const revoked = await verifyReceipt(secondFile);
        expect(revoked.status, revoked.stdout + revoked.stderr).toBe(4);
        expect(revoked.stdout).toMatch(new RegExp(`^REVOKED: the receipt of attestation ${second.claimId} equals its proven notice, and the rollup revoked it at \\d+`));
        const revocationValid = await verifyReceipt(revocationFile);
        expect(revocationValid.status, revocationValid.stdout + revocationValid.stderr).toBe(0);
        expect(revocationValid.stdout).toMatch(new RegExp(`^VALID: the receipt of the revocation of attestation ${second.claimId} is signed by 0x[0-9a-f]{40} and equals, field for field, the revocation`));

        // The api's verify gives the same verdicts as the command, from its own reads and the chain's judgement.
        const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as SignedReceipt;
        expect(await user.verifyReceipt(read(receiptFile))).toMatchObject({ verdict: "VALID", kind: "attestation", claimId, revokedAt: null });
        expect(await user.verifyReceipt(read(lie))).toMatchObject({ verdict: "MISMATCH", mismatches: [{ field: "data" }] });
        expect(await user.verifyReceipt(read(forged))).toMatchObject({ verdict: "INVALID", reason: expect.stringMatching(/a field was changed$/) });
        expect(await user.verifyReceipt(read(secondFile))).toMatchObject({ verdict: "REVOKED", revokedAt: revocation.revocation?.revokedAt });
        expect(await user.verifyReceipt(read(revocationFile))).toMatchObject({ verdict: "VALID", kind: "revocation", claimId: second.claimId });
        expect(await user.revocationReceipt(second.claimId)).toEqual(revocation.receipt);
        // A revocation the operator signs for an attestation the rollup never revoked: the rollup contradicts it.
        const attestation = await user.attestation(claimId);
        const { domain: signedIn } = read(receiptFile).receipt;
        const domain = { chainId: signedIn.chainId, registry: signedIn.verifyingContract as Hex };
        const source = { claimId, owner: attestation.owner as Hex, provider: "http", schema_id: schemaId, bucket_values: { [FIELD]: "mid" }, attester: attestation.attester as Hex, timestamp: attestation.timestamp, expires_at: null, freshness_half_life: 3600, attestors: [] };
        const made = { claimId, owner: attestation.owner as Hex, schema_id: schemaId, revoker: attestation.owner as Hex, revoked_at: attestation.timestamp + 1, reason: "", superseded_by: null };
        const fabricated = { signer: read(receiptFile).signer, receipt: await signRevocationReceipt(source, made, operatorKey, domain) };
        expect(await user.verifyReceipt(fabricated as SignedReceipt)).toMatchObject({ verdict: "MISMATCH", kind: "revocation", reason: expect.stringMatching(/the rollup holds no revocation of attestation/) });
        const fabricatedFile = join(stack.dataDir, "receipt-fabricated.json");
        writeFileSync(fabricatedFile, JSON.stringify(fabricated));
        const contradicted = await verifyReceipt(fabricatedFile);
        expect(contradicted.status, contradicted.stdout + contradicted.stderr).toBe(1);
        expect(contradicted.stdout).toMatch(/^MISMATCH: the receipt of the revocation of attestation 0x[0-9a-f]{64} is signed by 0x[0-9a-f]{40}, but the api answers NOT_REVOKED/);
      });

      it("npm run verify prints the contract's verdict", async () => {
        const result = await verify(claimId);
        expect(result.status, result.stderr).toBe(0);
        expect(result.stdout).toMatch(rollups === "v2" ? /^VALID: Application 0x[0-9a-f]{40} on http/m : /^VALID: CartesiDApp 0x[0-9a-f]{40} on http/m);
        const bad = await run(["scripts/verify.ts", "0x12"]);
        expect(bad.status).toBe(2);
        expect(bad.stderr).toMatch(/a claim id is 0x and 64 hex digits, not 0x12/);
      });

      it("serves the input's batch notice with its proof; the registry records it and refuses it forged", async () => {
        const batch = await user.attestationBatch(claimId);
        expect(batch).toMatchObject({ claimId, applicationAddress: found.applicationAddress, inputIndex: found.inputIndex, at: 0 });
        expect(batchOf(batch)).toEqual({
          inputIndex: BigInt(found.inputIndex),
          time: expect.any(BigInt),
          sender: stack.addresses.admin.toLowerCase(),
          kinds: [{ schemaId, halfLife: 3600n, validity: 0n, uniquePerAccount: false, provider: "http", field: FIELD, bucket: "mid", attestors: [] }],
          created: [{ item: 0xffff, owner: USER_A.toLowerCase(), kind: 0 }],
          revoked: [],
        });
        const registry = await deployAttestationRegistry(stack, found.applicationAddress);
        const gate = await deployAttestationGate(stack, registry.address);
        const [notice, proof] = recordArgs(batch);
        const call = (bytes: Hex) => ({ address: registry.address, abi: registry.abi, functionName: "record", args: [bytes, proof] }) as const;
        // "mid" made "hig": the proof does not hold for other bytes.
        await expect(registry.reader.simulateContract({ ...call(notice.replace(/036d6964/, "03686967") as Hex), account: registry.wallet.account })).rejects.toThrow(/ProofRejected/);
        const hash = await registry.wallet.writeContract({ ...call(notice), chain: null });
        expect((await registry.reader.waitForTransactionReceipt({ hash })).status).toBe("success");
        const gated = (field: string, bucket: string) => registry.reader.readContract({ address: gate.address, abi: gate.abi, functionName: "hasBucket", args: [USER_A, schemaId, field, bucket] });
        expect(await gated(FIELD, "mid")).toBe(true);
        expect(await gated(FIELD, "high")).toBe(false);
        // The same batch again is refused, naming its input.
        await expect(registry.reader.simulateContract({ ...call(notice), account: registry.wallet.account })).rejects.toThrow(/BatchAlreadyRecorded/);
      });
    });
  });

  // The exchanges of this suite's client, checked against the document the api serves (test/support/conformance.ts).
  describe("the OpenAPI document against this suite's traffic", () => {
    it("every response and every accepted request conformed", () => {
      expect(conformance.exercised.size).toBeGreaterThan(0);
      expect(conformance.problems).toEqual([]);
    });
  });
});
