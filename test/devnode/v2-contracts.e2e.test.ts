/**
 * The Cartesi Rollups v2 pieces a v2 devnode is built from (issue 21), checked against the v2 contracts
 * themselves (@cartesi/rollups 2.2.0 on a real hardhat chain): the InputBox's EvmAdvance encoding decodes
 * to the block's own context, and the outputs Merkle tree's root, claimed through the Authority, makes
 * `Application.validateOutput` accept every output with its index and 63 siblings, and refuse a changed
 * one. The tree is also checked against a plain transcription of LibMerkle32.
 */
import { concat, keccak256, parseEventLogs, toHex, zeroAddress, type Address, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployV2Application, v2Abi, type V2Deployment } from "../../devnode/v2/contracts.ts";
import { decodeEvmAdvance, NotAnAdvanceError } from "../../devnode/v2/inputs.ts";
import { encodeNotice, encodeVoucher, LOG2_MAX_OUTPUTS, OutputsTree } from "../../devnode/v2/outputs.ts";
import { startChain, type TestChain } from "../support/chain.ts";
import { thrown } from "../support/thrown.ts";

/** LibMerkle32.merkleRoot and merkleRootAfterReplacement, as the contracts define them, written plainly. */
function referenceRoot(leaves: Hex[]): Hex {
  let level = leaves;
  let pristine: Hex = `0x${"00".repeat(32)}`;
  for (let height = 0; height < LOG2_MAX_OUTPUTS; height++) {
    const parents: Hex[] = [];
    for (let i = 0; i < level.length; i += 2) parents.push(keccak256(concat([level[i] as Hex, level[i + 1] ?? pristine])));
    level = parents;
    pristine = keccak256(concat([pristine, pristine]));
  }
  return level[0] ?? pristine;
}

function foldSiblings(leaf: Hex, index: number, siblings: readonly Hex[]): Hex {
  let node = leaf;
  let position = index;
  for (const sibling of siblings) {
    node = position % 2 === 0 ? keccak256(concat([node, sibling])) : keccak256(concat([sibling, node]));
    position = Math.floor(position / 2);
  }
  return node;
}

describe("the outputs tree", () => {
  it.each([0, 1, 2, 3, 5, 8, 9])("with %i outputs has LibMerkle32's root, and every proof folds back into it", (count) => {
    const outputs = Array.from({ length: count }, (_, i) => encodeNotice(toHex(`notice ${i}`)));
    const tree = new OutputsTree(outputs);
    expect(tree.root).toBe(referenceRoot(outputs.map((o) => keccak256(o))));
    for (let i = 0; i < count; i++) {
      const siblings = tree.siblings(i);
      expect(siblings).toHaveLength(63);
      expect(foldSiblings(keccak256(outputs[i] as Hex), i, siblings)).toBe(tree.root);
    }
  });

  it("refuses a proof of an output it does not hold", () => {
    const tree = new OutputsTree([encodeNotice("0x01")]);
    expect(thrown(() => tree.siblings(1))).toMatchObject({ name: "RangeError", message: "output 1 is not in a tree of 1 outputs" });
    expect(thrown(() => tree.siblings(-1))).toMatchObject({ name: "RangeError" });
  });
});

describe("EvmAdvance decoding", () => {
  it("refuses bytes that are not an EvmAdvance call", () => {
    expect(thrown(() => decodeEvmAdvance("0x12345678"))).toBeInstanceOf(NotAnAdvanceError);
    expect(thrown(() => decodeEvmAdvance(encodeNotice("0x01")))).toBeInstanceOf(NotAnAdvanceError);
  });
});

describe("on a chain with the v2 contracts", () => {
  let chain: TestChain;
  let app: V2Deployment;

  beforeAll(async () => {
    chain = await startChain();
    app = await deployV2Application(chain.wallet(3), chain.reader, 1);
  }, 120_000);
  afterAll(async () => {
    await chain?.stop();
  });

  it("the Application is governed by the Authority, which the deploying wallet owns", async () => {
    const read = (address: Address, abi: "Application" | "Authority", functionName: string) =>
      chain.reader.readContract({ address, abi: v2Abi(abi), functionName });
    expect(await read(app.application, "Application", "getOutputsMerkleRootValidator")).toBe(app.authority);
    expect(await read(app.authority, "Authority", "owner")).toBe(chain.wallet(3).account.address);
    expect(await read(app.authority, "Authority", "getEpochLength")).toBe(1n);
  });

  it("an input's EvmAdvance decodes to the chain id, the application, the sender and its block's number, time and RANDAO", async () => {
    const sender = chain.wallet(4);
    for (const [index, payload] of [[0, "0xc0ffee"], [1, toHex("second")]] as const) {
      const hash = await sender.writeContract({ address: app.inputBox, abi: v2Abi("InputBox"), functionName: "addInput", args: [app.application, payload] });
      const receipt = await chain.reader.waitForTransactionReceipt({ hash });
      const [added] = parseEventLogs({ abi: v2Abi("InputBox"), logs: receipt.logs, eventName: "InputAdded" }) as unknown as { args: { appContract: Address; index: bigint; input: Hex } }[];
      expect(added?.args).toMatchObject({ appContract: app.application, index: BigInt(index) });
      const block = await chain.reader.getBlock({ blockNumber: receipt.blockNumber });
      const decoded = decodeEvmAdvance(added?.args.input as Hex);
      expect(decoded).toEqual({
        metadata: {
          chain_id: 31337,
          app_contract: app.application,
          msg_sender: sender.account.address,
          block_number: Number(receipt.blockNumber),
          block_timestamp: Number(block.timestamp),
          prev_randao: block.mixHash,
          input_index: index,
        },
        payload,
      });
    }
  });

  it("a claimed outputs root makes validateOutput accept every output with its proof, and refuse a changed one", async () => {
    const outputs = [
      encodeNotice(toHex("attestation 1")),
      encodeVoucher(chain.wallet(5).account.address, 7n, "0xabcdef"),
      encodeNotice(toHex("attestation 2")),
      encodeNotice("0x"),
      encodeVoucher(zeroAddress, 0n, "0x"),
    ];
    const tree = new OutputsTree(outputs);
    const owner = chain.wallet(3);
    const last = (await chain.reader.getBlockNumber()) - 1n;
    const claim = await owner.writeContract({ address: app.authority, abi: v2Abi("Authority"), functionName: "submitClaim", args: [app.application, last, tree.root] });
    expect((await chain.reader.waitForTransactionReceipt({ hash: claim })).status).toBe("success");
    expect(await chain.reader.readContract({ address: app.authority, abi: v2Abi("Authority"), functionName: "isOutputsMerkleRootValid", args: [app.application, tree.root] })).toBe(true);

    const validate = (output: Hex, outputIndex: number, outputHashesSiblings: readonly Hex[]) =>
      chain.reader.readContract({
        address: app.application,
        abi: v2Abi("Application"),
        functionName: "validateOutput",
        args: [output, { outputIndex: BigInt(outputIndex), outputHashesSiblings }],
      });
    for (const [i, output] of outputs.entries()) await expect(validate(output, i, tree.siblings(i))).resolves.toBeUndefined();

    const changed = encodeNotice(toHex("attestation 1, changed"));
    await expect(validate(changed, 0, tree.siblings(0))).rejects.toThrow(/InvalidOutputsMerkleRoot/);
    await expect(validate(outputs[0] as Hex, 1, tree.siblings(1))).rejects.toThrow(/InvalidOutputsMerkleRoot/);
    await expect(validate(outputs[0] as Hex, 0, tree.siblings(0).slice(1))).rejects.toThrow(/InvalidOutputHashesSiblingsArrayLength/);
  });
});
