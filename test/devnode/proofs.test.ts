/**
 * The devnode's output trees and proofs, pinned against the v1 contracts themselves on a real hardhat
 * chain: MerkleV2 (the published library) for the trees, and a deployed CartesiDApp + Authority + History
 * for whole proofs, which is what any consumer of an attestation will run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesToHex, hexToBytes, keccak256, stringToHex, type Abi, type Address, type Hex } from "viem";
import { pristineHashes, SparseMerkleTree } from "../../devnode/merkle.ts";
import {
  buildEpochProofs,
  contractProof,
  encodeClaim,
  encodeProofContext,
  MerkleIndexError,
  noticeHash,
  wordTreeRoot,
  type EpochInputOutputs,
} from "../../devnode/v1/proofs.ts";
import { AUTHORITY_ABI, CARTESI_DAPP_ABI, deployV1Application, HISTORY_ABI, loadArtifact, type V1Application } from "../../devnode/v1/contracts.ts";
import { startChain, type TestChain } from "../support/chain.ts";

let chain: TestChain;
let merkle: Address;
let merkleAbi: Abi;

beforeAll(async () => {
  chain = await startChain();
  const wallet = chain.wallet(0);
  const math = loadArtifact("@cartesi/util/contracts/CartesiMathV2.sol");
  const mathHash = await wallet.deployContract({ abi: math.abi, bytecode: math.bytecode });
  const mathAddress = (await chain.reader.waitForTransactionReceipt({ hash: mathHash })).contractAddress as Address;
  const library = loadArtifact("@cartesi/util/contracts/MerkleV2.sol");
  const { linkBytecode } = await import("../../devnode/v1/contracts.ts");
  const hash = await wallet.deployContract({
    abi: library.abi,
    bytecode: linkBytecode(library, { "@cartesi/util/contracts/CartesiMathV2.sol": mathAddress }),
  });
  merkle = (await chain.reader.waitForTransactionReceipt({ hash })).contractAddress as Address;
  merkleAbi = library.abi;
});

afterAll(async () => {
  await chain?.stop();
});

const call = (functionName: string, args: readonly unknown[]) =>
  chain.reader.readContract({ address: merkle, abi: merkleAbi, functionName, args }) as Promise<Hex>;

const notice = (text: string): Hex => stringToHex(text);

describe("Merkle construction against MerkleV2", () => {
  it("pristine word hashes are the contract's empty-tree hashes", async () => {
    const ours = pristineHashes(keccak256(new Uint8Array(8), "bytes"), 61);
    for (const index of [0, 1, 2, 18, 34, 60]) {
      expect(await call("getEmptyTreeHashAtIndex", [BigInt(index)])).toBe(bytesToHex(ours[index] as Uint8Array));
    }
  });

  it("the word tree of a hash is getMerkleRootFromBytes(hash, 5)", async () => {
    for (const text of ["a", "attestation", ""]) {
      const hash = noticeHash(notice(text));
      expect(bytesToHex(wordTreeRoot(hash))).toBe(await call("getMerkleRootFromBytes", [bytesToHex(hash), 5n]));
    }
  });

  it.each([1, 2, 3, 70])("an output hashes tree of %i output(s): every sibling path rebuilds the root on chain", async (count) => {
    const epoch = buildEpochProofs([{ accepted: true, notices: Array.from({ length: count }, (_, i) => notice(`n${i}`)), vouchers: [] }]);
    for (const j of [0, count - 1, Math.floor(count / 2)]) {
      const proof = epoch.noticeProof(0, j);
      const leaf = bytesToHex(wordTreeRoot(noticeHash(notice(`n${j}`))));
      const root = await call("getRootAfterReplacementInDrive", [BigInt(j) << 5n, 5n, 21n, leaf, proof.outputHashInOutputHashesSiblings]);
      expect(root).toBe(proof.outputHashesRootHash);
      expect(proof.outputHashInOutputHashesSiblings).toHaveLength(16);
      expect(proof.outputHashesInEpochSiblings).toHaveLength(32);
    }
  });

  it("an epoch tree: each input's leaf and siblings rebuild the epoch root on chain", async () => {
    const inputs: EpochInputOutputs[] = [
      { accepted: true, notices: [notice("x")], vouchers: [] },
      { accepted: false, notices: [], vouchers: [] },
      { accepted: true, notices: [], vouchers: [] },
      { accepted: true, notices: [notice("y"), notice("z")], vouchers: [] },
      { accepted: true, notices: [notice("w")], vouchers: [] },
    ];
    const epoch = buildEpochProofs(inputs);
    for (const [i, j] of [[0, 0], [3, 1], [4, 0]] as const) {
      const proof = epoch.noticeProof(i, j);
      const root = await call("getRootAfterReplacementInDrive", [BigInt(i) << 5n, 5n, 37n, proof.outputHashesRootHash, proof.outputHashesInEpochSiblings]);
      expect(root).toBe(epoch.noticesEpochRootHash);
    }
  });

  it("a sparse tree agrees with a dense one", () => {
    const zero = keccak256(new Uint8Array(32), "bytes");
    const pristine = pristineHashes(zero, 3);
    const leaves = [1, 2, 3].map((n) => keccak256(new Uint8Array([n]), "bytes"));
    const dense = [...leaves, ...Array.from({ length: 5 }, () => zero)];
    const tree = new SparseMerkleTree(leaves, 3, pristine);
    const full = new SparseMerkleTree(dense, 3, pristine);
    expect(bytesToHex(tree.root)).toBe(bytesToHex(full.root));
    expect(tree.siblings(6).map((h) => bytesToHex(h))).toEqual(full.siblings(6).map((h) => bytesToHex(h)));
  });

  it("refuses what is not in the epoch", () => {
    const epoch = buildEpochProofs([
      { accepted: true, notices: [notice("a")], vouchers: [] },
      { accepted: false, notices: [], vouchers: [] },
    ]);
    expect(() => epoch.noticeProof(2, 0)).toThrow(MerkleIndexError);
    expect(() => epoch.noticeProof(0, 1)).toThrow("input 0 of the epoch has no notice 1 (it has 1)");
    expect(() => epoch.noticeProof(1, 0)).toThrow("input 1 of the epoch was not accepted: it has no notices");
    expect(() => epoch.voucherProof(0, 0)).toThrow(MerkleIndexError);
    expect(() => encodeClaim("0x0000000000000000000000000000000000000001", epoch.epochHash, 3, 2)).toThrow(MerkleIndexError);
    expect(() => encodeProofContext(-1)).toThrow(MerkleIndexError);
  });
});

describe("whole proofs against a deployed v1 CartesiDApp", () => {
  let app: V1Application;
  const first: EpochInputOutputs[] = [
    { accepted: true, notices: [notice('{"event":"attestation:created"}')], vouchers: [] },
    { accepted: false, notices: [], vouchers: [] },
    { accepted: true, notices: [notice("one"), notice("two"), notice("three")], vouchers: [] },
    { accepted: true, notices: [], vouchers: [{ destination: "0x00000000000000000000000000000000000000aa", payload: "0x1234" }] },
  ];
  const second: EpochInputOutputs[] = [
    { accepted: true, notices: [notice("later")], vouchers: [] },
    { accepted: true, notices: Array.from({ length: 40 }, (_, i) => notice(`many ${i}`)), vouchers: [] },
  ];

  beforeAll(async () => {
    const wallet = chain.wallet(0);
    app = await deployV1Application(wallet, chain.reader);
    for (const [epoch, firstIndex] of [[first, 0], [second, first.length]] as const) {
      const built = buildEpochProofs(epoch);
      const hash = await wallet.writeContract({
        address: app.authority,
        abi: AUTHORITY_ABI(),
        functionName: "submitClaim",
        args: [encodeClaim(app.dapp, built.epochHash, firstIndex, firstIndex + epoch.length - 1)],
      });
      expect((await chain.reader.waitForTransactionReceipt({ hash })).status).toBe("success");
    }
  });

  const validate = (payload: Hex, proof: ReturnType<typeof contractProof>) =>
    chain.reader.readContract({ address: app.dapp, abi: CARTESI_DAPP_ABI(), functionName: "validateNotice", args: [payload, proof] });

  it("the History holds the claims with the epoch hashes we computed", async () => {
    const claim = (await chain.reader.readContract({
      address: app.history,
      abi: HISTORY_ABI(),
      functionName: "getClaim",
      args: [app.dapp, encodeProofContext(1)],
    })) as readonly [Hex, bigint, bigint];
    expect(claim).toEqual([buildEpochProofs(second).epochHash, 4n, 5n]);
  });

  it("validateNotice accepts every notice of both epochs", async () => {
    for (const [claimIndex, epoch] of [first, second].entries()) {
      const built = buildEpochProofs(epoch);
      for (const [i, input] of epoch.entries()) {
        for (const [j, payload] of input.notices.entries()) {
          expect(await validate(payload, contractProof(built.noticeProof(i, j), encodeProofContext(claimIndex)))).toBe(true);
        }
      }
    }
  });

  it("refuses a changed notice, another notice's proof and an unclaimed epoch", async () => {
    const built = buildEpochProofs(first);
    const proof = contractProof(built.noticeProof(2, 1), encodeProofContext(0));
    const bytes = hexToBytes(notice("two"));
    bytes[0] = (bytes[0] as number) ^ 1;
    await expect(validate(bytesToHex(bytes), proof)).rejects.toThrow(/IncorrectOutputHashesRootHash/);
    await expect(validate(notice("one"), proof)).rejects.toThrow(/IncorrectOutputHashesRootHash/);
    await expect(validate(notice("two"), contractProof(built.noticeProof(2, 1), encodeProofContext(2)))).rejects.toThrow(/InvalidClaimIndex/);
    // A proof against the other epoch's claim: out of that claim's inputs, or its epoch hash differs.
    await expect(validate(notice("two"), contractProof(built.noticeProof(2, 1), encodeProofContext(1)))).rejects.toThrow(/InputIndexOutOfClaimBounds/);
    const firstNotice = first[0]?.notices[0] as Hex;
    await expect(validate(firstNotice, contractProof(built.noticeProof(0, 0), encodeProofContext(1)))).rejects.toThrow(/IncorrectEpochHash/);
  });
});
